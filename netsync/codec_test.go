package netsync_test

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/netsync"
)

func TestNewCodecEncodesThroughPointers(t *testing.T) {
	q := mustQuantizer(t, -500, 500, 0.01)
	c := posCodec(q)
	assert.Equal(t, reflect.TypeFor[tPos](), c.Type())

	in := tPos{1.234, -499.996, 77}
	var w netsync.BitWriter
	c.Encode(&w, unsafe.Pointer(&in))
	assert.Equal(t, 3*q.Bits(), w.BitLen())

	var r netsync.BitReader
	r.Reset(w.Bytes())
	var out tPos
	require.NoError(t, c.Decode(&r, unsafe.Pointer(&out)))
	assert.Equal(t, tPos{q.Quantize(1.234), q.Quantize(-499.996), q.Quantize(77)}, out)
	assert.Equal(t, tPos{1.234, -499.996, 77}, in, "encoding does not touch the value")

	r.Reset(w.Bytes()[:2])
	err := c.Decode(&r, unsafe.Pointer(&out))
	assert.ErrorIs(t, err, netsync.ErrShortBuffer)
}

func TestCodecDecodeRefusesOutOfRangeCodes(t *testing.T) {
	var w netsync.BitWriter
	w.WriteBits(7, 8)
	w.WriteBits(1001, 10) // armor above 1000
	w.WriteBool(true)
	var r netsync.BitReader
	r.Reset(w.Bytes())
	var h tHealth
	err := healthCodec().Decode(&r, unsafe.Pointer(&h))
	require.ErrorIs(t, err, netsync.ErrOutOfRange)
	assert.Contains(t, err.Error(), "1001")
}

func TestRoundTripQuantizeIsWhatAPeerDecodes(t *testing.T) {
	ts := newTestSchema(t)
	var rt netsync.RoundTrip
	values := []tVel{{0, 0}, {1.23456, -7.891011}, {49.999, -50}, {1e9, -1e9}, {float32(math.NaN()), 3}}
	for _, v := range values {
		got := v
		rt.Quantize(ts.Codec(ts.Vel), unsafe.Pointer(&got))

		var w netsync.BitWriter
		ts.Codec(ts.Vel).Encode(&w, unsafe.Pointer(&v))
		var r netsync.BitReader
		r.Reset(w.Bytes())
		var want tVel
		require.NoError(t, ts.Codec(ts.Vel).Decode(&r, unsafe.Pointer(&want)))
		assert.Equal(t, math.Float32bits(want.X), math.Float32bits(got.X), "%v", v)
		assert.Equal(t, math.Float32bits(want.Y), math.Float32bits(got.Y), "%v", v)

		again := got
		rt.Quantize(ts.Codec(ts.Vel), unsafe.Pointer(&again))
		assert.Equal(t, got, again, "quantizing twice changes nothing")
	}
}

func TestRoundTripEqualComparesWhatThePeerSees(t *testing.T) {
	ts := newTestSchema(t)
	var rt netsync.RoundTrip
	c := ts.Codec(ts.Pos)
	a := tPos{1, 2, 3}
	b := tPos{1.001, 2.004, 2.996} // within half a centimetre
	d := tPos{1, 2, 3.01}
	assert.True(t, rt.Equal(c, unsafe.Pointer(&a), unsafe.Pointer(&a)))
	assert.True(t, rt.Equal(c, unsafe.Pointer(&a), unsafe.Pointer(&b)))
	assert.False(t, rt.Equal(c, unsafe.Pointer(&a), unsafe.Pointer(&d)))
	assert.False(t, rt.Equal(c, unsafe.Pointer(&d), unsafe.Pointer(&a)))

	// Encodings of different bit lengths are never equal, even when the
	// shorter one is a prefix of the longer one.
	varLen := netsync.NewCodec(
		func(w *netsync.BitWriter, v *uint64) { w.WriteUvarint(*v) },
		func(r *netsync.BitReader, v *uint64) error {
			var err error
			*v, err = r.ReadUvarint()
			return err
		})
	x, y := uint64(5), uint64(5+128)
	assert.False(t, rt.Equal(varLen, unsafe.Pointer(&x), unsafe.Pointer(&y)))
	assert.True(t, rt.Equal(varLen, unsafe.Pointer(&y), unsafe.Pointer(&y)))
}

func TestRoundTripPanicsOnACodecThatCannotReadItself(t *testing.T) {
	bad := netsync.NewCodec(
		func(w *netsync.BitWriter, v *tTeam) { w.WriteBits(3, 2) },
		func(r *netsync.BitReader, v *tTeam) error {
			id, err := r.ReadBits(2)
			if err == nil && id > 2 {
				err = errors.New("team out of range")
			}
			return err
		})
	var rt netsync.RoundTrip
	v := tTeam{1}
	assert.PanicsWithValue(t,
		"netsync: codec for netsync_test.tTeam cannot decode what it encoded: team out of range",
		func() { rt.Quantize(bad, unsafe.Pointer(&v)) })
}

func TestRoundTripAllocatesNothingInSteadyState(t *testing.T) {
	ts := newTestSchema(t)
	var rt netsync.RoundTrip
	g := testGhost{Pos: tPos{1.5, 2.5, -3.25}, Vel: tVel{1, 2}, Health: tHealth{HP: 9, Armor: 30, Alive: true}, Team: tTeam{2}}
	g.Type = uint16(ts.Player)
	vals := g.values(ts)
	other := g
	ovals := other.values(ts)
	gt, _ := ts.GhostType(ts.Player)
	run := func() {
		for i, p := range vals {
			rt.Quantize(ts.Codec(gt.Components[i]), p)
			if !rt.Equal(ts.Codec(gt.Components[i]), p, ovals[i]) {
				panic("quantized value differs from the original")
			}
		}
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(100, run))
}
