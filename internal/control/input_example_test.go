package control_test

import (
	"fmt"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// shipInput is a game's input type: thrust, a steering notch and a shot
// that must count exactly once.
type shipInput struct {
	Thrust float32
	Steer  int8
	Fire   components.Press
}

var thrustQ = codec.Range(0, 1, 1.0/32)

func (in *shipInput) Serialize(s *codec.Stream) {
	s.Float(&in.Thrust, thrustQ)
	codec.Int(s, &in.Steer, -2, 2)
	s.Press(&in.Fire)
}

func ExampleInputStream() {
	// Server and clients declare the input type in the same schema.
	var b codec.SchemaBuilder
	wiretest.DeclareInput[shipInput](&b, wiretest.InputRulesOf[shipInput]{
		Validate: func(in *shipInput) (clamped bool, refuse string) {
			if in.Thrust > 0.75 { // this ship's engine is weaker
				in.Thrust = 0.75
				return true, ""
			}
			return false, ""
		},
	})
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}

	// The client records its input of every tick and predicts with the
	// stored record: quantized and validated as the server will.
	stream, _ := control.NewInputStream(schema, control.InputStreamOptions{})
	bytesOf := func(in *shipInput) []byte {
		return unsafe.Slice((*byte)(unsafe.Pointer(in)), unsafe.Sizeof(*in))
	}
	for tick := 499; tick <= 500; tick++ {
		in := shipInput{Thrust: 0.9, Steer: 1, Fire: components.Press(1 - tick%2)}
		stored, _ := stream.Record(components.InputHeader{Tick: ecs.Tick(tick)}, bytesOf(&in))
		p := (*shipInput)(unsafe.Pointer(&stored[0]))
		fmt.Printf("tick %d predicts thrust %v steer %d fire %v\n", tick, p.Thrust, p.Steer, p.Fire.Pressed())
	}

	// It sends its newest inputs in one packet.
	var batch protocol.InputBatch
	stream.Batch(&batch)
	packet := protocol.AppendInputs(nil, schema, &batch)
	fmt.Println(len(packet), "bytes")

	// The server decodes the batch and buffers each input by tick.
	var got protocol.InputBatch
	if err := protocol.DecodeInputs(packet, schema, &got); err != nil {
		panic(err)
	}
	buf, _ := control.NewInputBuffer(schema, control.InputBufferOptions{})
	size := schema.InputSize()
	for i, h := range got.Heads {
		buf.Add(h, got.Data[i*size:(i+1)*size], 498)
	}
	// Tick 501's input is missing: the last one is repeated, its shot
	// not.
	for tick := 499; tick <= 501; tick++ {
		h, rec, real := buf.Take(ecs.Tick(tick))
		in := (*shipInput)(unsafe.Pointer(&rec[0]))
		fmt.Printf("tick %d applies thrust %v fire %v (own input: %v)\n", h.Tick, in.Thrust, in.Fire.Pressed(), real)
	}
	// Output:
	// tick 499 predicts thrust 0.75 steer 1 fire false
	// tick 500 predicts thrust 0.75 steer 1 fire true
	// 19 bytes
	// tick 499 applies thrust 0.75 fire false (own input: true)
	// tick 500 applies thrust 0.75 fire true (own input: true)
	// tick 501 applies thrust 0.75 fire false (own input: false)
}
