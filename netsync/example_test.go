package netsync_test

import (
	"fmt"
	"reflect"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/netsync"
)

// Position, Facing and Ammo are a game's replicated components; each
// one's Serialize method is its one description of its wire form.
type Position struct{ X, Y float32 }
type Facing struct{ Yaw float32 }
type Ammo struct{ N uint8 }

var (
	coord = netsync.Range(-1000, 1000, 1.0/64) // 1/64 unit steps: 17 bits
	yaw   = netsync.Angle(12)                  // 4096 directions
	unit  = netsync.Range(-1, 1, 1.0/127)
)

func (p *Position) Serialize(s *netsync.Stream) { s.Float(&p.X, coord); s.Float(&p.Y, coord) }
func (f *Facing) Serialize(s *netsync.Stream)   { s.Angle(&f.Yaw, yaw) }
func (a *Ammo) Serialize(s *netsync.Stream)     { netsync.Int(s, &a.N, 0, 30) }

// Drive is the game's input: what a player did on one tick.
type Drive struct {
	Steer float32
	Fire  components.Press // counts exactly once
}

func (d *Drive) Serialize(s *netsync.Stream) { s.Float(&d.Steer, unit); s.Press(&d.Fire) }

// Turret codes a field with a quantizer nobody configured.
type Turret struct{ Aim float32 }

func (t *Turret) Serialize(s *netsync.Stream) { s.Float(&t.Aim, netsync.Quantizer{}) }

// A game declares its schema once, the same way on server and clients,
// and checks one error.
func Example() {
	var b netsync.SchemaBuilder
	pos := netsync.Component[Position](&b)
	facing := netsync.Component[Facing](&b)
	ammo := netsync.Component[Ammo](&b)
	b.Interpolate(facing, netsync.Interpolation{
		Blend: netsync.Lerp(func(a, b *Facing, t float32) Facing { return Facing{netsync.LerpAngle(a.Yaw, b.Yaw, t)} }),
	})
	b.Interpolate(pos, netsync.Interpolation{
		// A jump of more than 50 units is a teleport: shown at once.
		Distance: netsync.Distance(func(a, b *Position) float32 { return max(a.X-b.X, b.X-a.X, a.Y-b.Y, b.Y-a.Y) }),
		Teleport: 50,
	})
	player := b.GhostType("player", pos, facing, ammo)
	ball := b.GhostType("ball", pos)
	b.Predict(ball, netsync.PredictAll) // every client predicts the ball
	netsync.Input[Drive](&b, netsync.InputRules[Drive]{
		Validate: func(d *Drive) (clamped bool, refuse string) {
			if limit := unit.Quantize(0.5); d.Steer > limit { // this car turns less
				d.Steer = limit // a clamped value stays on the wire's grid
				return true, ""
			}
			return false, ""
		},
		Missing: netsync.MissingRepeatLast,
	})
	schema, err := b.Build()
	fmt.Println(schema != nil, err, player, ball)

	// A value the server keeps is what its clients decode, bit for bit.
	fmt.Println(coord.Quantize(12.3456), yaw.Quantize(3.14159265/2))

	// A mistake is named when the schema is built.
	var bad netsync.SchemaBuilder
	netsync.Component[Turret](&bad)
	_, err = bad.Build()
	fmt.Println(err)
	// Output:
	// true <nil> 0 1
	// 12.34375 1.5707964
	// netsync: component netsync_test.Turret: field 0: netsync: an unconfigured Quantizer (the zero value) would encode every value as 0; make one with Range
}

// A bare-world test (no endpoints) keeps its state on the wire's grid with
// Quantize, as the server does at the end of every tick: what a client
// predicting with the same inputs would get, bit for bit.
func ExampleQuantize() {
	var b netsync.SchemaBuilder
	netsync.Component[Position](&b)
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}
	p := Position{X: 1.0 / 3, Y: 2000}
	if err := netsync.Quantize(schema, &p); err != nil {
		panic(err)
	}
	fmt.Println(p.X, p.Y) // 1/64 steps; clamped to the range
	// Output: 0.328125 1000
}

// A misprediction names the component and field, with both values, for a
// log line or a debug overlay.
func ExampleFieldDiff() {
	d := netsync.FieldDiff{Component: "game.Position", Field: "X", Kind: reflect.Float32, Predicted: 1.5, Server: 2}
	predicted, server := d.Values()
	fmt.Println(predicted, server)
	fmt.Println(d)
	// Output:
	// 1.5 2
	// game.Position.X: 1.5 then 2
}
