package codec_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// padded has padding after Flag and a field its description leaves out.
type padded struct {
	Flag  uint8
	X     float32
	Skip  uint16
	Count uint16
}

func (p *padded) Serialize(s *codec.Stream) {
	codec.Int(s, &p.Flag, 0, 3)
	s.Float(&p.X, codec.Range(-8, 8, 1.0/64))
	codec.Int(s, &p.Count, 0, 1000)
}

// AppendValue writes the described fields only, little endian: padding
// and the fields left out do not change it.
func TestAppendValueIsCanonical(t *testing.T) {
	var b codec.SchemaBuilder
	id := wiretest.Component[padded](&b)
	s, err := b.Build()
	require.NoError(t, err)
	var raw [16]byte
	for i := range raw {
		raw[i] = 0xee // garbage in the padding
	}
	p := (*padded)(unsafe.Pointer(&raw))
	p.Flag, p.X, p.Skip, p.Count = 2, 1.5, 77, 0x0102
	got := s.AppendValue(nil, id, unsafe.Pointer(p))
	assert.Equal(t, []byte{2, 0, 0, 0xc0, 0x3f, 0x02, 0x01}, got)
	q := padded{Flag: 2, X: 1.5, Skip: 9, Count: 0x0102}
	assert.Equal(t, got, s.AppendValue(nil, id, unsafe.Pointer(&q)), "another Skip and zero padding: the same bytes")
	q.X = 1.515625
	assert.NotEqual(t, got, s.AppendValue(nil, id, unsafe.Pointer(&q)))
}
