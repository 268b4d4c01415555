package codec

import (
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/bitstream"
)

type decodeProbe struct {
	F float32
	R float32
	I int16
}

var probeQ = Range(-1, 1, 0.5) // codes 0..4 in 3 bits

func (v *decodeProbe) Serialize(s *Stream) {
	s.Float(&v.F, probeQ)
	s.Float32(&v.R)
	Int(s, &v.I, -3, 3) // codes 0..6 in 3 bits
}

func TestStreamDecodeRefusesWhatNoEncoderWrites(t *testing.T) {
	var b SchemaBuilder
	id := b.AddComponent(reflect.TypeFor[decodeProbe](), func(p unsafe.Pointer, s *Stream) { (*decodeProbe)(p).Serialize(s) })
	s, err := b.Build()
	require.NoError(t, err)
	decode := func(f uint64, r float32, i uint64) error {
		var w bitstream.Writer
		w.WriteBits(f, 3)
		w.WriteFloat32(r)
		w.WriteBits(i, 3)
		var rd bitstream.Reader
		rd.Reset(w.Bytes())
		var st Stream
		var v decodeProbe
		return s.Decode(&st, id, &rd, unsafe.Pointer(&v))
	}
	require.NoError(t, decode(4, 1.5, 6))
	for name, tt := range map[string]struct {
		f    uint64
		r    float32
		i    uint64
		text string
	}{
		"float code beyond the range": {5, 0, 0, "code 5 out of range 0..4"},
		"NaN":                         {0, float32(math.NaN()), 0, "not finite"},
		"infinity":                    {0, float32(math.Inf(-1)), 0, "not finite"},
		"integer beyond the range":    {0, 0, 7, "integer 4 outside -3..3"},
	} {
		err := decode(tt.f, tt.r, tt.i)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, bitstream.ErrOutOfRange, name)
		assert.Contains(t, err.Error(), tt.text, name)
	}
}

// TestQuantizerMovesTheBaseOnlyOffTheGrid checks which ranges get a base
// other than min: those holding 0 off the grid from min, and no others, and
// that a moved base is a multiple of the resolution within half a step of
// min, so that 0 is a grid point.
func TestQuantizerMovesTheBaseOnlyOffTheGrid(t *testing.T) {
	for _, c := range []struct{ min, max, res float32 }{
		{-500, 500, 15.009998},
		{-1, 1, 0.0013},
		{-1, 0, 0.3},
		{-2.7, 7, 1},
		{-3.5, 2, 1},
	} {
		q := Range(c.min, c.max, c.res)
		require.NoError(t, q.Err())
		assert.True(t, q.moved, "%v: moved", c)
		z := -q.base64 / q.res64
		assert.Equal(t, math.Round(z), z, "%v: base %v is a multiple of the resolution", c, q.base64)
		assert.LessOrEqual(t, math.Abs(q.base64-float64(c.min)), q.res64/2, "%v: base %v within half a step of min", c, q.base64)
		assert.Equal(t, float64(0), q.base64+z*q.res64, "%v: 0 is on the grid", c)
	}
	for _, c := range []struct{ min, max, res float32 }{
		{-500, 500, 0.01}, {-16, 16, 1.0 / 256}, {-1, 1, 1.0 / 127}, {0, 1, 0.35}, {5, 10, 1.7}, {-10, -3, 2}, {-255, 1, 1.0 / 255},
		{-0.99999994, 0.99999994, 1.0 / (1 << 23)}, // 0 half a step off, which is one float32 spacing near 1
	} {
		q := Range(c.min, c.max, c.res)
		require.NoError(t, q.Err())
		assert.False(t, q.moved, "%v: moved", c)
		assert.Equal(t, float64(c.min), q.base64, "%v: base", c)
	}
}
