package ecs_test

import (
	"fmt"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// A render tick is continuous: it counts on past 2³² where ticks wrap.
// Unwrap places a tick on that scale near a reference, TickAt turns a
// continuous tick back into a tick and a fraction.
func ExampleTickAt() {
	render := 4294967295.75 // a quarter tick before the wrap
	for _, tick := range []gw.Tick{4294967295, 0, 1} {
		fmt.Println(tick, "is", tick.Unwrap(render))
	}
	render += 1.5
	tick, frac := gw.TickAt(render)
	fmt.Println("render", render, "is tick", tick, "and", frac)
	// Output:
	// 4294967295 is 4.294967295e+09
	// 0 is 4.294967296e+09
	// 1 is 4.294967297e+09
	// render 4.29496729725e+09 is tick 1 and 0.25
}
