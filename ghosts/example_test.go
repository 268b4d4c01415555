package ghosts_test

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

// Health is a replicated component: its Serialize method is its wire form.
type Health struct{ V int32 }

func (h *Health) Serialize(s *netsync.Stream) { netsync.Int(s, &h.V, -1000, 1000) }

// The server spawns a crate that no player owns, and later despawns it;
// the client finds the crate's entity by its ghost ID, shows it
// interpolated, and loses it with the server's.
func Example() {
	var b netsync.SchemaBuilder
	health := netsync.Component[Health](&b)
	player := b.GhostType("player", health)
	crate := b.GhostType("crate", health)
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}

	var crateEntity ecs.Entity
	var crateID components.GhostID
	h, err := harness.New(harness.Options{
		Seed: 1,
		Game: &systems.Game{Schema: schema, OnConnect: func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			spawn := generic.NewMap1[Health](w.Arche())
			return spawn.NewWith(&Health{V: 100}), player, nil
		}},
		Clients: []harness.ClientSpec{{}},
		SetupServer: func(s *systems.Server) error {
			spawn := generic.NewMap1[Health](s.World().Arche())
			crateEntity = spawn.NewWith(&Health{V: 40})
			crateID, err = s.Ghosts().Spawn(crateEntity, crate, 0)
			return err
		},
	})
	if err != nil {
		panic(err)
	}
	h.Run(time.Second)

	client := h.Clients[0]
	e, ok := client.Ghosts().Entity(crateID)
	a := client.World().Arche()
	fmt.Println("client has the crate:", ok)
	fmt.Println("health:", (*Health)(a.Get(e, ecs.ComponentID[Health](a))).V)
	fmt.Println("interpolated:", a.Has(e, ecs.ComponentID[components.Interpolated](a)))
	se, _ := h.Server.Ghosts().Entity(crateID)
	fmt.Println("same crate on the server:", se == crateEntity)

	h.Server.Ghosts().Despawn(crateEntity)
	h.Run(time.Second)
	_, ok = client.Ghosts().Entity(crateID)
	fmt.Println("client has the crate after the despawn:", ok)
	// Output:
	// client has the crate: true
	// health: 40
	// interpolated: true
	// same crate on the server: true
	// client has the crate after the despawn: false
}
