package systems

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
)

// Playback runs a server's match again from what its [Recorder] was
// told, with no network and no clients: the connections, inputs and
// messages come from the caller (package replay reads them from a file),
// and every tick runs when the caller says. The server it drives is a
// [Server] built by NewServer from the same Game and options, so its
// world, its systems and what the game adds to it run as they did.
//
// Its methods mirror the Recorder's: Connect for Connected, and so on;
// Input queues an input for the next Tick. They error, naming the
// connection, when the recording and the world disagree (a connection
// not open, a player spawned as another ghost): the file is not this
// game's match.
type Playback struct {
	s     *Server
	now   playClock
	step  time.Duration
	conns []*serverConn // open, in the order connected
	queue []playInput   // the next tick's inputs, in the order given
	size  int           // the input type's bytes
}

// playClock is a playback's time: virtual, a tick's length per tick,
// until a spectator is seated; from then on the time its packet layer
// runs on.
type playClock struct {
	virtual gw.VirtualTime
	src     gw.TimeSource
}

// Now returns the time.
func (c *playClock) Now() time.Duration {
	if c.src != nil {
		return c.src.Now()
	}
	return c.virtual.Now()
}

// playInput is one input queued for the next tick.
type playInput struct {
	sc *serverConn
	h  components.InputHeader
	in []byte
}

// NewPlayback creates a server running game with opts, driven by the
// caller with no network: its time is virtual and moves a tick's length
// per Tick. Game.OnStart runs as in NewServer. It errors as NewServer
// does.
func NewPlayback(game *Game, opts ServerOptions) (*Playback, error) {
	p := &Playback{}
	s, err := NewServer(&p.now, nil, game, opts)
	if err != nil {
		return nil, err
	}
	s.play = p
	p.s, p.step = s, time.Second/time.Duration(s.rate)
	p.size = s.binding.Schema().InputSize()
	return p, nil
}

// Server returns the server driven.
func (p *Playback) Server() *Server { return p.s }

// find returns the open connection conn, or nil.
func (p *Playback) find(conn components.ConnID) *serverConn {
	for _, sc := range p.conns {
		if sc.id == conn {
			return sc
		}
	}
	return nil
}

// newConn returns a connection with no link.
func (p *Playback) newConn(conn components.ConnID) (*serverConn, error) {
	if conn == 0 {
		return nil, errors.New("systems: playback: connection 0 is never open")
	}
	if p.find(conn) != nil {
		return nil, fmt.Errorf("systems: playback: connection %d is open already", conn)
	}
	in, err := control.NewInputBuffer(p.s.binding.Schema(), p.s.opts.inputBuffer())
	if err != nil {
		return nil, err
	}
	return &serverConn{id: conn, inputs: in}, nil
}

// Connect spawns connection conn's player through Game.OnConnect; it
// errors when conn is open, when the game refuses, or when the player is
// not ghost player, the one recorded.
func (p *Playback) Connect(conn components.ConnID, player components.GhostID) error {
	sc, err := p.newConn(conn)
	if err != nil {
		return err
	}
	if !p.s.spawnPlayer(sc) {
		return fmt.Errorf("systems: playback: connection %d: spawning the player failed (the server's log says why)", conn)
	}
	p.conns = append(p.conns, sc)
	if sc.player != player {
		return fmt.Errorf("systems: playback: connection %d's player is ghost %d; the recording's is %d", conn, sc.player, player)
	}
	return nil
}

// Reconnect gives connection conn the place of open connection old: its
// ghosts and player, then Game.OnReconnect. It errors when old is not
// open, owns nothing or conn is open.
func (p *Playback) Reconnect(conn, old components.ConnID) error {
	prev := p.find(old)
	if prev == nil {
		return fmt.Errorf("systems: playback: connection %d reconnects as %d but is not open", old, conn)
	}
	sc, err := p.newConn(conn)
	if err != nil {
		return err
	}
	if p.s.ghosts.Reown(old, conn) == 0 {
		return fmt.Errorf("systems: playback: connection %d reconnects as %d but owns nothing", old, conn)
	}
	p.conns[slices.Index(p.conns, prev)] = sc
	sc.player, sc.applied = prev.player, prev.applied
	if g := p.s.game.OnReconnect; g != nil {
		p.s.owned = p.s.ghosts.Owned(p.s.owned[:0], conn)
		g(p.s.world, conn, old, p.s.owned)
	}
	return nil
}

// Disconnect gives connection conn's place up: its ghosts despawn and
// Game.OnDisconnect runs. It errors when conn is not open.
func (p *Playback) Disconnect(conn components.ConnID) error {
	sc := p.find(conn)
	if sc == nil {
		return fmt.Errorf("systems: playback: connection %d leaves but is not open", conn)
	}
	p.conns = slices.DeleteFunc(p.conns, func(c *serverConn) bool { return c == sc })
	p.s.release(sc)
	return nil
}

// Message runs the handlers of message m, accepted from connection conn
// (Recorder.Received), now. It errors when conn is not open or m does not
// decode.
func (p *Playback) Message(conn components.ConnID, m []byte) error {
	sc := p.find(conn)
	if sc == nil {
		return fmt.Errorf("systems: playback: a message from connection %d, which is not open", conn)
	}
	return p.s.msgs.replay(&sc.msgs, m, conn)
}

// Input queues h and in for connection conn's ghosts on the next tick.
// It errors when conn is not open or in is not the input type's size.
// Its copy of in is reused, so steady state it allocates nothing.
func (p *Playback) Input(conn components.ConnID, h *components.InputHeader, in []byte) error {
	sc := p.find(conn)
	if sc == nil {
		return fmt.Errorf("systems: playback: an input of connection %d, which is not open", conn)
	}
	if len(in) != p.size {
		return fmt.Errorf("systems: playback: an input of %d bytes; the input type has %d", len(in), p.size)
	}
	if len(p.queue) < cap(p.queue) {
		p.queue = p.queue[:len(p.queue)+1]
	} else {
		p.queue = append(p.queue, playInput{})
	}
	q := &p.queue[len(p.queue)-1]
	q.sc, q.h, q.in = sc, *h, append(q.in[:0], in...)
	return nil
}

// Tick runs the next tick with the inputs queued, then moves the time a
// tick on; the queue empties.
func (p *Playback) Tick() {
	p.s.runTick()
	p.queue = p.queue[:0]
	p.now.virtual.Advance(p.step)
}

// apply gives the queued inputs to their ghosts (the server's
// applyInputs), or in a replay of the determinism check those the tick
// took.
func (p *Playback) apply(w *gw.World) {
	tick := w.Tick()
	if w.IsReplaying() {
		for _, sc := range p.conns {
			if h, in, ok := sc.applied.at(tick); ok {
				p.s.giveInput(w, sc.id, &h, in)
			}
		}
		return
	}
	for i := range p.queue {
		q := &p.queue[i]
		q.sc.applied.keep(tick, q.h, q.in)
		if r := p.s.opts.Recorder; r != nil {
			r.Applied(tick, q.sc.id, q.h, q.in)
		}
		p.s.giveInput(w, q.sc.id, &q.h, q.in)
	}
}
