package systems

import (
	"errors"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// Spectators serves a server's spectator connections
// (ServerOptions.Spectators): package replay's Stand shows them the match
// a delay back, replayed from its recording on a [Playback] (Seat).
type Spectators interface {
	// Seat takes spectator connection sp, which the server has let go;
	// false refuses it (full, or nothing to show yet): the server then
	// tells the client it is full.
	Seat(sp *Spectator) bool
	// Update runs at the end of each of the server's Updates: the
	// spectators' world catches up, their packets are read and sent.
	Update()
	// Close runs when the server closes: the spectators are told it is
	// closing.
	Close()
}

// Spectator is a connection a server hands to its Spectators: its packet
// layer, its ID, its hello.
type Spectator struct {
	sc  *serverConn
	src gw.TimeSource // the time its packet layer runs on
	now time.Duration // when its hello arrived
}

// Conn returns the spectator's connection ID (unique on the server that
// accepted it).
func (sp *Spectator) Conn() components.ConnID { return sp.sc.id }

// seat hands spectator connection sc to the spectators, or refuses it.
func (s *Server) seat(sc *serverConn, now time.Duration) {
	if sp := s.opts.Spectators; sp != nil && sp.Seat(&Spectator{sc: sc, src: s.src, now: now}) {
		s.stats.Spectators++
		s.log.Debug("ghostwire: spectator seated", "conn", sc.id)
		return
	}
	s.stats.SpectatorsRefused++
	s.refuse(sc.link, &protocol.Reject{Reason: protocol.RejectFull, Detail: "no seat for a spectator"})
}

// Seat makes spectator connection sp a connection of the playback's
// server: it is welcomed at the playback's tick with no player, sent
// every ghost of the playback's world in snapshots as the ticks run, and
// its packets are read by Serve. From the first seat on, the server's
// time is the one sp's packet layer runs on (the live server's). It
// errors when sp was seated already.
func (p *Playback) Seat(sp *Spectator) error {
	sc := sp.sc
	if sc.view != nil {
		return errors.New("systems: playback: the spectator is seated already")
	}
	if p.now.src == nil {
		p.now.src = sp.src
	}
	s := p.s
	sc.view = s.ghosts.NewView(sc.id)
	s.conns = append(s.conns, sc)
	s.welcome(sc, sp.now)
	return nil
}

// Serve reads the packets of the seated spectators (their
// acknowledgements), drops those silent for longer than the server's
// Timeout, and sends what their packet layers hold. The snapshots go out
// with the ticks (Tick). Call it once per frame.
func (p *Playback) Serve() {
	s := p.s
	if len(s.conns) == 0 {
		return
	}
	now := s.src.Now()
	s.pollConns(now)
	s.expire(now)
	s.flush()
}
