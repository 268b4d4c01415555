package netsync_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// Named holds a string: a history cannot copy it bit for bit.
type Named struct {
	X    float32
	Name string
}

func (n *Named) Serialize(s *netsync.Stream) { s.Float(&n.X, coord) }

// Order holds a slice deep inside: the refusal names the path.
type Order struct {
	Target struct{ Waypoints []float32 }
}

func (o *Order) Serialize(s *netsync.Stream) {}

// Build refuses a component or an input type that is not plain data, with
// an *ecs.PlainDataError naming the field, at the schema's declaration
// rather than at a client's first tick.
func TestBuildRefusesNonPlainData(t *testing.T) {
	var b netsync.SchemaBuilder
	netsync.Component[Named](&b)
	_, err := b.Build()
	var pe *gw.PlainDataError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Name", pe.Field)
	assert.Equal(t, "netsync_test.Named", pe.Type.String())
	assert.Contains(t, err.Error(), "component netsync_test.Named")

	var ib netsync.SchemaBuilder
	netsync.Component[Position](&ib)
	netsync.Input[Order](&ib, netsync.InputRules[Order]{})
	_, err = ib.Build()
	require.True(t, errors.As(err, &pe), "got %v", err)
	assert.Equal(t, "Target.Waypoints", pe.Field)
	assert.Contains(t, err.Error(), "input type netsync_test.Order")
}

// Quantize rounds a component through its description, as the server does
// every tick, and the input type through its rules too: clamped, or
// refused with the reason. A type the schema does not know is an error
// naming it.
func TestQuantizeThroughTheSchema(t *testing.T) {
	var b netsync.SchemaBuilder
	netsync.Component[Position](&b)
	netsync.Component[Facing](&b)
	netsync.Input[Drive](&b, netsync.InputRules[Drive]{Validate: func(d *Drive) (bool, string) {
		if d.Steer < -0.5 {
			return false, "too far left"
		}
		if d.Steer > 0.5 {
			d.Steer = unit.Quantize(0.5)
			return true, ""
		}
		return false, ""
	}})
	s, err := b.Build()
	require.NoError(t, err)

	p := Position{X: 1.0 / 3, Y: 5000}
	require.NoError(t, netsync.Quantize(s, &p))
	assert.Equal(t, Position{X: coord.Quantize(1.0 / 3), Y: 1000}, p, "rounded to 1/64 and clamped to the range")
	again := p
	require.NoError(t, netsync.Quantize(s, &again))
	assert.Equal(t, p, again)

	d := Drive{Steer: 0.9}
	require.NoError(t, netsync.Quantize(s, &d))
	assert.Equal(t, unit.Quantize(0.5), d.Steer, "the rule's clamp")
	d = Drive{Steer: -0.9}
	err = netsync.Quantize(s, &d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too far left")

	err = netsync.Quantize(s, &Ammo{N: 40})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "netsync_test.Ammo is neither a component nor the input type")
}
