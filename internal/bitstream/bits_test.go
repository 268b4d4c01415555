package bitstream_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// refBits extracts n bits starting at bit pos of p, one bit at a time: an
// independent oracle for the reader's word-at-a-time path.
func refBits(p []byte, pos, n int) uint64 {
	var v uint64
	for i := 0; i < n; i++ {
		bit := pos + i
		v |= uint64(p[bit/8]>>(bit%8)&1) << i
	}
	return v
}

func TestWriteBitsGolden(t *testing.T) {
	// Pins the wire layout: least significant bit first, values low bit first.
	var w bitstream.Writer
	w.WriteBits(0b101, 3)
	w.WriteBool(true)
	w.WriteBits(0xABC, 12)
	w.WriteBits(0x1_2345_6789_ABCD, 49)
	w.WriteBits(0, 0)
	got := w.Bytes()
	want := []byte{0xCD, 0xAB, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01}
	require.Equal(t, want, got, "Bytes() = % x, want % x", got, want)
	require.Equal(t, 65, w.BitLen(), "BitLen()")
}

func TestWriteBitsIgnoresHighBits(t *testing.T) {
	var w bitstream.Writer
	w.WriteBits(math.MaxUint64, 3)
	w.WriteBits(0, 5)
	got := w.Bytes()
	require.Equal(t, []byte{0x07}, got, "Bytes() = % x, want 07", got)
}

func TestWriteBitsPanicsOnBadWidth(t *testing.T) {
	for _, n := range []int{-1, 65, math.MinInt, math.MaxInt} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				assert.Contains(t, msg, "0..64", "WriteBits(_, %d) panic = %q, want a message naming 0..64", n, msg)
			}()
			var w bitstream.Writer
			w.WriteBits(1, n)
		}()
	}
}

func TestRoundTripEveryWidth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 64))
	const perWidth = 50
	var w bitstream.Writer
	var want [][2]uint64 // width, value
	for n := 0; n <= 64; n++ {
		for range perWidth {
			v := rng.Uint64() & (uint64(1)<<n - 1)
			w.WriteBits(v, n)
			want = append(want, [2]uint64{uint64(n), v})
		}
	}
	totalBits := perWidth * 64 * 65 / 2
	require.Equal(t, totalBits, w.BitLen(), "BitLen()")
	buf := w.Bytes()
	require.Len(t, buf, (totalBits+7)/8, "len(Bytes())")
	var r bitstream.Reader
	r.Reset(buf)
	for i, nv := range want {
		got, err := r.ReadBits(int(nv[0]))
		require.NoError(t, err, "value %d: ReadBits(%d) = %#x; want %#x", i, nv[0], got, nv[1])
		require.Equal(t, nv[1], got, "value %d: ReadBits(%d) = %#x; want %#x", i, nv[0], got, nv[1])
	}
	require.Equal(t, len(buf)*8-totalBits, r.Remaining(), "Remaining()")
}

// TestRoundTripMixed writes a seeded random mix of every kind of value at
// every alignment and reads it back.
func TestRoundTripMixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 7))
	type item struct {
		kind int
		u    uint64
		n    int
		b    []byte
	}
	items := make([]item, 5000)
	var w bitstream.Writer
	for i := range items {
		it := item{kind: rng.IntN(6)}
		switch it.kind {
		case 0:
			it.n = rng.IntN(65)
			it.u = rng.Uint64() & (uint64(1)<<it.n - 1)
			w.WriteBits(it.u, it.n)
		case 1:
			it.u = rng.Uint64N(2)
			w.WriteBool(it.u == 1)
		case 2:
			it.u = rng.Uint64() >> rng.IntN(64)
			w.WriteUvarint(it.u)
		case 3:
			it.u = rng.Uint64() >> rng.IntN(64)
			w.WriteVarint(int64(it.u))
		case 4:
			it.u = uint64(rng.Uint32())
			w.WriteFloat32(math.Float32frombits(uint32(it.u)))
		case 5:
			it.b = make([]byte, rng.IntN(20))
			for j := range it.b {
				it.b[j] = byte(rng.Uint32())
			}
			w.WriteBytes(it.b)
		}
		items[i] = it
	}
	var r bitstream.Reader
	r.Reset(w.Bytes())
	for i, it := range items {
		var got uint64
		var gotBytes []byte
		var err error
		switch it.kind {
		case 0:
			got, err = r.ReadBits(it.n)
		case 1:
			var b bool
			b, err = r.ReadBool()
			if b {
				got = 1
			}
		case 2:
			got, err = r.ReadUvarint()
		case 3:
			var v int64
			v, err = r.ReadVarint()
			got = uint64(v)
		case 4:
			var f float32
			f, err = r.ReadFloat32()
			got = uint64(math.Float32bits(f))
		case 5:
			gotBytes, err = r.ReadBytes(len(it.b), nil)
			// bytes.Equal, as nil and empty are both no bytes.
			require.True(t, bytes.Equal(gotBytes, it.b), "item %d: ReadBytes = % x, want % x", i, gotBytes, it.b)
		}
		require.NoError(t, err, "item %d (kind %d): got %#x; want %#x", i, it.kind, got, it.u)
		require.Equal(t, it.u, got, "item %d (kind %d): got %#x; want %#x", i, it.kind, got, it.u)
	}
	require.Less(t, r.Remaining(), 8, "Remaining() after reading everything")
}

func TestUvarintMatchesBinaryWhenAligned(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<56 - 1, 1 << 63, math.MaxUint64} {
		var w bitstream.Writer
		w.WriteUvarint(v)
		want := binary.AppendUvarint(nil, v)
		got := w.Bytes()
		assert.Equal(t, want, got, "WriteUvarint(%d) = % x, want % x", v, got, want)
		assert.Equal(t, 8*len(want), w.BitLen(), "WriteUvarint(%d) BitLen", v)
	}
}

func TestVarintZigzag(t *testing.T) {
	tests := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0x00}},
		{-1, []byte{0x01}},
		{1, []byte{0x02}},
		{-64, []byte{0x7f}},
		{64, []byte{0x80, 0x01}},
		{math.MaxInt64, binary.AppendUvarint(nil, math.MaxUint64-1)},
		{math.MinInt64, binary.AppendUvarint(nil, math.MaxUint64)},
	}
	for _, tt := range tests {
		var w bitstream.Writer
		w.WriteBool(true) // misalign, to exercise unaligned varints
		w.WriteVarint(tt.v)
		var r bitstream.Reader
		r.Reset(w.Bytes())
		_, err := r.ReadBool()
		require.NoError(t, err)
		got, err := r.ReadVarint()
		assert.NoError(t, err, "ReadVarint() = %d; want %d", got, tt.v)
		assert.Equal(t, tt.v, got, "ReadVarint() = %d; want %d", got, tt.v)
		var want bitstream.Writer
		want.WriteBool(true)
		want.WriteBytes(tt.want)
		assert.Equal(t, want.Bytes(), w.Bytes(), "WriteVarint(%d) = % x, want % x", tt.v, w.Bytes(), want.Bytes())
	}
}

func TestReadUvarintRejects(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    error
		message string
	}{
		{"empty", nil, bitstream.ErrShortBuffer, "reading 8 bits at bit 0 of 0"},
		{"truncated", []byte{0x80}, bitstream.ErrShortBuffer, "reading 8 bits at bit 8 of 8"},
		{"non-minimal", []byte{0x80, 0x00}, bitstream.ErrMalformed, "ends in a zero group after 2 groups"},
		{"non-minimal 10 groups", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, bitstream.ErrMalformed, "zero group after 10 groups"},
		{"65 bits", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, bitstream.ErrMalformed, "last group 0x2; group 10 must be 0x00 or 0x01"},
		{"11 groups", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x01}, bitstream.ErrMalformed, "last group 0x81"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r bitstream.Reader
			r.Reset(tt.data)
			got, err := r.ReadUvarint()
			require.ErrorIs(t, err, tt.want, "ReadUvarint() = %d, %v; want 0 and an error wrapping %v", got, err, tt.want)
			require.Equal(t, uint64(0), got, "ReadUvarint() = %d, %v; want 0 and an error wrapping %v", got, err, tt.want)
			assert.Contains(t, err.Error(), tt.message)
			assert.Equal(t, 8*len(tt.data), r.Remaining(), "Remaining() after failed read (position unchanged)")
		})
	}
}

func TestReadUvarintMaximum(t *testing.T) {
	var r bitstream.Reader
	r.Reset([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	got, err := r.ReadUvarint()
	require.NoError(t, err, "ReadUvarint() = %d; want MaxUint64", got)
	require.Equal(t, uint64(math.MaxUint64), got, "ReadUvarint() = %d; want MaxUint64", got)
}

func TestReadBitsErrors(t *testing.T) {
	tests := []struct {
		n       int
		want    error
		message string
	}{
		{-1, bitstream.ErrOutOfRange, "netsync: reading -1 bits at bit 0: n must be in 0..64: value out of range"},
		{65, bitstream.ErrOutOfRange, "netsync: reading 65 bits at bit 0: n must be in 0..64"},
		{17, bitstream.ErrShortBuffer, "netsync: reading 17 bits at bit 0 of 16: short buffer"},
	}
	for _, tt := range tests {
		var r bitstream.Reader
		r.Reset([]byte{1, 2})
		got, err := r.ReadBits(tt.n)
		if !assert.ErrorIs(t, err, tt.want, "ReadBits(%d) = %d, %v; want 0 and an error wrapping %v", tt.n, got, err, tt.want) ||
			!assert.Equal(t, uint64(0), got, "ReadBits(%d) = %d, %v; want 0 and an error wrapping %v", tt.n, got, err, tt.want) {
			continue
		}
		assert.Contains(t, err.Error(), tt.message, "ReadBits(%d) error", tt.n)
	}
}

func TestReadErrorIsSticky(t *testing.T) {
	var r bitstream.Reader
	r.Reset([]byte{0xff})
	_, err := r.ReadBits(5)
	require.NoError(t, err)
	_, first := r.ReadBits(4)
	require.ErrorIs(t, first, bitstream.ErrShortBuffer, "ReadBits(4) with 3 bits left")
	require.True(t, r.Err() == first, "Err() = %v, want the first error %v", r.Err(), first)
	// Each of these would succeed on a fresh reader with 3 bits left.
	_, err1 := r.ReadBits(1)
	_, err2 := r.ReadBool()
	_, err3 := r.ReadBytes(0, nil)
	_, err4 := r.ReadBits(0)
	for i, err := range []error{err1, err2, err3, err4} {
		assert.True(t, err == first, "read %d after the error returned %v, want the same error %v", i, err, first)
	}
	assert.Equal(t, 3, r.Remaining(), "Remaining(): failed reads must not move")
	r.Reset([]byte{0xff})
	assert.NoError(t, r.Err(), "Err() after Reset")
}

func TestReadBytes(t *testing.T) {
	data := []byte{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 0x11, 0x22, 0x33}
	for offset := 0; offset < 8; offset++ {
		var r bitstream.Reader
		r.Reset(data)
		_, err := r.ReadBits(offset)
		require.NoError(t, err)
		n := (len(data)*8 - offset) / 8
		dst := []byte{0xaa}
		got, err := r.ReadBytes(n, dst)
		require.NoError(t, err, "offset %d: ReadBytes(%d)", offset, n)
		require.True(t, got[0] == 0xaa && len(got) == n+1, "offset %d: ReadBytes did not append to dst: % x", offset, got)
		for i, b := range got[1:] {
			require.Equal(t, byte(refBits(data, offset+8*i, 8)), b, "offset %d: byte %d", offset, i)
		}
		require.Equal(t, (len(data)*8-offset)%8, r.Remaining(), "offset %d: Remaining()", offset)
	}
}

func TestReadBytesRefusesHostileLength(t *testing.T) {
	tests := []struct {
		n       int
		want    error
		message string
	}{
		{3, bitstream.ErrShortBuffer, "netsync: reading 3 bytes at bit 1 of 24: only 23 bits remain"},
		{math.MaxInt, bitstream.ErrShortBuffer, "only 23 bits remain"},
		{-1, bitstream.ErrOutOfRange, "reading -1 bytes at bit 1: n must be at least 0"},
	}
	for _, tt := range tests {
		var r bitstream.Reader
		r.Reset([]byte{1, 2, 3})
		_, err := r.ReadBool()
		require.NoError(t, err)
		dst := make([]byte, 2, 4)
		got, err := r.ReadBytes(tt.n, dst)
		assert.ErrorIs(t, err, tt.want, "ReadBytes(%d) error = %v, want %v containing %q", tt.n, err, tt.want, tt.message)
		assert.ErrorContains(t, err, tt.message, "ReadBytes(%d) error = %v, want %v containing %q", tt.n, err, tt.want, tt.message)
		assert.True(t, len(got) == 2 && cap(got) == 4 && &got[0] == &dst[0], "ReadBytes(%d) returned len %d cap %d, want dst unchanged", tt.n, len(got), cap(got))
	}
}

func TestBytesMidStream(t *testing.T) {
	var w bitstream.Writer
	w.Reset(make([]byte, 0, 16))
	w.WriteBits(0x5, 4)
	first := w.Bytes()
	require.Equal(t, []byte{0x05}, first, "first Bytes() = % x, want 05", first)
	w.WriteBits(0xA, 4)
	w.WriteBits(0xFFFF_FFFF_FFFF_FFFF, 64)
	w.WriteBits(0x3, 2)
	want := []byte{0xA5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03}
	got := w.Bytes()
	require.Equal(t, want, got, "second Bytes() = % x, want % x", got, want)
}

func TestResetReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 32)
	var w bitstream.Writer
	w.Reset(buf)
	w.WriteBits(0xFF, 8)
	w.Reset(buf)
	w.WriteBits(0x01, 8)
	got := w.Bytes()
	require.Equal(t, []byte{0x01}, got, "after Reset, Bytes() = % x; want 01 written into the caller's buffer", got)
	require.True(t, &got[0] == &buf[:1][0], "after Reset, Bytes() = % x; want 01 written into the caller's buffer", got)
}

func TestWriterAndReaderDoNotAllocate(t *testing.T) {
	payload := []byte("0123456789abcdef")
	var w bitstream.Writer
	var r bitstream.Reader
	// 3+64+1+80+80+32+128 bits = 388 bits = 49 bytes: exactly enough capacity.
	buf := make([]byte, 0, 49)
	dst := make([]byte, 0, len(payload))
	allocs := testing.AllocsPerRun(100, func() {
		w.Reset(buf)
		w.WriteBits(5, 3)
		w.WriteBits(math.MaxUint64, 64)
		w.WriteBool(true)
		w.WriteUvarint(math.MaxUint64)
		w.WriteVarint(math.MinInt64)
		w.WriteFloat32(1.5)
		w.WriteBytes(payload)
		r.Reset(w.Bytes())
		_, _ = r.ReadBits(3)
		_, _ = r.ReadBits(64)
		_, _ = r.ReadBool()
		_, _ = r.ReadUvarint()
		_, _ = r.ReadVarint()
		_, _ = r.ReadFloat32()
		dst, _ = r.ReadBytes(len(payload), dst[:0])
	})
	require.Zero(t, allocs, "write and read allocations per run")
	require.NoError(t, r.Err(), "round trip failed: bytes %q, BitLen %d", dst, w.BitLen())
	require.True(t, bytes.Equal(dst, payload), "round trip failed: bytes %q, BitLen %d", dst, w.BitLen())
	require.Equal(t, 388, w.BitLen(), "round trip failed: bytes %q, BitLen %d", dst, w.BitLen())
}

func TestZeroReader(t *testing.T) {
	var r bitstream.Reader
	require.Equal(t, 0, r.Remaining(), "Remaining()")
	v, err := r.ReadBits(0)
	require.NoError(t, err, "ReadBits(0) = %d; want 0, nil", v)
	require.Equal(t, uint64(0), v, "ReadBits(0)")
	_, err = r.ReadBool()
	require.ErrorIs(t, err, bitstream.ErrShortBuffer, "ReadBool()")
}

func TestFloat32BitExact(t *testing.T) {
	values := []float32{0, float32(math.Copysign(0, -1)), 1.5, math.MaxFloat32, math.SmallestNonzeroFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00001), math.Float32frombits(0xff800123)}
	var w bitstream.Writer
	w.WriteBool(false)
	for _, f := range values {
		w.WriteFloat32(f)
	}
	var r bitstream.Reader
	r.Reset(w.Bytes())
	_, err := r.ReadBool()
	require.NoError(t, err)
	for _, f := range values {
		got, err := r.ReadFloat32()
		assert.NoError(t, err, "ReadFloat32() = %#x; want %#x", math.Float32bits(got), math.Float32bits(f))
		assert.Equal(t, math.Float32bits(f), math.Float32bits(got), "ReadFloat32() = %#x; want %#x", math.Float32bits(got), math.Float32bits(f))
	}

}

// bitsEqual reports whether n bits of a from bit aOff equal n bits of b from
// bit bOff.
func bitsEqual(a []byte, aOff int, b []byte, bOff, n int) bool {
	for i := 0; i < n; i++ {
		if refBits(a, aOff+i, 1) != refBits(b, bOff+i, 1) {
			return false
		}
	}
	return true
}

// FuzzBitReader runs a sequence of reads, derived from ops, over arbitrary
// data. Each pair of op bytes is a read kind and its argument. It checks that
// no read panics or goes past the end, that values match a bit-at-a-time
// oracle, that varints are canonical, and that errors are sticky.
func FuzzBitReader(f *testing.F) {
	var w bitstream.Writer
	w.WriteBits(0x1234, 13)
	w.WriteUvarint(300)
	w.WriteVarint(-7)
	w.WriteFloat32(1.5)
	w.WriteBytes([]byte("hi"))
	w.WriteBool(true)
	f.Add(w.Bytes(), []byte{0, 13, 2, 0, 3, 0, 4, 0, 5, 2, 1, 0})
	f.Add([]byte{}, []byte{0, 0, 1, 0, 5, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, []byte{2, 0, 1, 0})
	f.Add([]byte{0x80, 0x00, 0x01}, []byte{2, 0, 0, 0x40, 0, 0xff, 0x85, 1})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, []byte{1, 0, 0, 64, 5, 2, 0, 7})
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		// Spare capacity full of ones: a read past len(data) would show as a
		// value the oracle disagrees with.
		buf := make([]byte, len(data), len(data)+16)
		copy(buf, data)
		for i := len(data); i < cap(buf); i++ {
			buf[:cap(buf)][i] = 0xff
		}
		var r bitstream.Reader
		r.Reset(buf)
		total := 8 * len(data)
		pos := 0
		var sticky error
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], ops[i+1]
			n := int(int8(arg))
			if op&0x80 != 0 {
				n = math.MaxInt - int(arg) // a hostile size
			}
			before := r.Remaining()
			var err error
			want := -1 // bits a successful read consumes
			switch op % 6 {
			case 0:
				var v uint64
				v, err = r.ReadBits(n)
				if err == nil {
					require.True(t, n >= 0 && n <= 64, "ReadBits(%d) succeeded", n)
					require.Equal(t, refBits(data, pos, n), v, "ReadBits(%d) at bit %d", n, pos)
					want = n
				}
			case 1:
				var b bool
				b, err = r.ReadBool()
				if err == nil {
					require.Equal(t, refBits(data, pos, 1) == 1, b, "ReadBool() at bit %d = %v, oracle disagrees", pos, b)
					want = 1
				}
			case 2, 3:
				var ew bitstream.Writer
				if op%6 == 2 {
					var v uint64
					v, err = r.ReadUvarint()
					ew.WriteUvarint(v)
				} else {
					var v int64
					v, err = r.ReadVarint()
					ew.WriteVarint(v)
				}
				if err == nil {
					// Canonical: the value's own encoding is exactly what was read.
					want = ew.BitLen()
					require.True(t, pos+want <= total && bitsEqual(data, pos, ew.Bytes(), 0, want), "varint at bit %d decoded to a value whose encoding differs from the input", pos)
				}
			case 4:
				var v float32
				v, err = r.ReadFloat32()
				if err == nil {
					require.Equal(t, refBits(data, pos, 32), uint64(math.Float32bits(v)), "ReadFloat32() at bit %d", pos)
					want = 32
				}
			case 5:
				dst := []byte{0xaa}
				var got []byte
				got, err = r.ReadBytes(n, dst)
				if err == nil {
					require.True(t, len(got) == n+1 && got[0] == 0xaa, "ReadBytes(%d) returned %d bytes, want %d after dst", n, len(got)-1, n)
					for j, b := range got[1:] {
						require.Equal(t, refBits(data, pos+8*j, 8), uint64(b), "ReadBytes(%d) byte %d", n, j)
					}
					want = 8 * n
				} else {
					require.Len(t, got, 1, "failed ReadBytes(%d) changed dst to length %d", n, len(got))
				}
			}
			after := r.Remaining()
			require.GreaterOrEqual(t, after, 0, "Remaining()")
			if err != nil {
				require.True(t, sticky == nil || err == sticky, "read after error %v returned a different error %v", sticky, err)
				require.True(t, errors.Is(err, bitstream.ErrShortBuffer) || errors.Is(err, bitstream.ErrMalformed) || errors.Is(err, bitstream.ErrOutOfRange), "error %v wraps no netsync sentinel", err)
				require.True(t, r.Err() == err, "Err() = %v, want %v", r.Err(), err)
				require.Equal(t, before, after, "failed read moved from %d to %d bits remaining", before, after)
				sticky = err
				continue
			}
			require.NoError(t, sticky, "read succeeded after error")
			require.Equal(t, want, before-after, "read (op %d) consumed bits", op%6)
			pos += want
			require.Equal(t, total, pos+after, "position %d + remaining %d != %d bits", pos, after, total)

		}
	})
}

// CopyBits splices any bit range of one stream into another at any bit
// position, a word boundary and a byte-aligned source included, and
// writing goes on after it: what it writes reads back as the fields the
// source held.
func TestCopyBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	for range 500 {
		var src bitstream.Writer
		var widths []int
		var values []uint64
		for range 1 + rng.IntN(40) {
			n := 1 + rng.IntN(64)
			v := rng.Uint64() >> (64 - n)
			src.WriteBits(v, n)
			widths, values = append(widths, n), append(values, v)
		}
		b := src.Bytes()
		// Copy fields [from, to) after a prefix of 0..7 bits.
		from := rng.IntN(len(widths))
		if rng.IntN(4) == 0 {
			from = 0 // from a byte boundary
		}
		to := from + 1 + rng.IntN(len(widths)-from)
		off, n := 0, 0
		for i := range to {
			if i < from {
				off += widths[i]
			} else {
				n += widths[i]
			}
		}
		var dst bitstream.Writer
		lead := rng.IntN(9)
		switch rng.IntN(3) {
		case 0:
			lead = 64 * rng.IntN(2) // at a word boundary
		case 1:
			lead = rng.IntN(200) // any bit of a pending word
		}
		for k := lead; k > 0; k -= 64 {
			dst.WriteBits(0x5555555555555555, min(k, 64))
		}
		dst.CopyBits(b, off, n)
		dst.WriteBits(0x2b, 7) // and the writing goes on after it
		require.Equal(t, lead+n+7, dst.BitLen())
		var r bitstream.Reader
		r.Reset(dst.Bytes())
		for k := lead; k > 0; k -= 64 {
			_, _ = r.ReadBits(min(k, 64))
		}
		for i := from; i < to; i++ {
			v, err := r.ReadBits(widths[i])
			require.NoError(t, err)
			require.Equal(t, values[i], v, "field %d of %d bits", i, widths[i])
		}
		v, err := r.ReadBits(7)
		require.NoError(t, err)
		require.Equal(t, uint64(0x2b), v)
	}
	var w bitstream.Writer
	assert.Panics(t, func() { w.CopyBits([]byte{1}, 1, 8) }, "past the end")
	assert.Panics(t, func() { w.CopyBits([]byte{1}, -1, 1) }, "negative offset")
	assert.Panics(t, func() { w.CopyBits([]byte{1}, 0, -1) }, "negative length")
	w.CopyBits(nil, 0, 0)
	assert.Zero(t, w.BitLen())
}

// Truncate drops the bits after n: what follows reads as if they had
// never been written, across word boundaries too.
func TestWriterTruncate(t *testing.T) {
	for _, n := range []int{0, 1, 7, 63, 64, 65, 127, 128, 150} {
		var w bitstream.Writer
		for i := range 200 {
			w.WriteBits(uint64(i*7+3), 11)
		}
		orig := append([]byte(nil), w.Bytes()...)
		w.Truncate(n)
		require.Equal(t, n, w.BitLen())
		w.WriteBits(0x5a5, 13)
		var ref bitstream.Writer
		var r bitstream.Reader
		r.Reset(orig) // the first n bits, read from what was written before
		for left := n; left > 0; {
			k := min(left, 64)
			v, err := r.ReadBits(k)
			require.NoError(t, err)
			ref.WriteBits(v, k)
			left -= k
		}
		ref.WriteBits(0x5a5, 13)
		require.Equal(t, ref.Bytes(), w.Bytes(), "truncated to %d bits", n)
	}
	var w bitstream.Writer
	w.WriteBits(1, 5)
	require.Panics(t, func() { w.Truncate(6) })
	require.Panics(t, func() { w.Truncate(-1) })
}

// Grow makes room for the bytes asked: writing them allocates nothing,
// and Room reports no more than that room.
func TestWriterGrowMakesRoom(t *testing.T) {
	var w bitstream.Writer
	w.WriteBits(0b101, 3) // a partial word pending
	w.Grow(100)
	require.GreaterOrEqual(t, w.Room(), 100)
	allocs := testing.AllocsPerRun(1, func() {
		w.Reset(w.Bytes()[:0])
		w.WriteBits(0b101, 3)
		for range w.Room() {
			w.WriteBits(0xa5, 8)
		}
		_ = w.Bytes()
	})
	assert.Zero(t, allocs)
	w.Grow(0)
	w.Grow(-1) // nothing
}

// copyBitsOracle checks CopyBits(src, off, n) after lead pending bits
// against a copy made one bit at a time, and that writing goes on after
// it: the bits, the length, and the zero padding of the last byte
// (pending bits above the copy's would corrupt the next write).
func copyBitsOracle(t *testing.T, src []byte, lead, off, n int) {
	t.Helper()
	var w bitstream.Writer
	w.Reset(make([]byte, 0, 4)) // grown by the copy, as a snapshot's buffer is
	for k := lead; k > 0; k -= 64 {
		w.WriteBits(0xa5a5a5a5a5a5a5a5, min(k, 64))
	}
	w.CopyBits(src, off, n)
	require.Equal(t, lead+n, w.BitLen(), "lead %d, bits %d..%d of %d bytes", lead, off, off+n, len(src))
	got := w.Bytes()
	require.Len(t, got, (lead+n+7)/8)
	for i := 0; i < n; i++ {
		if refBits(got, lead+i, 1) != refBits(src, off+i, 1) {
			t.Fatalf("lead %d, bits %d..%d of %d bytes: bit %d differs", lead, off, off+n, len(src), i)
		}
	}
	if end := lead + n; end%8 != 0 {
		require.Zero(t, got[end/8]>>(end%8), "lead %d, bits %d..%d: padding after the copy", lead, off, off+n)
	}
	w.WriteBits(0x1ffff, 17)
	var r bitstream.Reader
	r.Reset(w.Bytes())
	for k := lead + n; k > 0; k -= 64 {
		_, _ = r.ReadBits(min(k, 64))
	}
	v, err := r.ReadBits(17)
	require.NoError(t, err)
	require.Equal(t, uint64(0x1ffff), v, "lead %d, bits %d..%d: the write after the copy", lead, off, off+n)
}

// CopyBits writes what a bit-at-a-time copy does for every pending bit
// count (0..63 and past a whole word), every source shift, lengths on
// either side of word boundaries up to 9 words (and 1,000 bits), and a
// source that ends with the copy or runs on (a word may then read a byte
// past the copy) or is shorter than a word.
func TestCopyBitsEveryAlignment(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	lengths := []int{0, 1, 7, 8, 9, 55, 56, 57, 63, 64, 65, 71, 72, 120, 127, 128, 129, 191, 192, 193, 255, 256, 257, 300,
		319, 320, 321, 383, 384, 385, 447, 448, 449, 511, 512, 513, 575, 576, 577, 1000}
	for lead := range 72 {
		for shift := range 16 {
			for _, n := range lengths {
				for _, spare := range []int{0, 1, 9} {
					src := make([]byte, (shift+n+7)/8+spare)
					for i := range src {
						src[i] = byte(rng.Uint32())
					}
					copyBitsOracle(t, src, lead, shift, n)
				}
			}
		}
	}
}

// FuzzCopyBits compares CopyBits with a bit-at-a-time copy for any source,
// pending bit count and bit range.
func FuzzCopyBits(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, uint8(5), uint16(3), uint16(120))
	f.Add([]byte{0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff}, uint8(0), uint16(0), uint16(72))
	f.Add([]byte{0x80}, uint8(63), uint16(7), uint16(1))
	f.Fuzz(func(t *testing.T, src []byte, lead uint8, off, n uint16) {
		if len(src) == 0 {
			copyBitsOracle(t, src, int(lead), 0, 0)
			return
		}
		o := int(off) % (8 * len(src))
		copyBitsOracle(t, src, int(lead), o, int(n)%(8*len(src)-o+1))
	})
}

// Extract reads back, at any offset and width, exactly what a reader
// reads there.
func TestExtract(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	var w bitstream.Writer
	var widths []int
	for range 300 {
		n := rng.IntN(65)
		w.WriteBits(rng.Uint64(), n)
		widths = append(widths, n)
	}
	buf := w.Bytes()
	var r bitstream.Reader
	r.Reset(buf)
	off := 0
	for _, n := range widths {
		want, err := r.ReadBits(n)
		require.NoError(t, err)
		require.Equal(t, want, bitstream.Extract(buf, off, n), "bits %d..%d", off, off+n)
		off += n
	}
	require.Equal(t, uint64(0b101), bitstream.Extract([]byte{0b1010}, 1, 3), "a source shorter than a word")
	require.Panics(t, func() { bitstream.Extract(buf, len(buf)*8-3, 4) }, "past the end")
	require.Panics(t, func() { bitstream.Extract(buf, 0, 65) }, "wider than a word")
}
