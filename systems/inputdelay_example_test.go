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

// A client starts with a fixed input delay of 2 ticks and switches to the
// adaptive one mid-game, which picks its delay from the round trip and
// jitter it measures: at 100 ms, the 3 ticks that cover half the round
// trip. Each change takes a tick per tick of delay; no input is dropped or
// doubled on the way.
func ExampleClient_SetInputDelay() {
	var b netsync.SchemaBuilder
	player := b.GhostType("player", netsync.Component[Pos](&b))
	netsync.Input[Seq](&b, netsync.InputRules[Seq]{})
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}
	game := &systems.Game{Schema: schema,
		OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap1[Pos](w.Arche())
			return m.NewWith(&Pos{}), player, nil
		}}
	h, err := harness.New(harness.Options{Seed: 1, Game: game, Clients: []harness.ClientSpec{{
		Link:    link(100*time.Millisecond, 0, 0),
		Options: systems.ClientOptions{InputDelay: systems.InputDelay{Ticks: 2}},
	}}})
	if err != nil {
		panic(err)
	}
	c := h.Clients[0]
	h.Run(2 * time.Second)
	fmt.Println("fixed:", c.Stats().InputDelay, "ticks")
	if err := c.SetInputDelay(systems.InputDelay{Adaptive: true, Max: 4}); err != nil {
		panic(err)
	}
	h.Run(3 * time.Second)
	st := c.Stats()
	fmt.Println("adaptive:", st.InputDelay, "ticks, after", st.InputDelayChanges, "step")
	fmt.Println(c.SetInputDelay(systems.InputDelay{Ticks: 45}))
	// Output:
	// fixed: 2 ticks
	// adaptive: 3 ticks, after 1 step
	// systems: input delay 45 ticks outside 0..30
}
