package protocol_test

import (
	"fmt"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// Position is a 2D position to the centimetre: its Serialize method is
// its one wire form.
type Position struct{ X, Y float32 }

var centimetres = codec.Range(-100, 100, 0.01)

func (p *Position) Serialize(s *codec.Stream) {
	s.Float(&p.X, centimetres)
	s.Float(&p.Y, centimetres)
}

func ExampleSnapshotWriter() {
	// The schema: one replicated component and one ghost type that
	// carries it. Server and clients build it with the same code.
	var b codec.SchemaBuilder
	pos := wiretest.Component[Position](&b)
	player := b.GhostType("player", pos)
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}

	// Server: the snapshot of tick 120 for connection 2, its own ghost
	// first, new to it (with its identity: owner and spawn tick), then one
	// it has acknowledged. Values are passed by pointer, straight from
	// storage.
	w, err := protocol.NewSnapshotWriter(schema, 0)
	if err != nil {
		panic(err)
	}
	mine, theirs := Position{1.234, -5.678}, Position{50, 25.5}
	w.Begin(120)
	w.AddGhost(components.Ghost{ID: 7, Type: uint16(player), Owner: 2, Spawned: 100}, true, []unsafe.Pointer{unsafe.Pointer(&mine)})
	w.AddGhost(components.Ghost{ID: 3, Type: uint16(player), Owner: 1, Spawned: 110}, false, []unsafe.Pointer{unsafe.Pointer(&theirs)})
	packet := w.Finish(&protocol.SnapshotHeader{Tick: 120, Confirmed: 119, HasConfirmed: true, Lead: 1.5, EchoTime: 4000, Hold: 3})
	fmt.Println(len(packet), "bytes")

	// Client: decode into a Snapshot that is reused packet after packet.
	var s protocol.Snapshot
	if err := protocol.DecodeSnapshot(packet, schema, &s); err != nil {
		panic(err)
	}
	fmt.Println("tick", s.Tick, "confirmed", s.Confirmed, "lead", s.Lead)
	for i, g := range s.Ghosts {
		p := (*Position)(s.Value(i, 0))
		if g.Identity {
			fmt.Printf("ghost %d of connection %d, spawned at tick %d: (%.2f, %.2f)\n", g.ID, g.Owner, g.Spawned, p.X, p.Y)
		} else {
			fmt.Printf("ghost %d, identity acknowledged before: (%.2f, %.2f)\n", g.ID, p.X, p.Y)
		}
	}
	// The client sees the quantized position, the value the server keeps
	// too when it quantizes its state at the end of the tick.
	fmt.Println(*(*Position)(s.Value(0, 0)) == Position{centimetres.Quantize(mine.X), centimetres.Quantize(mine.Y)})
	// Output:
	// 38 bytes
	// tick 120 confirmed 119 lead 1.5
	// ghost 7 of connection 2, spawned at tick 100: (1.23, -5.68)
	// ghost 3, identity acknowledged before: (50.00, 25.50)
	// true
}
