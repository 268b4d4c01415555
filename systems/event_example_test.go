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
)

// Step is a predicted event: the player took a step.
type Step struct{ Foot int8 }

func (s *Step) Serialize(st *netsync.Stream) { netsync.Int(st, &s.Foot, 0, 1) }

// A player steps every half second; its prediction raises a Step event,
// and so does the server's. The client plays each step's sound once, on
// the tick it predicts it, however often a rollback replays that tick;
// the server's events confirm them a round trip later (the newest is on
// its way when the run ends).
func ExampleHandleEvent() {
	var b netsync.SchemaBuilder
	player := b.GhostType("player", netsync.Component[Pos](&b))
	netsync.Event[Step](&b, netsync.EventRules{})
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}
	walk := func(*gw.World) gw.System {
		walkers := generic.NewFilter1[Pos]().With(generic.T[components.Predicted]())
		return gw.SystemFunc(func(w *gw.World) {
			q := walkers.Query(w.Arche())
			for q.Next() {
				q.Get().X += 0.1
				if w.Tick()%30 == 0 {
					systems.Raise(w, q.Entity(), &Step{Foot: int8(w.Tick() / 30 % 2)})
				}
			}
		})
	}
	game := &systems.Game{Schema: schema, Prediction: []func(*gw.World) gw.System{walk},
		OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap1[Pos](w.Arche())
			return m.NewWith(&Pos{}), player, nil
		}}
	h, err := harness.New(harness.Options{Seed: 1, Game: game,
		Clients: []harness.ClientSpec{{Link: link(150*time.Millisecond, 0, 0), Options: systems.ClientOptions{SyncTest: 4}}}})
	if err != nil {
		panic(err)
	}
	sounds := 0
	err = systems.HandleEvent(h.Clients[0], systems.EventHandler[Step]{
		Play: func(ev systems.Event[Step]) { sounds++ },
	})
	if err != nil {
		panic(err)
	}
	h.Run(5 * time.Second)
	st := h.Clients[0].Stats()
	fmt.Println("sounds", sounds, "confirmed", st.EventsConfirmed, "cancelled", st.EventsCancelled, "late", st.EventsLate)
	fmt.Println("the server's steps", h.Server.Stats().EventsRaised)
	// Output:
	// sounds 10 confirmed 9 cancelled 0 late 0
	// the server's steps 10
}
