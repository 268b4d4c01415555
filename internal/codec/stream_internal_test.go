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
