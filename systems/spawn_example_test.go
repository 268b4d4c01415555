package systems_test

import (
	"fmt"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// A gunner fires three shells at 150 ms of round trip: each appears on its
// client the tick it is fired (a predicted spawn), is taken over by its
// server ghost a round trip later, and ends at its range on both ends.
// The server has ammunition for two: the third is removed from the client
// once the server has had every chance to confirm it.
func ExampleClientOptions_spawnMatchWindow() {
	sg := newShellGameFor(2)
	fired := 0
	opts := harness.Options{Seed: 1, Game: sg.game, Clients: []harness.ClientSpec{{
		Link: link(150*time.Millisecond, 0, 0),
		Options: systems.ClientOptions{Input: systems.InputFunc(func(_ *gw.World, tick gw.Tick) Trigger {
			if tick%30 == 0 && fired < 3 {
				fired++
				return Trigger{Fire: 1}
			}
			return Trigger{}
		})},
	}}}
	h, err := harness.New(opts)
	if err != nil {
		panic(err)
	}
	h.Run(10 * time.Second)
	st := h.Clients[0].Stats()
	fmt.Println("predicted", st.SpawnsPredicted, "taken over", st.SpawnsMatched, "removed", st.SpawnsUnmatched)
	fmt.Println("server spawned", h.Server.Stats().GhostsSpawned, "ended", h.Server.Stats().GhostsDespawned)
	fmt.Println("fire sounds", sg.sounds)
	// Output:
	// predicted 3 taken over 2 removed 1
	// server spawned 2 ended 2
	// fire sounds 3
}
