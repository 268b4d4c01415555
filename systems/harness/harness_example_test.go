package harness_test

import (
	"fmt"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// Pos and Speed are the example game's two components; each one's
// Serialize method is its wire form, written once.
type Pos struct{ X float32 }
type Speed struct{ V float32 }

var coord = netsync.Range(-1000, 1000, 1.0/64)

func (p *Pos) Serialize(s *netsync.Stream)   { s.Float(&p.X, coord) }
func (v *Speed) Serialize(s *netsync.Stream) { s.Float(&v.V, coord) }

// Move is the game's input: what the player did on one tick.
type Move struct{ X float32 }

func (m *Move) Serialize(s *netsync.Stream) { s.Float(&m.X, netsync.Range(-1, 1, 1.0/64)) }

// The whole path of a ghostwire game: define components and their wire
// codecs, describe the game once (schema, a prediction system shared by
// server and client, a side effect on the client, the player's spawn) and
// run a server and a client over a 100 ms link on virtual time.
func Example() {
	// 1. Components and the schema that replicates them.
	var b netsync.SchemaBuilder
	pos := netsync.Component[Pos](&b)
	speed := netsync.Component[Speed](&b)
	player := b.GhostType("player", pos, speed)
	netsync.Input[Move](&b, netsync.InputRules[Move]{})
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}

	// 2. The prediction system, made once per world: it reads the tick's
	// input from the entity.
	move := func(*gw.World) gw.System {
		movers := generic.NewFilter3[Pos, Speed, Move]().With(generic.T[components.Predicted]())
		return gw.SystemFunc(func(w *gw.World) {
			query := movers.Query(w.Arche())
			for query.Next() {
				p, s, in := query.Get()
				p.X += in.X * s.V / 60
			}
		})
	}
	// 3. A side effect: once per predicted tick, never in replay.
	footsteps := 0
	footstep := func(*gw.World) gw.System { return gw.SystemFunc(func(w *gw.World) { footsteps++ }) }

	// 4. The game, described once for both ends.
	game := &systems.Game{
		Schema: schema,
		OnConnect: func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			spawn := generic.NewMap2[Pos, Speed](w.Arche())
			return spawn.NewWith(&Pos{}, &Speed{V: 3}), player, nil
		},
		Prediction: []func(*gw.World) gw.System{move},
		Effects:    []func(*gw.World) gw.System{footstep},
	}

	h, err := harness.New(harness.Options{
		Seed: 1,
		Game: game,
		Clients: []harness.ClientSpec{{
			Link: transport.Conditions{
				Up:   transport.LinkConfig{Latency: 50 * time.Millisecond},
				Down: transport.LinkConfig{Latency: 50 * time.Millisecond},
			},
			Options: systems.ClientOptions{
				Input: systems.InputFunc(func(*gw.World, gw.Tick) Move { return Move{X: 1} }),
			},
		}},
	})
	if err != nil {
		panic(err)
	}
	h.Run(2 * time.Second)

	// 5. Each end finds the player: the client its own, the server the
	// one of a connection.
	client := h.Clients[0]
	e, _ := client.Player()
	conn, _ := client.Conn()
	se, _ := h.Server.Player(conn)
	clientPos := generic.NewMap[Pos](client.World().Arche())
	serverPos := generic.NewMap[Pos](h.Server.World().Arche())
	predicted, authoritative := clientPos.Get(e).X, serverPos.Get(se).X
	st := client.Stats()
	fmt.Printf("client tick %d predicts x=%.2f; server tick %d has x=%.2f\n",
		client.World().Tick(), predicted, h.Server.World().Tick(), authoritative)
	fmt.Printf("mispredictions %d, rollbacks %d, footsteps %d\n", st.Mispredictions, st.Rollbacks, footsteps)
	// Output:
	// client tick 124 predicts x=5.25; server tick 120 has x=5.06
	// mispredictions 0, rollbacks 0, footsteps 112
}
