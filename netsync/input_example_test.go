package netsync_test

import (
	"fmt"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/netsync"
)

func ExampleQuantizeInput() {
	// The client samples its devices, quantizes the command and predicts
	// with the quantized values: exactly what the server will decode.
	c := components.InputCommand{Tick: 500, Buttons: 1, MoveX: 0.8, MoveY: 0.8, Aim: 1.0, ViewTick: 497, ViewFraction: 0.3}
	netsync.QuantizeInput(&c)
	fmt.Printf("move (%.4f, %.4f), aim %.5f, view %d+%v\n", c.MoveX, c.MoveY, c.Aim, c.ViewTick, c.ViewFraction)

	// It sends its newest commands (consecutive ticks) in one packet.
	prev := c
	prev.Tick, prev.Buttons = 499, 0
	batch := netsync.InputBatch{ClientTime: 16000, AckTick: 495, Inputs: []components.InputCommand{prev, c}}
	packet := netsync.AppendInputs(nil, &batch)
	fmt.Println(len(packet), "bytes")

	// The server decodes the batch, reusing its slice packet after packet.
	var got netsync.InputBatch
	if err := netsync.DecodeInputs(packet, &got); err != nil {
		panic(err)
	}
	for _, in := range got.Inputs {
		fmt.Println("tick", in.Tick, "buttons", in.Buttons)
	}
	fmt.Println("same as predicted:", got.Inputs[1] == c)
	// Output:
	// move (0.7008, 0.7008), aim 0.99996, view 497+0.296875
	// 27 bytes
	// tick 499 buttons 0
	// tick 500 buttons 1
	// same as predicted: true
}
