package systems_test

import (
	"fmt"
	"time"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// A server-owned crate is interpolated on every client, as its type says;
// one client predicts it while its player is near (here: for one second),
// then lets it go back to the interpolation.
func ExampleClient_Predict() {
	g := newTestGameWith(func(b *netsync.SchemaBuilder) { b.GhostType("crate", 0, 1) })
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	var crate components.GhostID
	opts.Game.OnStart = func(s *systems.Server) error {
		m := generic.NewMap2[Pos, Speed](s.World().Arche())
		var err error
		crate, err = s.Ghosts().Spawn(m.NewWith(&Pos{X: 2}, &Speed{}), 1, 0)
		return err
	}
	h, err := harness.New(opts)
	if err != nil {
		panic(err)
	}
	c := h.Clients[0]
	marker := generic.NewMap[components.Predicted](c.World().Arche())
	predicted := func() bool {
		e, _ := c.Ghosts().Entity(crate)
		return marker.Has(e)
	}
	h.Run(time.Second)
	fmt.Println("predicted by its type:", predicted())
	if err := c.Predict(crate, true); err != nil {
		panic(err)
	}
	h.Run(time.Second)
	fmt.Println("near the player:", predicted())
	if err := c.Predict(crate, false); err != nil {
		panic(err)
	}
	h.Run(time.Second)
	fmt.Println("far again:", predicted(), c.Stats().SwitchedToPredicted, c.Stats().SwitchedToInterpolated)
	// Output:
	// predicted by its type: false
	// near the player: true
	// far again: false 1 1
}
