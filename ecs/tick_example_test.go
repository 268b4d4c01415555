package ecs_test

import (
	"fmt"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// A render tick is continuous: it counts on past 2³² where ticks wrap.
// TickAt turns it back into a tick and a fraction.
func ExampleTickAt() {
	render := 4294967295.75 // a quarter tick before the wrap
	tick, frac := gw.TickAt(render)
	fmt.Println("render", render, "is tick", tick, "and", frac)
	render += 1.5
	tick, frac = gw.TickAt(render)
	fmt.Println("render", render, "is tick", tick, "and", frac)
	// Output:
	// render 4.29496729575e+09 is tick 4294967295 and 0.75
	// render 4.29496729725e+09 is tick 1 and 0.25
}
