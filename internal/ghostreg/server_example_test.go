package ghostreg_test

import (
	"fmt"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// A server replicates one player's health to a client: spawn the ghost,
// write a snapshot for the player's connection, decode it on the client and
// spawn the ghost there.
// Health is a replicated component: its Serialize method is its wire form.
type Health struct{ V int32 }

func (h *Health) Serialize(s *codec.Stream) { codec.Int(s, &h.V, -1000, 1000) }

func ExampleServerRegister_WriteSnapshot() {
	// Both ends build the same schema.
	var b codec.SchemaBuilder
	health := wiretest.Component[Health](&b)
	player := b.GhostType("player", health)
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}

	// Server: spawn a ghost owned by connection 1 and write its snapshot
	// through the connection's View (what it was told and acknowledged).
	sw := gw.NewWorld(gw.WorldOptions{})
	srv := ghostreg.NewServerRegister(ghostreg.Bind(sw, schema))
	e := sw.Arche().NewEntityWith(ecs.Component{ID: ecs.ComponentID[Health](sw.Arche()), Comp: &Health{V: 87}})
	id, err := srv.Spawn(e, player, 1)
	if err != nil {
		panic(err)
	}
	w, _ := protocol.NewSnapshotWriter(schema, 0)
	w.Begin(sw.Tick())
	view := srv.NewView(1)
	srv.WriteSnapshot(w, view, sw.Tick())
	packet := w.Finish(&protocol.SnapshotHeader{Tick: sw.Tick()})

	// Client: decode the packet and spawn what it holds.
	cw := gw.NewWorld(gw.WorldOptions{})
	cl := ghostreg.NewClientRegister(ghostreg.Bind(cw, schema))
	cl.SetConn(1)
	var snap protocol.Snapshot
	if err := protocol.DecodeSnapshot(packet, schema, &snap); err != nil {
		panic(err)
	}
	for gi := range snap.Ghosts {
		ce := cl.Spawn(&snap, gi)
		h := (*Health)(cw.Arche().Get(ce, ecs.ComponentID[Health](cw.Arche())))
		predicted := cw.Arche().Has(ce, ecs.ComponentID[components.Predicted](cw.Arche()))
		fmt.Printf("ghost %d (server said %d): health %d, predicted %v\n", snap.Ghosts[gi].ID, id, h.V, predicted)
	}
	// Output:
	// ghost 1 (server said 1): health 87, predicted true
}
