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
// two 8-byte loads and one store per 64 bits. It panics when off or n is
// negative or off+n exceeds len(src)·8.
func (w *Writer) CopyBits(src []byte, off, n int) {
	if off < 0 || n < 0 || off+n > len(src)*8 {
		panic(fmt.Sprintf("bitstream: copy of bits %d..%d from %d bytes", off, off+n, len(src)))
	}
	if len(src) < 8 { // bitsAt loads 8 bytes
		var b [8]byte
		copy(b[:], src)
		src = b[:]
	}
	k := uint(w.nacc) & 63 // nacc is below 64: the mask tells the compiler, sparing the shifts by k a test for 64
	if n < 64-int(k) {     // it fits in the pending word
		w.acc |= bitsAt(src, off, uint(n)) & (1<<(uint(n)&63) - 1) << k
		w.nacc += n
		return
	}
	// The first 64-k bits complete the pending word (the shift drops
	// the rest); after it the writer is at a word boundary, so each word
	// is the next 64 bits of src and fewer than 64 bits remain pending.
	// The words come last: nothing has to outlive the call storing them.
	h := 64 - k
	words, r := (uint(n)-h)/64, (uint(n)-h)%64
	first := w.acc | bitsAt(src, off, h)<<k
	w.acc = bitsAt(src, off+n-int(r), r) & (1<<r - 1)
	w.nacc = int(r)
	if words == 0 {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, first)
		return
	}
	i := len(w.buf)
	if need := 8 + 8*int(words); need > cap(w.buf)-i {
		w.buf = slices.Grow(w.buf, need) // once for all the words
	}
	w.buf = w.buf[:i+8+8*int(words)]
	binary.LittleEndian.PutUint64(w.buf[i:], first)
	shiftWords(w.buf[i+8:], src, off+int(h))
}

// Extract returns the n bits (0..64) of src from bit off on, packed as
// Writer packs them: what a reader at bit off would read with
// ReadBits(n). It lets a writer of encoded fields read them back in place.
// It panics when off or n is negative, n exceeds 64, or off+n exceeds
// len(src)·8.
func Extract(src []byte, off, n int) uint64 {
	if off < 0 || n < 0 || n > 64 || off+n > len(src)*8 {
		panic(fmt.Sprintf("bitstream: extract of bits %d..%d from %d bytes", off, off+n, len(src)))
	}
	if n == 0 {
		return 0
	}
	if len(src) < 8 { // bitsAt loads 8 bytes
		var b [8]byte
		copy(b[:], src)
		src = b[:]
	}
	v := bitsAt(src, off, uint(n))
	if n < 64 {
		v &= 1<<uint(n) - 1
	}
	return v
}

// bitsAt returns a word whose low m bits (m in 0..64) are the m bits of
// src from bit p on; its higher bits are unspecified. src holds at least
// 8 bytes, and p+m is at most len(src)·8.
func bitsAt(src []byte, p int, m uint) uint64 {
	i, s := p>>3, uint(p&7)
	j := min(i, len(src)-8) // near src's end, its last 8 bytes
	v := binary.LittleEndian.Uint64(src[j:]) >> (uint(p-8*j) & 63)
	if s+m > 64 { // then byte i+8 exists, and j is i
		v |= uint64(src[i+8]) << (64 - s)
	}
	return v
}

// shiftWords stores into each 8-byte word of dst the next 64 bits of src
// from bit off on; src holds them all.
func shiftWords(dst, src []byte, off int) {
	s := uint(off & 7)
	src = src[off>>3:]
	// A word is its 8 bytes shifted down by s and the bits from its second
	// byte on shifted up by 8-s, which overlap harmlessly, so neither
	// shift reaches 64 whatever s is. Multiplying by m is the shift up,
	// without taking the shift count's register from s. Four words a
	// step (then two, then one) reslice dst and src once per four.
	m := uint64(1) << (8 - s)
	for len(src) >= 33 && len(dst) >= 32 {
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)>>s|binary.LittleEndian.Uint64(src[1:])*m)
		binary.LittleEndian.PutUint64(dst[8:], binary.LittleEndian.Uint64(src[8:])>>s|binary.LittleEndian.Uint64(src[9:])*m)
		binary.LittleEndian.PutUint64(dst[16:], binary.LittleEndian.Uint64(src[16:])>>s|binary.LittleEndian.Uint64(src[17:])*m)
		binary.LittleEndian.PutUint64(dst[24:], binary.LittleEndian.Uint64(src[24:])>>s|binary.LittleEndian.Uint64(src[25:])*m)
		dst, src = dst[32:], src[32:]
	}
	if len(src) >= 17 && len(dst) >= 16 {
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)>>s|binary.LittleEndian.Uint64(src[1:])*m)
		binary.LittleEndian.PutUint64(dst[8:], binary.LittleEndian.Uint64(src[8:])>>s|binary.LittleEndian.Uint64(src[9:])*m)
		dst, src = dst[16:], src[16:]
	}
	if len(src) >= 9 && len(dst) >= 8 {
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)>>s|binary.LittleEndian.Uint64(src[1:])*m)
		dst, src = dst[8:], src[8:]
	}
	if len(dst) >= 8 { // src ends with the last word (so s is 0): no byte past it
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src))
	}
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
