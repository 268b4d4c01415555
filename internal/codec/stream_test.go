package codec_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// allKinds codes one field of every kind a Stream offers.
type allKinds struct {
	F    float32
	A    float32
	R    float32
	B    bool
	P    components.Press
	T    gw.Tick
	I8   int8
	U16  uint16
	I32  int32
	Tail struct{ U8 uint8 }
}

var (
	kindQ     = codec.Range(-10, 10, 1.0/64)
	kindAngle = codec.Angle(12)
)

func (v *allKinds) Serialize(s *codec.Stream) {
	s.Float(&v.F, kindQ)
	s.Angle(&v.A, kindAngle)
	s.Float32(&v.R)
	s.Bool(&v.B)
	s.Press(&v.P)
	s.Tick(&v.T)
	codec.Int(s, &v.I8, -100, 100)
	codec.Int(s, &v.U16, 10, 1000)
	codec.Int(s, &v.I32, math.MinInt32, math.MaxInt32)
	codec.Int(s, &v.Tail.U8, 0, 3)
}

// zeroSize is a tag component: it codes nothing.
type zeroSize struct{}

func (*zeroSize) Serialize(*codec.Stream) {}

func kindsSchema(t testing.TB) (*codec.Schema, codec.ComponentID, codec.GhostTypeID) {
	var b codec.SchemaBuilder
	id := wiretest.Component[allKinds](&b)
	tag := wiretest.Component[zeroSize](&b)
	typ := b.GhostType("kinds", id, tag) // the zero-size tag comes last
	s, err := b.Build()
	require.NoError(t, err)
	return s, id, typ
}

// throughTheWire sends v as the only ghost of a snapshot and returns what
// a peer decodes.
func throughTheWire(t *testing.T, s *codec.Schema, typ codec.GhostTypeID, v allKinds) allKinds {
	t.Helper()
	w, err := protocol.NewSnapshotWriter(s, 0)
	require.NoError(t, err)
	w.Begin(7)
	var tag zeroSize
	require.True(t, w.AddGhost(components.Ghost{ID: 1, Type: uint16(typ)}, true, []unsafe.Pointer{unsafe.Pointer(&v), unsafe.Pointer(&tag)}))
	var snap protocol.Snapshot
	require.NoError(t, protocol.DecodeSnapshot(w.Finish(&protocol.SnapshotHeader{Tick: 7}), s, &snap))
	require.Len(t, snap.Ghosts, 1)
	return *(*allKinds)(snap.Value(0, 0))
}

func TestStreamQuantizeIsWhatAPeerDecodes(t *testing.T) {
	s, id, typ := kindsSchema(t)
	var c codec.Coder
	for _, v := range []allKinds{
		{},
		{F: 1.23456, A: 3.14159, R: 1e-7, B: true, P: 1, T: math.MaxUint32, I8: -100, U16: 10, I32: math.MinInt32, Tail: struct{ U8 uint8 }{3}},
		{F: 99, A: -7, R: -2.5, P: 7, T: 12345, I8: 120, U16: 5, I32: 17, Tail: struct{ U8 uint8 }{200}}, // out of range: clamped
		{F: float32(math.NaN()), A: float32(math.Inf(1))},
	} {
		got := v
		c.Quantize(s, id, unsafe.Pointer(&got))
		want := throughTheWire(t, s, typ, v)
		assert.Equal(t, blendBytes(&want), blendBytes(&got), "%+v", v)
		again := got
		c.Quantize(s, id, unsafe.Pointer(&again))
		assert.Equal(t, got, again, "quantizing twice changes nothing")
		assert.True(t, c.Equal(s, id, unsafe.Pointer(&v), unsafe.Pointer(&got)), "a value and its quantized form look the same to a peer")
	}
}

func TestCoderDiffNamesTheFieldAndBothValues(t *testing.T) {
	s, id, _ := kindsSchema(t)
	var c codec.Coder
	a := allKinds{F: 1, U16: 500, Tail: struct{ U8 uint8 }{1}}
	b := a
	b.F = 1.001 // within a step: the same on the wire
	d, same := c.Diff(s, id, unsafe.Pointer(&a), unsafe.Pointer(&b))
	assert.True(t, same)
	assert.Empty(t, d.Field)

	b.Tail.U8 = 2
	d, same = c.Diff(s, id, unsafe.Pointer(&a), unsafe.Pointer(&b))
	require.False(t, same)
	assert.Equal(t, "codec_test.allKinds", d.Component)
	assert.Equal(t, "Tail.U8", d.Field)
	assert.Equal(t, "codec_test.allKinds.Tail.U8: 1 then 2", d.String())

	b = a
	b.F = 2.5
	d, _ = c.Diff(s, id, unsafe.Pointer(&a), unsafe.Pointer(&b))
	a1, b1 := d.Values()
	assert.Equal(t, []string{"F", "1", "2.5"}, []string{d.Field, a1, b1})
	assert.False(t, c.Equal(s, id, unsafe.Pointer(&a), unsafe.Pointer(&b)))
}

func TestCoderAllocatesNothingInSteadyState(t *testing.T) {
	s, id, _ := kindsSchema(t)
	var c codec.Coder
	a := allKinds{F: 1.5, A: 2, R: 3, T: 9, I8: 4}
	b := a
	d := b
	d.I8 = 5
	run := func() {
		c.Quantize(s, id, unsafe.Pointer(&a))
		if !c.Equal(s, id, unsafe.Pointer(&a), unsafe.Pointer(&b)) {
			panic("quantized value differs from the original")
		}
		if _, same := c.Diff(s, id, unsafe.Pointer(&a), unsafe.Pointer(&d)); same {
			panic("a differing field went unseen")
		}
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(100, run))
}
