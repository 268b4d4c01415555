package systems_test

import (
	"errors"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// A one-dimensional test game: Pos moves by the input's X at Speed.

type Pos struct{ X float32 }
type Speed struct{ V float32 }

type testGame struct {
	schema *netsync.Schema
	player netsync.GhostTypeID
}

var testQ = netsync.Range(-1000, 1000, 1.0/64)

// speedQ is Speed's quantizer, a variable so that a test can build a
// client schema whose Speed has another range (see newTestGameWithSpeed).
var speedQ = testQ

func (p *Pos) Serialize(s *netsync.Stream)   { s.Float(&p.X, testQ) }
func (v *Speed) Serialize(s *netsync.Stream) { s.Float(&v.V, speedQ) }

// Move is the test game's input: a move along the axis, at most 1 either
// way.
type Move struct{ X float32 }

var moveQ = netsync.Range(-1, 1, 1.0/64)

func (m *Move) Serialize(s *netsync.Stream) { s.Float(&m.X, moveQ) }

func newTestGame() *testGame { return newTestGameWith(nil) }

// newTestGameWith builds the test game; extra, if set, declares more in
// the schema (a client built otherwise).
func newTestGameWith(extra func(b *netsync.SchemaBuilder)) *testGame {
	var b netsync.SchemaBuilder
	pos := netsync.Component[Pos](&b)
	speed := netsync.Component[Speed](&b)
	player := b.GhostType("player", pos, speed)
	netsync.Input[Move](&b, netsync.InputRules[Move]{})
	if extra != nil {
		extra(&b)
	}
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	return &testGame{schema: s, player: player}
}

// move returns the test game's prediction system for one world: an arche
// filter resolves its component IDs in the first world it queries, and
// two worlds may number the same types differently.
func (g *testGame) move() gw.System {
	movers := generic.NewFilter3[Pos, Speed, Move]().With(generic.T[components.Predicted]())
	return gw.SystemFunc(func(w *gw.World) {
		q := movers.Query(w.Arche())
		for q.Next() {
			p, sp, in := q.Get()
			p.X += in.X * sp.V / 60
		}
	})
}

// newTestGameWithSpeed builds the test game with Speed quantized by q: the
// same component types and names, another wire form. Speed's Serialize
// reads speedQ whenever it runs, so only the schema's description (made
// by Build) holds q: a game built this way is for refusal tests, never run.
func newTestGameWithSpeed(q netsync.Quantizer) *testGame {
	saved := speedQ
	speedQ = q
	defer func() { speedQ = saved }()
	return newTestGame()
}

func (g *testGame) spawn(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
	m := generic.NewMap2[Pos, Speed](w.Arche())
	return m.NewWith(&Pos{X: float32(conn) * 10}, &Speed{V: 3}), g.player, nil
}

func link(rtt, jitter time.Duration, loss float64) transport.Conditions {
	l := transport.LinkConfig{Latency: rtt / 2, Jitter: jitter, Loss: loss}
	return transport.Conditions{Up: l, Down: l}
}

// game returns the test game for both ends: a player spawned per
// connection, moved by the move system.
func (g *testGame) game() *systems.Game {
	return &systems.Game{Schema: g.schema, OnConnect: g.spawn,
		Prediction: []func(*gw.World) gw.System{func(*gw.World) gw.System { return g.move() }}}
}

// options returns harness options for n clients whose inputs alternate
// direction every second.
func (g *testGame) options(n int, lk transport.Conditions) harness.Options {
	opts := harness.Options{Seed: 7, Game: g.game()}
	for i := 0; i < n; i++ {
		opts.Clients = append(opts.Clients, harness.ClientSpec{Link: lk, Options: systems.ClientOptions{
			Input: systems.InputFunc(func(_ *gw.World, tick gw.Tick) Move {
				if tick/60%2 == 0 {
					return Move{X: 1}
				}
				return Move{X: -0.5}
			}),
		}})
	}
	return opts
}

// positions returns the server's and the client's value of ghost id.
func positions(h *harness.Harness, client int, id components.GhostID) (server, predicted float32, ok bool) {
	se, ok1 := h.Server.Ghosts().Entity(id)
	ce, ok2 := h.Clients[client].Ghosts().Entity(id)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	sm := generic.NewMap[Pos](h.Server.World().Arche())
	cm := generic.NewMap[Pos](h.Clients[client].World().Arche())
	return sm.Get(se).X, cm.Get(ce).X, true
}

// hello returns the hello message a client of this game sends, for tests
// that talk to the server over a raw connection.
func (g *testGame) hello() []byte {
	h := protocol.Hello{SchemaHash: (*codec.Schema)(g.schema).Hash(), TickRate: 60, ComponentHashes: make([]uint64, (*codec.Schema)(g.schema).NumComponents())}
	for i := range h.ComponentHashes {
		h.ComponentHashes[i] = (*codec.Schema)(g.schema).ComponentHash(codec.ComponentID(i))
	}
	return protocol.AppendHello(nil, &h)
}

// connecting, refused and disconnected tell a client's state from its
// public methods: Connected, and the *systems.ConnError of Err.
func connecting(c *systems.Client) bool { return !c.Connected() && c.Err() == nil }

func refused(c *systems.Client) bool {
	var ce *systems.ConnError
	return errors.As(c.Err(), &ce) && ce.Refused
}

func disconnected(c *systems.Client) bool {
	var ce *systems.ConnError
	return errors.As(c.Err(), &ce) && !ce.Refused
}
