package systems_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// A client that runs without the game's move system (the server adds it
// to its own schedule only, the mistake a Game's Prediction rules out)
// mispredicts its own player; the diagnostics name the component and
// field, with the predicted value and the server's.
func ExampleClientOptions_onMisprediction() {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	forgetOnClient(g, &opts)
	first := true
	opts.Clients[0].Options.OnMisprediction = func(tick gw.Tick, ghost components.GhostID, diff netsync.FieldDiff) {
		if first {
			first = false
			fmt.Println(diff.Component, diff.Field)
			fmt.Println(strings.HasPrefix(diff.String(), "systems_test.Pos.X: ")) // then both values
		}
	}
	h, err := harness.New(opts)
	if err != nil {
		panic(err)
	}
	h.Run(2 * time.Second)
	st := h.Clients[0].Stats()
	fmt.Println(st.MispredictionsBy["systems_test.Pos"] == st.Mispredictions)
	fmt.Println(h.CheckOwnState(0) != nil)
	// Output:
	// systems_test.Pos X
	// true
	// true
	// true
}
