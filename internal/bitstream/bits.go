package bitstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Errors returned by decoders in this package are always wrapped with
// details (the value read, where, and what was allowed); test for them with
// [errors.Is].
var (
	// ErrShortBuffer means the data ended before the value being read.
	ErrShortBuffer = errors.New("short buffer")
	// ErrMalformed means the data holds an encoding no writer produces, such
	// as a varint longer than 64 bits.
	ErrMalformed = errors.New("malformed encoding")
	// ErrOutOfRange means a value, or a size asked of a reader, lies outside
	// the range allowed for it.
	ErrOutOfRange = errors.New("value out of range")
)

// maxVarintGroups is the number of 7-bit groups a 64-bit uvarint needs.
const maxVarintGroups = 10

// Writer appends values bit by bit into a caller-owned byte slice; it
// never allocates after Reset with a buffer of enough capacity, which is
// (BitLen()+7)/8 bytes once everything is written.
//
// Bits are packed least significant first: the first bit written becomes bit
// 0 of byte 0, and an n-bit value is written low bit first. The stream is thus
// one little-endian bit string, which lets the writer flush 64 bits with a
// single little-endian store.
//
// The zero Writer is ready to use and allocates its buffer as it grows.
type Writer struct {
	buf  []byte // whole 64-bit words written so far
	acc  uint64 // pending bits, the oldest in bit 0
	nacc int    // number of pending bits in acc, 0..63
}

// Reset discards everything written and makes the writer append into buf's
// capacity, starting at buf[:0].
func (w *Writer) Reset(buf []byte) {
	*w = Writer{buf: buf[:0]}
}

// Append resets w to write after the bytes already in buf, as append
// does: Bytes then returns buf's bytes followed by what was written.
func (w *Writer) Append(buf []byte) {
	*w = Writer{buf: buf}
}

// Grow makes room for n more bytes, so writing them allocates nothing.
func (w *Writer) Grow(n int) {
	if n > 0 {
		w.buf = slices.Grow(w.buf, n+8) // and the word a flush stores whole
	}
}

// Room returns how many more bytes can be written before the writer's
// buffer grows.
func (w *Writer) Room() int { return max(0, cap(w.buf)-len(w.buf)-w.nacc/8-8) }

// WriteBits writes the low n bits of v; higher bits of v are ignored. It costs
// O(1) whatever n is. It panics if n is outside 0..64: widths come from the
// program's codecs, never from network data, so a bad one is a bug.
func (w *Writer) WriteBits(v uint64, n int) {
	if uint(n) > 64 {
		panic(fmt.Sprintf("netsync: WriteBits of %d bits; n must be in 0..64", n))
	}
	v &= uint64(1)<<uint(n) - 1
	w.acc |= v << uint(w.nacc)
	w.nacc += n
	if w.nacc >= 64 {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, w.acc)
		w.nacc -= 64
		// The top nacc bits of v did not fit in the word just stored.
		w.acc = v >> uint(n-w.nacc)
	}
}

// WriteBool writes b as one bit, 1 for true.
func (w *Writer) WriteBool(b bool) {
	var v uint64
	if b {
		v = 1
	}
	w.WriteBits(v, 1)
}

// WriteUvarint writes v in groups of 8 bits, each holding 7 bits of v (least
// significant first) below a continuation bit that is set when another group
// follows. Values below 128 take 8 bits; the largest take 80. The groups are
// laid out like the bytes of [binary.AppendUvarint], so at a byte boundary the
// two encodings are identical, but they need not start on one. The encoding
// is minimal: it never ends in a zero group, and readers reject one that does.
func (w *Writer) WriteUvarint(v uint64) {
	for v >= 0x80 {
		w.WriteBits(v&0x7f|0x80, 8)
		v >>= 7
	}
	w.WriteBits(v, 8)
}

// WriteVarint writes v zigzag-encoded (0, -1, 1, -2, ... become 0, 1, 2,
// 3, ...) with [Writer.WriteUvarint], so small magnitudes of either sign
// stay short.
func (w *Writer) WriteVarint(v int64) {
	w.WriteUvarint(uint64(v<<1) ^ uint64(v>>63))
}

// WriteFloat32 writes the 32 raw bits of f, so every float, NaN payloads
// included, reads back bit-exactly.
func (w *Writer) WriteFloat32(f float32) {
	w.WriteBits(uint64(math.Float32bits(f)), 32)
}

// WriteBytes writes p's bytes, 8 bits each, from the current bit position: it
// does not align to a byte boundary first. It writes no length; readers must
// learn it some other way, typically from a preceding uvarint.
func (w *Writer) WriteBytes(p []byte) {
	for len(p) >= 8 {
		w.WriteBits(binary.LittleEndian.Uint64(p), 64)
		p = p[8:]
	}
	for _, b := range p {
		w.WriteBits(uint64(b), 8)
	}
}

// CopyBits writes the n bits of src that start at bit off (bit 0 is the
// lowest bit of src[0], as Writer packs them), so encoded fields can be
// spliced from one stream into another without decoding them. It costs
// one 8-byte load and store per 64 bits. It panics when off or n is
// negative or off+n exceeds len(src)·8.
func (w *Writer) CopyBits(src []byte, off, n int) {
	if off < 0 || n < 0 || off+n > len(src)*8 {
		panic(fmt.Sprintf("bitstream: copy of bits %d..%d from %d bytes", off, off+n, len(src)))
	}
	// A word at a time (see shiftWords), straight into the buffer, grown
	// once for all of them.
	if words := min(n/64, (len(src)-off>>3-1)/8); words > 0 {
		buf := slices.Grow(w.buf, 8*words+8)
		i := len(buf)
		w.acc = shiftWords(buf[i:i+8*words], src[off>>3:off>>3+8*words+1], uint(off&7), uint(w.nacc), w.acc)
		w.buf = buf[:i+8*words]
		off, n = off+64*words, n-64*words
	}
	for n > 0 { // the last bits (from the last 8 bytes a byte at a time)
		k := min(n, 56)
		i, sh := off>>3, off&7
		var v uint64
		if i+8 <= len(src) {
			v = binary.LittleEndian.Uint64(src[i:])
		} else {
			for j := 0; i+j < len(src); j++ {
				v |= uint64(src[i+j]) << (8 * j)
			}
		}
		w.WriteBits(v>>sh&(1<<k-1), k)
		off, n = off+k, n-k
	}
}

// shiftWords stores into dst, 8 bytes per word, the words made of acc's
// low k bits (0..63) followed by the bits of src from bit sh (0..7) on,
// and returns the k bits left over: src holds one byte more than dst.
// The 64 bits of each word come from an 8-byte load shifted by sh and
// the next byte's bits above them; masks stand in for the shifts by 64
// that sh or k 0 would take, so the loop has no branch but its own.
func shiftWords(dst, src []byte, sh, k uint, acc uint64) uint64 {
	hiMask, accMask := ^uint64(0), ^uint64(0)
	if sh == 0 {
		hiMask = 0
	}
	if k == 0 {
		accMask = 0
	}
	sh, k = sh&7, k&63
	for len(dst) >= 8 && len(src) >= 9 {
		v := binary.LittleEndian.Uint64(src)>>sh | uint64(src[8])<<((64-sh)&63)&hiMask
		binary.LittleEndian.PutUint64(dst, acc|v<<k)
		acc = v >> ((64 - k) & 63) & accMask
		dst, src = dst[8:], src[8:]
	}
	return acc
}

// Bytes returns everything written, the last partial byte padded with zero
// bits. Writing may continue afterwards. The result aliases the writer's
// buffer, so it is valid only until the next write or Reset.
func (w *Writer) Bytes() []byte {
	n := len(w.buf)
	out := w.buf
	for i := 0; i < w.nacc; i += 8 {
		out = append(out, byte(w.acc>>uint(i)))
	}
	// Keep any capacity append had to add, so it is not added again.
	w.buf = out[:n]
	return out
}

// Truncate drops every bit written after the first n, as if they had
// never been written. It panics when n is negative or beyond BitLen.
func (w *Writer) Truncate(n int) {
	if n < 0 || n > w.BitLen() {
		panic(fmt.Sprintf("bitstream: truncate to %d bits of %d", n, w.BitLen()))
	}
	if words := n / 64; words < len(w.buf)/8 {
		w.acc = binary.LittleEndian.Uint64(w.buf[words*8:])
		w.buf = w.buf[:words*8]
	}
	w.nacc = n - len(w.buf)*8
	w.acc &= uint64(1)<<uint(w.nacc) - 1
}

// BitLen returns the number of bits written since the last Reset.
func (w *Writer) BitLen() int {
	return len(w.buf)*8 + w.nacc
}

// Reader reads what [Writer] wrote. Every method returns an error
// instead of panicking when the data runs out or is malformed, and never
// allocates in proportion to a size read from the data. After the first error
// every read returns that same error without moving (sticky), like
// [bufio.Scanner], so a decoder may read a whole message and check [Reader.Err]
// once at the end. A read that fails does not advance the position.
//
// The zero Reader reads from an empty buffer.
type Reader struct {
	buf []byte
	pos int // bits consumed
	err error
	// tail holds the buffer's last 8 bytes (all of a shorter one),
	// little-endian, the first at byte tailAt: a read among them is a
	// shift, not a loop over bytes (small packets are mostly tail).
	tail   uint64
	tailAt int
}

// Reset makes r read buf from its first bit and clears any error. r keeps buf
// and reads it in place, so buf must not change while r reads it.
func (r *Reader) Reset(buf []byte) {
	*r = Reader{buf: buf}
	if len(buf) >= 8 {
		r.tailAt = len(buf) - 8
		r.tail = binary.LittleEndian.Uint64(buf[r.tailAt:])
		return
	}
	for j, b := range buf {
		r.tail |= uint64(b) << (8 * uint(j))
	}
}

// ReadBits reads an n-bit value, costing O(1) whatever n is. It returns an
// error wrapping [ErrOutOfRange] if n is outside 0..64 and one wrapping
// [ErrShortBuffer] if fewer than n bits remain.
func (r *Reader) ReadBits(n int) (uint64, error) {
	// One test sends every failure and values spanning nine bytes to the
	// slow path; the rest is one 64-bit load or the tail shifted.
	i := r.pos >> 3
	shift := uint(r.pos & 7)
	if r.err != nil || uint(n) > 64-uint(shift) || n > r.Remaining() {
		return r.readBitsSlow(n)
	}
	v := r.word(i) >> shift & (uint64(1)<<uint(n) - 1)
	r.pos += n
	return v, nil
}

// word returns the 64 bits from byte i on, zero past the buffer's end.
func (r *Reader) word(i int) uint64 {
	if i+8 <= len(r.buf) {
		return binary.LittleEndian.Uint64(r.buf[i:])
	}
	return r.tail >> (8 * uint(i-r.tailAt))
}

// readBitsSlow is ReadBits for errors, the last 8 bytes of the buffer and
// values that straddle 9 bytes.
func (r *Reader) readBitsSlow(n int) (uint64, error) {
	if r.err != nil {
		return 0, r.err
	}
	if uint(n) > 64 {
		return 0, r.Fail(fmt.Errorf("netsync: reading %d bits at bit %d: n must be in 0..64: %w", n, r.pos, ErrOutOfRange))
	}
	if n > r.Remaining() {
		return 0, r.Fail(fmt.Errorf("netsync: reading %d bits at bit %d of %d: %w", n, r.pos, len(r.buf)*8, ErrShortBuffer))
	}
	v := r.peek(n)
	r.pos += n
	return v, nil
}

// peek returns the next n bits without consuming them; n must be in 0..64
// and at most Remaining.
func (r *Reader) peek(n int) uint64 {
	i := r.pos >> 3
	shift := uint(r.pos & 7)
	v := r.word(i) >> shift
	if n > 64-int(shift) {
		// The value straddles a ninth byte, which exists because n bits remain.
		v |= uint64(r.buf[i+8]) << (64 - shift)
	}
	return v & (uint64(1)<<uint(n) - 1)
}

// ReadBool reads one bit as a bool. It returns an error wrapping
// [ErrShortBuffer] if no bits remain.
func (r *Reader) ReadBool() (bool, error) {
	v, err := r.ReadBits(1)
	return v == 1, err
}

// ReadUvarint reads a value written by [Writer.WriteUvarint], reading at
// most 80 bits. It returns an error wrapping [ErrShortBuffer] if the data ends
// inside the value, and one wrapping [ErrMalformed] if the value would not fit
// in 64 bits or its encoding is not minimal (ends in a zero group).
func (r *Reader) ReadUvarint() (uint64, error) {
	start := r.pos
	var v uint64
	for i := 0; ; i++ {
		g, err := r.ReadBits(8)
		if err != nil {
			r.pos = start
			return 0, err
		}
		if i == maxVarintGroups-1 && g > 1 {
			r.pos = start
			return 0, r.Fail(fmt.Errorf("netsync: uvarint at bit %d has last group %#x; group %d must be 0x00 or 0x01 to fit 64 bits: %w", start, g, maxVarintGroups, ErrMalformed))
		}
		v |= (g & 0x7f) << (7 * uint(i))
		if g < 0x80 {
			if g == 0 && i > 0 {
				r.pos = start
				return 0, r.Fail(fmt.Errorf("netsync: uvarint at bit %d ends in a zero group after %d groups; the last group must be non-zero: %w", start, i+1, ErrMalformed))
			}
			return v, nil
		}
	}
}

// ReadVarint reads a value written by [Writer.WriteVarint]; it fails as
// [Reader.ReadUvarint] does.
func (r *Reader) ReadVarint() (int64, error) {
	u, err := r.ReadUvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// ReadFloat32 reads the 32 raw bits of a float32. The result may be NaN or
// infinite; callers that need a finite value must check.
func (r *Reader) ReadFloat32() (float32, error) {
	v, err := r.ReadBits(32)
	return math.Float32frombits(uint32(v)), err
}

// ReadBytes reads n bytes written by [Writer.WriteBytes], appends them to
// dst and returns the extended slice; it allocates only if dst lacks the
// capacity. It refuses n larger than what remains (an error naming n and the
// bits left, wrapping [ErrShortBuffer]) before touching dst, so a hostile
// length can never make it allocate, and a negative n (wrapping
// [ErrOutOfRange]). On error it returns dst unchanged.
func (r *Reader) ReadBytes(n int, dst []byte) ([]byte, error) {
	if r.err != nil {
		return dst, r.err
	}
	if n < 0 {
		return dst, r.Fail(fmt.Errorf("netsync: reading %d bytes at bit %d: n must be at least 0: %w", n, r.pos, ErrOutOfRange))
	}
	if n > r.Remaining()/8 {
		return dst, r.Fail(fmt.Errorf("netsync: reading %d bytes at bit %d of %d: only %d bits remain: %w", n, r.pos, len(r.buf)*8, r.Remaining(), ErrShortBuffer))
	}
	if r.pos&7 == 0 {
		i := r.pos >> 3
		r.pos += 8 * n
		return append(dst, r.buf[i:i+n]...), nil
	}
	dst = slices.Grow(dst, n)
	for ; n >= 8; n -= 8 {
		dst = binary.LittleEndian.AppendUint64(dst, r.peek(64))
		r.pos += 64
	}
	for ; n > 0; n-- {
		dst = append(dst, byte(r.peek(8)))
		r.pos += 8
	}
	return dst, nil
}

// Remaining returns the number of unread bits; it is never negative.
func (r *Reader) Remaining() int {
	return len(r.buf)*8 - r.pos
}

// Pos returns the bits read since the last Reset: where the next value
// starts, for errors that name it.
func (r *Reader) Pos() int { return r.pos }

// Err returns the first error a read met since the last Reset, or nil.
func (r *Reader) Err() error {
	return r.err
}

// Fail records err as the reader's sticky error and returns it. Codecs
// call it when bits read fine but their value is invalid, so that the rest
// of the message is refused too.
func (r *Reader) Fail(err error) error {
	r.err = err
	return err
}
