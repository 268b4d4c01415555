package components_test

import (
	"fmt"

	"github.com/ghostwire/ghostwire/components"
)

// A game's input type marks the events that must count exactly once with
// Press fields; its systems read them with Pressed, like any component.
func ExamplePress() {
	type Drive struct {
		Throttle  float32
		Handbrake components.Press
	}
	ticks := []Drive{{Throttle: 1}, {Throttle: 1, Handbrake: 1}, {Throttle: 1}}
	for i, in := range ticks {
		if in.Handbrake.Pressed() {
			fmt.Println("handbrake on tick", i)
		}
	}
	// Output: handbrake on tick 1
}
