package codec_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// body has a field of every kind: a 17-bit coordinate and a 12-bit angle
// (relative; the angle wraps), a tick (as it is, whatever the uptime), a
// 2-bit integer and a bool (narrow: as they are).
type body struct {
	X       float32
	Heading float32
	Fired   ecs.Tick
	Mode    uint8
	On      bool
}

var bodyX = codec.Range(-1000, 1000, 1.0/64)

func (b *body) Serialize(s *codec.Stream) {
	s.Float(&b.X, bodyX)
	s.Angle(&b.Heading, codec.Angle(12))
	s.Tick(&b.Fired)
	codec.Int(s, &b.Mode, 0, 3)
	s.Bool(&b.On)
}

func bodySchema(t *testing.T) (*codec.Schema, codec.ComponentID) {
	var b codec.SchemaBuilder
	id := wiretest.Component[body](&b)
	s, err := b.Build()
	require.NoError(t, err)
	return s, id
}

// relative codes cur relative to base and returns the bits it took and
// the value decoded from them against base.
func relative(t *testing.T, s *codec.Schema, id codec.ComponentID, cur, base *body) (int, body, error) {
	t.Helper()
	var st codec.Stream
	var wc, wb, wr bitstream.Writer
	s.Encode(&st, id, &wc, unsafe.Pointer(cur))
	s.Encode(&st, id, &wb, unsafe.Pointer(base))
	s.EncodeRelative(id, &wr, wc.Bytes(), 0, wb.Bytes(), 0)
	var r bitstream.Reader
	r.Reset(wr.Bytes())
	read, err := s.ReadRelative(id, &r, nil)
	require.NoError(t, err)
	require.Equal(t, wr.BitLen(), r.Pos(), "the reader reads what was written")
	var c codec.Coder
	var got body
	err = c.ApplyRelative(s, id, read, unsafe.Pointer(base), unsafe.Pointer(&got))
	return wr.BitLen(), got, err
}

func quantized(s *codec.Schema, id codec.ComponentID, v body) body {
	var c codec.Coder
	c.Quantize(s, id, unsafe.Pointer(&v))
	return v
}

// Every value decodes bit-identical to its quantized self against any
// baseline, near or far.
func TestRelativeRoundTrip(t *testing.T) {
	s, id := bodySchema(t)
	rng := rand.New(rand.NewPCG(3, 5))
	random := func() body {
		return body{X: rng.Float32()*2000 - 1000, Heading: rng.Float32()*8 - 4, Fired: ecs.Tick(rng.Uint32()), Mode: uint8(rng.IntN(4)), On: rng.IntN(2) == 0}
	}
	for i := range 2000 {
		base := quantized(s, id, random())
		cur := base
		switch i % 3 {
		case 0: // far
			cur = random()
		case 1: // near
			cur.X += float32(rng.IntN(64)-32) / 64
			cur.Heading += float32(rng.IntN(16)-8) * 2 * math.Pi / 4096
			cur.Fired += ecs.Tick(rng.IntN(5))
		}
		cur = quantized(s, id, cur)
		_, got, err := relative(t, s, id, &cur, &base)
		require.NoError(t, err)
		require.Equal(t, cur, got, "case %d: base %+v", i, base)
	}
}

// What moved a little costs a little: the same value costs a bit per
// wide field, a step of a few codes a quarter of the field, and a value
// far from its baseline its code and three bits.
func TestRelativeCostsWhatMoved(t *testing.T) {
	s, id := bodySchema(t)
	base := quantized(s, id, body{X: 10, Heading: 1, Fired: 100, Mode: 2, On: true})
	plain := 17 + 12 + 32 + 2 + 1

	n, _, err := relative(t, s, id, &base, &base)
	require.NoError(t, err)
	require.Equal(t, 2+32+2+1, n, "unchanged: a bit per wide field, the tick and narrow ones as they are")

	near := base
	near.X += 3.0 / 64
	near.Heading += 2 * math.Pi / 4096
	near.Fired++
	n, _, err = relative(t, s, id, &near, &base)
	require.NoError(t, err)
	require.Equal(t, (2+5)+(2+3)+32+2+1, n, "a few codes: a small class each")

	far := base
	far.X = -900
	n, _, err = relative(t, s, id, &far, &base)
	require.NoError(t, err)
	require.Equal(t, (3+17)+1+32+2+1, n, "far: the code and three bits")
	require.Less(t, n, plain+3)

	// A tick's cost does not depend on the uptime: it is as it is.
	late := base
	late.Fired = 1<<31 + 5
	n, _, err = relative(t, s, id, &late, &base)
	require.NoError(t, err)
	require.Equal(t, 2+32+2+1, n)
}

// Differences wrap: an angle crossing ±π is a small step, not the whole
// range.
func TestRelativeWraps(t *testing.T) {
	s, id := bodySchema(t)
	base := quantized(s, id, body{Heading: math.Pi - 0.001})
	cur := quantized(s, id, body{Heading: -math.Pi + 0.001})
	n, got, err := relative(t, s, id, &cur, &base)
	require.NoError(t, err)
	require.Equal(t, cur, got)
	require.Equal(t, 1+(2+3)+32+2+1, n)
}

// A difference that takes a field beyond its range is refused, naming
// the field: nothing a peer sends decodes out of range.
func TestRelativeRefusesOutOfRange(t *testing.T) {
	s, id := bodySchema(t)
	base := quantized(s, id, body{X: 1000})
	var w bitstream.Writer
	w.WriteBits(0b01|(2-1)<<2, 2+5) // X: one code up, past the top of its range
	w.WriteBits(0, 1)               // Heading: the baseline's
	w.WriteBits(0, 32)              // Fired
	w.WriteBits(0, 3)               // Mode, On
	var r bitstream.Reader
	r.Reset(w.Bytes())
	read, err := s.ReadRelative(id, &r, nil)
	require.NoError(t, err)
	var c codec.Coder
	var got body
	err = c.ApplyRelative(s, id, read, unsafe.Pointer(&base), unsafe.Pointer(&got))
	require.ErrorIs(t, err, bitstream.ErrOutOfRange)
	require.ErrorContains(t, err, "field X")

	r.Reset(w.Bytes()[:1])
	_, err = s.ReadRelative(id, &r, nil)
	require.True(t, errors.Is(err, bitstream.ErrShortBuffer), "a short record: %v", err)
}

func TestApplyRelativeAllocatesNothing(t *testing.T) {
	s, id := bodySchema(t)
	base := quantized(s, id, body{X: 5})
	read := []uint64{1, 1, 0, 0, 0}
	var c codec.Coder
	var got body
	require.NoError(t, c.ApplyRelative(s, id, read, unsafe.Pointer(&base), unsafe.Pointer(&got)))
	allocs := testing.AllocsPerRun(100, func() {
		_ = c.ApplyRelative(s, id, read, unsafe.Pointer(&base), unsafe.Pointer(&got))
	})
	require.Zero(t, allocs)
	require.Equal(t, base, got)
}
