package systems_test

import (
	"fmt"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// A player whose link is lost keeps its place for the grace: a new
// connection of the same identity (on UDP, a new token for the same
// room and identity: tokens.Identity reads it) takes back the same
// ghost, with no second player spawned. The harness gives each client
// spec's Identity to the server.
func ExampleServerOptions_reconnectGrace() {
	g := newTestGame()
	game := g.game()
	game.OnReconnect = func(_ *gw.World, conn, old components.ConnID, owned []ecs.Entity) {
		fmt.Printf("connection %d took back connection %d's %d entity\n", conn, old, len(owned))
	}
	h, err := harness.New(harness.Options{Game: game,
		Server:  systems.ServerOptions{ReconnectGrace: 30 * time.Second, Timeout: time.Second},
		Clients: []harness.ClientSpec{{Identity: "player-42"}}})
	if err != nil {
		panic(err)
	}
	player := func(c *systems.Client) components.GhostID {
		e, ok := c.Player()
		if !ok {
			return 0
		}
		ghosts := generic.NewMap[components.Ghost](c.World().Arche())
		return ghosts.Get(e).ID
	}
	h.RunUntil(func() bool { return player(h.Clients[0]) != 0 }, time.Second)
	before := player(h.Clients[0])

	h.Stall(0, time.Hour) // the link is lost: the server hears nothing more
	h.RunUntil(func() bool { return h.Server.Stats().Held == 1 }, 2*time.Second)
	fmt.Println("held places:", h.Server.Stats().Held)

	if err := h.AddClient(harness.ClientSpec{Identity: "player-42"}); err != nil {
		panic(err)
	}
	h.RunUntil(func() bool { return player(h.Clients[1]) != 0 }, time.Second)
	st := h.Server.Stats()
	fmt.Println("same ghost:", player(h.Clients[1]) == before)
	fmt.Println("reconnects:", st.Reconnects, "held places:", st.Held, "players:", players(h.Server.World()))
	// Output:
	// held places: 1
	// connection 2 took back connection 1's 1 entity
	// same ghost: true
	// reconnects: 1 held places: 0 players: 1
}
