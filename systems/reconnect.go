package systems

import (
	"errors"
	"fmt"
	"time"

	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
)

// maxReconnectGrace bounds ServerOptions.ReconnectGrace: a held place
// keeps a player standing in the match, and a match that waits longer
// for one player has a lobby's problem, not a network's.
const maxReconnectGrace = time.Hour

// heldPlace is the place of a player whose connection ended, kept for a
// reconnect (ServerOptions.ReconnectGrace): the connection's ID still
// owns its ghosts, and its input buffer's counters and the inputs its
// ghosts were given (for the determinism check's replays) go to the
// connection that takes the place back.
type heldPlace struct {
	sc    *serverConn // its packet layer retired, its view closed
	until time.Duration
}

// checkReconnect checks the reconnect options and applies the defaults;
// MaxClients is set.
func checkReconnect(o *ServerOptions) error {
	if o.ReconnectGrace < 0 || o.ReconnectGrace > maxReconnectGrace {
		return fmt.Errorf("systems: reconnect grace %v outside 0..%v", o.ReconnectGrace, maxReconnectGrace)
	}
	if o.MaxHeld == 0 {
		o.MaxHeld = o.MaxClients
	}
	if o.MaxHeld < 1 || o.MaxHeld > o.MaxClients {
		return fmt.Errorf("systems: max held places %d outside 1..%d (MaxClients)", o.MaxHeld, o.MaxClients)
	}
	if o.ReconnectGrace > 0 && o.Identity == nil {
		return errors.New("systems: ReconnectGrace needs ServerOptions.Identity (tokens.Identity reads a udp connect token's)")
	}
	return nil
}

// identify returns the identity of a new connection, or "" when it has
// none or reconnect is off.
func (s *Server) identify(c transport.Conn) string {
	if s.opts.ReconnectGrace == 0 {
		return ""
	}
	id, ok := s.opts.Identity(c)
	if !ok || id == "" {
		return ""
	}
	if len(id) > MaxIdentity {
		s.stats.IdentitiesIgnored++
		s.log.Warn("ghostwire: identity ignored: too long", "bytes", len(id), "max", MaxIdentity)
		return ""
	}
	return id
}

// players returns how many players the world holds for connections: the
// open ones and the held places, less identity's own place (live or
// held), which a connection of that identity takes over rather than adds
// to.
func (s *Server) players(identity string) int {
	n := len(s.conns) + len(s.held)
	if identity == "" {
		return n
	}
	for _, c := range s.conns {
		if c.identity == identity {
			return n - 1
		}
	}
	for _, p := range s.held {
		if p.sc.identity == identity {
			return n - 1
		}
	}
	return n
}

// leave ends what connection sc, closed for reason, leaves behind: its
// place is held when reconnect is on, the connection has an identity and
// owns something, and it timed out (silent or backlogged: a lost link);
// otherwise OnDisconnect takes its entities now.
func (s *Server) leave(sc *serverConn, reason protocol.RejectReason) {
	if reason != protocol.RejectTimeout || sc.identity == "" || s.opts.ReconnectGrace == 0 || s.closing {
		s.release(sc)
		return
	}
	if s.owned = s.ghosts.Owned(s.owned[:0], sc.id); len(s.owned) == 0 {
		s.release(sc) // the game removed its player already: nothing to come back to
		return
	}
	if len(s.held) >= s.opts.MaxHeld {
		old := s.unhold(0)
		s.stats.HeldEvicted++
		s.log.Info("ghostwire: held place given up for a newer one (MaxHeld)", "conn", old.id)
		s.release(old)
	}
	sc.link, sc.view, sc.msgs = nil, nil, peerMessages{}
	s.held = append(s.held, heldPlace{sc: sc, until: s.src.Now() + s.opts.ReconnectGrace})
	s.log.Info("ghostwire: place held for a reconnect", "conn", sc.id, "grace", s.opts.ReconnectGrace)
}

// release gives up connection sc's place: OnDisconnect gets the entities
// it owned (or they are destroyed), its ghosts despawned.
func (s *Server) release(sc *serverConn) {
	if r := s.opts.Recorder; r != nil {
		r.Disconnected(s.world.Tick(), sc.id)
	}
	add(&s.closed, sc.inputs.Stats())
	s.owned = s.ghosts.Owned(s.owned[:0], sc.id)
	for _, e := range s.owned {
		s.ghosts.Despawn(e)
	}
	if s.game.OnDisconnect != nil {
		s.game.OnDisconnect(s.world, sc.id, s.owned)
		return
	}
	a := s.world.Arche()
	for _, e := range s.owned {
		if a.Alive(e) {
			a.RemoveEntity(e)
		}
	}
}

// expireHeld gives up the places held past their grace: the oldest
// first, and only those, as every place is held for the same grace.
func (s *Server) expireHeld(now time.Duration) {
	for len(s.held) > 0 && now >= s.held[0].until {
		sc := s.unhold(0)
		s.stats.ReconnectsExpired++
		s.log.Info("ghostwire: held place given up: grace over", "conn", sc.id)
		s.release(sc)
	}
}

// unhold takes the i-th held place out of the list and returns its
// connection.
func (s *Server) unhold(i int) *serverConn {
	sc := s.held[i].sc
	n := copy(s.held[i:], s.held[i+1:])
	s.held[i+n] = heldPlace{} // let it go
	s.held = s.held[:i+n]
	return sc
}

// reclaim returns the place identity holds, taken out of the held places,
// or its open connection, ended (told it was replaced): the place a new
// connection of that identity takes; nil when there is none.
func (s *Server) reclaim(identity string) *serverConn {
	if identity == "" {
		return nil
	}
	for i, p := range s.held {
		if p.sc.identity == identity {
			return s.unhold(i)
		}
	}
	for _, c := range s.conns {
		if c.identity == identity {
			s.tx = c.link.goodbye(s.tx, protocol.MsgDisconnect,
				&protocol.Reject{Reason: protocol.RejectClosed, Detail: "a new connection of this player took its place"})
			s.end(c, protocol.RejectClosed)
			s.stats.Replaced++
			return c
		}
	}
	return nil
}

// takeBack gives new connection sc the place of old (reclaim's): its
// ghosts, their entities and its player, the inputs its ghosts were given;
// then Game.OnReconnect. It reports false, having given the place up
// through OnDisconnect, when old owns nothing any more: sc then needs a
// player of its own.
func (s *Server) takeBack(sc, old *serverConn) bool {
	if s.ghosts.Reown(old.id, sc.id) == 0 {
		s.release(old)
		return false
	}
	add(&s.closed, old.inputs.Stats())
	sc.player, sc.applied = old.player, old.applied
	if r := s.opts.Recorder; r != nil {
		r.Reconnected(s.world.Tick(), sc.id, old.id)
	}
	s.stats.Reconnects++
	s.log.Info("ghostwire: place taken back", "conn", sc.id, "was", old.id)
	if s.game.OnReconnect != nil {
		s.owned = s.ghosts.Owned(s.owned[:0], sc.id)
		s.game.OnReconnect(s.world, sc.id, old.id, s.owned)
	}
	return true
}
