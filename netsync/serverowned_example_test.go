package netsync_test

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
)

// Lives is decided by the server alone: its simulation takes one every
// half second, as other players' shots would.
type Lives struct{ N int16 }

func (l *Lives) Serialize(s *netsync.Stream) { netsync.Int(s, &l.N, 0, 100) }

// Walk is a runner's input.
type Walk struct{ X float32 }

func (w *Walk) Serialize(s *netsync.Stream) { s.Float(&w.X, unit) }

// runner plays 3 s of a runner whose Lives the server takes, with Lives
// server-owned or predicted like Position, and prints what its client
// counted.
func runner(owned bool) {
	var b netsync.SchemaBuilder
	pos := netsync.Component[Position](&b)
	lives := netsync.Component[Lives](&b)
	player := b.GhostType("runner", pos, lives)
	if owned {
		b.ServerOwned(player, lives) // the client takes it, never predicts it
	}
	netsync.Input[Walk](&b, netsync.InputRules[Walk]{})
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}
	game := &systems.Game{
		Schema: schema,
		OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap2[Position, Lives](w.Arche())
			return m.NewWith(&Position{}, &Lives{N: 100}), player, nil
		},
		// The prediction moves the runner; it may read Lives, never write it.
		Prediction: []func(*gw.World) gw.System{func(*gw.World) gw.System {
			runners := generic.NewFilter2[Position, Walk]().With(generic.T[components.Predicted]())
			return gw.SystemFunc(func(w *gw.World) {
				q := runners.Query(w.Arche())
				for q.Next() {
					p, in := q.Get()
					p.X += in.X / 60
				}
			})
		}},
		Simulation: []func(*gw.World) gw.System{func(*gw.World) gw.System {
			all := generic.NewFilter1[Lives]()
			return gw.SystemFunc(func(w *gw.World) {
				if w.Tick()%30 != 0 {
					return
				}
				q := all.Query(w.Arche())
				for q.Next() {
					q.Get().N--
				}
			})
		}},
	}
	lk := harness.ClientSpec{Options: systems.ClientOptions{
		Input: systems.InputFunc(func(*gw.World, gw.Tick) Walk { return Walk{X: 1} }),
	}}
	lk.Link.Up.Latency, lk.Link.Down.Latency = 50*time.Millisecond, 50*time.Millisecond
	h, err := harness.New(harness.Options{Seed: 1, Game: game, Clients: []harness.ClientSpec{lk}})
	if err != nil {
		panic(err)
	}
	h.Run(3 * time.Second)
	st := h.Clients[0].Stats()
	fmt.Printf("server-owned %v: %d mispredictions %v, %d rollbacks, %d values taken\n",
		owned, st.Mispredictions, st.MispredictionsBy, st.Rollbacks, st.ServerOwnedChanges)
}

// A component only the server changes (lives lost to other players'
// shots, a score, a respawn time) costs a misprediction and a rollback
// each time it changes, unless it is declared server-owned: the client
// then takes it from each snapshot as it arrives, without comparing it
// and without rolling back (docs/server-owned.md).
func ExampleSchemaBuilder_ServerOwned() {
	runner(false)
	runner(true)
	// Output:
	// server-owned false: 5 mispredictions map[netsync_test.Lives:5], 5 rollbacks, 0 values taken
	// server-owned true: 0 mispredictions map[], 0 rollbacks, 5 values taken
}
