package systems_test

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

// Car is the example's replicated component; Drive its input, the game's
// own type. This mirrors docs/getting-started.md.
type Car struct{ X, Speed float32 }

type Drive struct {
	Steer, Throttle float32
	Handbrake       components.Press
}

var (
	carCoord = netsync.Range(-1000, 1000, 1.0/64)
	unit     = netsync.Range(-1, 1, 1.0/127)
)

func (c *Car) Serialize(s *netsync.Stream) { s.Float(&c.X, carCoord); s.Float(&c.Speed, carCoord) }

func (d *Drive) Serialize(s *netsync.Stream) {
	s.Float(&d.Steer, unit)
	s.Float(&d.Throttle, unit)
	s.Press(&d.Handbrake)
}

// A game-defined input with a press: the handbrake is pulled and released
// within one tick, between two samples, and still counts exactly once, on
// the server as in the client's prediction.
func ExampleInputFunc() {
	var b netsync.SchemaBuilder
	car := netsync.Component[Car](&b)
	carType := b.GhostType("car", car)
	netsync.Input[Drive](&b, netsync.InputRules[Drive]{Missing: netsync.MissingRepeatLast})
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}

	// The prediction system, made once per world: throttle accelerates,
	// the handbrake stops.
	drive := func(*gw.World) gw.System {
		cars := generic.NewFilter2[Car, Drive]().With(generic.T[components.Predicted]())
		return gw.SystemFunc(func(w *gw.World) {
			q := cars.Query(w.Arche())
			for q.Next() {
				c, in := q.Get()
				c.Speed += in.Throttle / 60
				if in.Handbrake.Pressed() {
					c.Speed = 0
				}
				c.X += c.Speed / 60
			}
		})
	}
	serverPulls := 0
	countPulls := func(*gw.World) gw.System {
		drives := generic.NewFilter1[Drive]()
		return gw.SystemFunc(func(w *gw.World) {
			q := drives.Query(w.Arche())
			for q.Next() {
				if q.Get().Handbrake.Pressed() {
					serverPulls++
				}
			}
		})
	}

	var handbrake systems.Latch
	h, err := harness.New(harness.Options{
		Seed: 1,
		Game: &systems.Game{
			Schema: schema,
			OnConnect: func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
				spawn := generic.NewMap1[Car](w.Arche())
				return spawn.NewWith(&Car{}), carType, nil
			},
			Prediction: []func(*gw.World) gw.System{drive},
			Simulation: []func(*gw.World) gw.System{countPulls},
		},
		Clients: []harness.ClientSpec{{
			Link: transport.Conditions{Up: transport.LinkConfig{Latency: 50 * time.Millisecond}, Down: transport.LinkConfig{Latency: 50 * time.Millisecond}},
			Options: systems.ClientOptions{Input: systems.InputFunc(func(w *gw.World, tick gw.Tick) Drive {
				return Drive{Throttle: 1, Handbrake: handbrake.Take()}
			})},
		}},
	})
	if err != nil {
		panic(err)
	}
	h.Run(time.Second)
	handbrake.Press() // a key event between two ticks
	h.Run(time.Second)

	server, _ := h.Server.Player(h.Server.Conns()[0])
	sc := *(*Car)(h.Server.World().Arche().Get(server, ecs.ComponentID[Car](h.Server.World().Arche())))
	fmt.Println("handbrake pulls on the server:", serverPulls)
	fmt.Println("mispredictions:", h.Clients[0].Stats().Mispredictions)
	fmt.Println("speed below one second of throttle:", sc.Speed < 1)
	// Output:
	// handbrake pulls on the server: 1
	// mispredictions: 0
	// speed below one second of throttle: true
}
