package testgame_test

import (
	"fmt"
	"time"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// Two seeded bots drive for ten seconds over a lossy link and let go; then
// each one's car on the server has counted exactly the handbrake pulls its
// bot made.
func ExampleSchema_Options() {
	s, err := testgame.NewSchema()
	if err != nil {
		panic(err)
	}
	link := testgame.Link(100*time.Millisecond, 10*time.Millisecond, 0.02)
	bots := []*testgame.Bot{testgame.NewBot(1, 10*testgame.TickRate), testgame.NewBot(2, 10*testgame.TickRate)}
	h, err := harness.New(s.Options(1, testgame.Player{Link: link, Input: bots[0].Source()},
		testgame.Player{Link: link, Input: bots[1].Source()}))
	if err != nil {
		panic(err)
	}
	h.Run(13 * time.Second)
	for i, c := range h.Clients {
		var own components.GhostID
		(*ghostreg.ClientRegister)(c.Ghosts()).Each(func(id components.GhostID, _ ecs.Entity, predicted bool) {
			if predicted {
				own = id
			}
		})
		e, _ := h.Server.Ghosts().Entity(own)
		a := h.Server.World().Arche()
		counted := (*testgame.Counters)(a.Get(e, ecs.ComponentID[testgame.Counters](a))).Handbrakes
		fmt.Printf("client %d: %d pulls, %d counted\n", i, bots[i].Pulls, counted)
	}
	// Output:
	// client 0: 4 pulls, 4 counted
	// client 1: 11 pulls, 11 counted
}
