package codec

import (
	"fmt"
	"math"
	"math/bits"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
)

type streamMode uint8

const (
	modeEncode streamMode = iota
	modeDecode
	modeQuantize
	modeDescribe
	modeCodes
)

// fieldKind says how a field is coded, for the schema hash and for
// diagnostics that print a field's value.
type fieldKind uint8

const (
	kindFloat fieldKind = iota + 1
	kindAngle
	kindBool
	kindPress
	kindTick
	kindInt
	kindUint
	kindFloat32
	kindBytes // a length and that many bytes: messages only (see Stream.Bytes)
	kindText  // the same, UTF-8 without control characters
)

// field describes one Stream call of a Serialize method.
type field struct {
	kind  fieldKind
	off   uintptr // offset of the field in the value
	size  uintptr // bytes of the field
	bits  int
	param [3]uint64 // what else changes the bits (ranges, resolution; the length's offset of bytes and text)
}

// variable reports whether the field's width varies with its value: such
// fields are for messages only.
func (f field) variable() bool { return f.kind == kindBytes || f.kind == kindText }

// Stream is what a netsync.Serializer writes its fields to. A stream is made by
// the schema for one direction at a time; games only call its methods from
// Serialize. Errors are sticky: after the first, later calls do nothing and
// [Stream.Err] returns it.
type Stream struct {
	mode   streamMode
	w      *bitstream.Writer
	r      *bitstream.Reader
	err    error
	base   uintptr  // modeDescribe: address of the value described
	fields []field  // modeDescribe: the calls seen
	codes  []uint64 // modeCodes: each field's code
	n      int      // calls so far: the field a decoding error is in
}

// Err returns the first error the stream met: a decoding error, or (while
// the schema describes a type) a field coded with an unconfigured or
// invalid quantizer.
func (s *Stream) Err() error { return s.err }

func (s *Stream) describe(v unsafe.Pointer, size uintptr, k fieldKind, nbits int, param [3]uint64) {
	off := uintptr(v) - s.base
	s.fields = append(s.fields, field{kind: k, off: off, size: size, bits: nbits, param: param})
}

// Float codes a float32 through q: the value crosses the wire as q's code,
// and quantizing sets it to q.Quantize(*v) without encoding anything.
func (s *Stream) Float(v *float32, q Quantizer) {
	if s.err != nil {
		return
	}
	s.n++
	switch s.mode {
	case modeEncode:
		s.w.WriteBits(uint64(q.Encode(*v)), q.nbits)
	case modeDecode:
		u, err := s.r.ReadBits(q.nbits)
		if err != nil {
			s.err = err
			return
		}
		if u > uint64(q.maxCode) {
			s.err = s.r.Fail(fmt.Errorf("netsync: quantizer code %d out of range 0..%d: %w", u, q.maxCode, bitstream.ErrOutOfRange))
			return
		}
		*v = q.decode(uint32(u))
	case modeQuantize:
		*v = q.Quantize(*v)
	case modeDescribe:
		if err := q.Err(); err != nil {
			s.err = err
			return
		}
		// A base moved off min (see Quantizer) is a different grid for the
		// same min, max and resolution: bit 32 of the first word tells it, so
		// the hash of every other range is what it was before bases moved.
		minWord := uint64(math.Float32bits(q.min))
		if q.moved {
			minWord |= 1 << 32
		}
		s.describe(unsafe.Pointer(v), 4, kindFloat, q.nbits,
			[3]uint64{minWord, uint64(math.Float32bits(q.max)), math.Float64bits(q.res64)})
	case modeCodes:
		s.codes = append(s.codes, uint64(q.Encode(*v)))
	}
}

// Float32 codes a float32 exactly, in 32 bits: for values no range bounds.
// Decoding refuses NaN and infinities.
func (s *Stream) Float32(v *float32) {
	if s.err != nil {
		return
	}
	s.n++
	switch s.mode {
	case modeEncode:
		s.w.WriteFloat32(*v)
	case modeDecode:
		f, err := s.r.ReadFloat32()
		if err != nil {
			s.err = err
			return
		}
		if f != f || math.IsInf(float64(f), 0) {
			s.err = s.r.Fail(fmt.Errorf("netsync: float %v is not finite: %w", f, bitstream.ErrOutOfRange))
			return
		}
		*v = f
	case modeDescribe:
		s.describe(unsafe.Pointer(v), 4, kindFloat32, 32, [3]uint64{})
	case modeCodes:
		s.codes = append(s.codes, uint64(math.Float32bits(*v)))
	}
}

// Angle codes an angle in radians through q; angles wrap.
func (s *Stream) Angle(v *float32, q AngleQuantizer) {
	if s.err != nil {
		return
	}
	s.n++
	switch s.mode {
	case modeEncode:
		s.w.WriteBits(uint64(q.Encode(*v)), q.nbits)
	case modeDecode:
		u, err := s.r.ReadBits(q.nbits)
		if err != nil {
			s.err = err
			return
		}
		*v = q.decode(uint32(u))
	case modeQuantize:
		*v = q.Quantize(*v)
	case modeDescribe:
		if err := q.Err(); err != nil {
			s.err = err
			return
		}
		s.describe(unsafe.Pointer(v), 4, kindAngle, q.nbits, [3]uint64{})
	case modeCodes:
		s.codes = append(s.codes, uint64(q.Encode(*v)))
	}
}

// Bool codes a bool in one bit.
func (s *Stream) Bool(v *bool) {
	if s.err != nil {
		return
	}
	s.n++
	switch s.mode {
	case modeEncode:
		s.w.WriteBool(*v)
	case modeDecode:
		b, err := s.r.ReadBool()
		if err != nil {
			s.err = err
			return
		}
		*v = b
	case modeDescribe:
		s.describe(unsafe.Pointer(v), 1, kindBool, 1, [3]uint64{})
	case modeCodes:
		s.codes = append(s.codes, b2u(*v))
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Press codes an input event that must count exactly once (see
// [components.Press]) in one bit. Quantizing makes any press a plain 1.
func (s *Stream) Press(v *components.Press) {
	if s.err != nil {
		return
	}
	s.n++
	switch s.mode {
	case modeEncode:
		s.w.WriteBool(*v != 0)
	case modeDecode:
		b, err := s.r.ReadBool()
		if err != nil {
			s.err = err
			return
		}
		*v = components.Press(b2u(b))
	case modeQuantize:
		*v = components.Press(b2u(*v != 0))
	case modeDescribe:
		s.describe(unsafe.Pointer(v), 1, kindPress, 1, [3]uint64{})
	case modeCodes:
		s.codes = append(s.codes, b2u(*v != 0))
	}
}

// Tick codes a tick in 32 bits: its size never grows with uptime.
func (s *Stream) Tick(v *ecs.Tick) {
	if s.err != nil {
		return
	}
	s.n++
	switch s.mode {
	case modeEncode:
		s.w.WriteBits(uint64(*v), 32)
	case modeDecode:
		u, err := s.r.ReadBits(32)
		if err != nil {
			s.err = err
			return
		}
		*v = ecs.Tick(u)
	case modeDescribe:
		s.describe(unsafe.Pointer(v), 4, kindTick, 32, [3]uint64{})
	case modeCodes:
		s.codes = append(s.codes, uint64(*v))
	}
}

// Integer is the integer types [Int] codes.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~uint8 | ~uint16 | ~uint32
}

// Int codes an integer field known to lie in [lo, hi] in as few bits as
// the range needs. Encoding and quantizing clamp a value outside the range;
// decoding refuses a code beyond it. An empty range (lo > hi) is an error
// when the schema is built.
func Int[T Integer](s *Stream, v *T, lo, hi T) {
	if s.err != nil {
		return
	}
	s.n++
	span := uint64(int64(hi) - int64(lo))
	nbits := bits.Len64(span)
	switch s.mode {
	case modeEncode:
		s.w.WriteBits(uint64(int64(min(hi, max(lo, *v)))-int64(lo)), nbits)
	case modeDecode:
		u, err := s.r.ReadBits(nbits)
		if err != nil {
			s.err = err
			return
		}
		if u > span {
			s.err = s.r.Fail(fmt.Errorf("netsync: integer %d outside %d..%d: %w", int64(lo)+int64(u), lo, hi, bitstream.ErrOutOfRange))
			return
		}
		*v = T(int64(lo) + int64(u))
	case modeQuantize:
		*v = min(hi, max(lo, *v))
	case modeDescribe:
		if lo > hi {
			s.err = fmt.Errorf("netsync: integer range %d..%d is empty", lo, hi)
			return
		}
		k := kindInt
		if T(0)-1 > 0 {
			k = kindUint
		}
		s.describe(unsafe.Pointer(v), unsafe.Sizeof(*v), k, nbits, [3]uint64{uint64(int64(lo)), uint64(int64(hi))})
	case modeCodes:
		s.codes = append(s.codes, uint64(int64(min(hi, max(lo, *v)))-int64(lo)))
	}
}

// MaxFieldBytes bounds the buffer of a [Stream.Bytes] or [Stream.Text]
// field: a message's fields are at most MaxMessageBytes in all.
const MaxFieldBytes = MaxMessageBytes

// Bytes codes the first *n bytes of b: *n in as many bits as len(b)
// needs, then the bytes. Encoding clamps *n to len(b); decoding refuses a
// length above len(b), fills b[:*n] and zeroes the rest of b, so a decoded
// value depends on the wire alone. b and n must be fields of the value
// described (typically an array field and its length): a schema refuses
// Bytes in a component or the input type, whose fields have one width, and
// a buffer of 0 or more than MaxFieldBytes bytes.
func (s *Stream) Bytes(b []byte, n *uint32) { s.bytes(b, n, kindBytes) }

// Text is [Stream.Bytes] for text: UTF-8 without control characters (a
// chat line, a player's name), so what a peer sends can be shown and
// logged as it is. Encoding sends a '?' for each byte of invalid UTF-8 and
// a space for each byte of a control character (newlines and tabs too),
// so the value need not be valid and encoding never fails; decoding
// refuses text that is not valid.
func (s *Stream) Text(b []byte, n *uint32) { s.bytes(b, n, kindText) }

func (s *Stream) bytes(b []byte, n *uint32, k fieldKind) {
	if s.err != nil {
		return
	}
	s.n++
	lenBits := bits.Len(uint(len(b)))
	switch s.mode {
	case modeEncode:
		m := min(int(*n), len(b))
		s.w.WriteBits(uint64(m), lenBits)
		if k == kindBytes {
			s.w.WriteBytes(b[:m])
			return
		}
		for t := b[:m]; len(t) > 0; {
			r, size := utf8.DecodeRune(t)
			switch {
			case r == utf8.RuneError && size == 1:
				s.w.WriteBits('?', 8)
			case unicode.IsControl(r):
				for range size {
					s.w.WriteBits(' ', 8)
				}
			default:
				s.w.WriteBytes(t[:size])
			}
			t = t[size:]
		}
	case modeDecode:
		u, err := s.r.ReadBits(lenBits)
		if err != nil {
			s.err = err
			return
		}
		if u > uint64(len(b)) {
			s.err = s.r.Fail(fmt.Errorf("netsync: %d bytes in a field of %d: %w", u, len(b), bitstream.ErrOutOfRange))
			return
		}
		if _, err := s.r.ReadBytes(int(u), b[:0]); err != nil {
			s.err = err
			return
		}
		if k == kindText {
			if i := badText(b[:u]); i >= 0 {
				s.err = s.r.Fail(fmt.Errorf("netsync: text has invalid UTF-8 or a control character at byte %d of %d: %w", i, u, bitstream.ErrMalformed))
				return
			}
		}
		clear(b[u:])
		*n = uint32(u)
	case modeDescribe:
		if len(b) == 0 || len(b) > MaxFieldBytes {
			s.err = fmt.Errorf("netsync: a byte field of %d bytes; allowed 1..%d", len(b), MaxFieldBytes)
			return
		}
		off := uintptr(unsafe.Pointer(n)) - s.base
		s.describe(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)), k, lenBits+8*len(b), [3]uint64{uint64(off)})
	}
}

// badText returns the offset of the first invalid UTF-8 sequence or
// control character in t, or -1.
func badText(t []byte) int {
	for i := 0; i < len(t); {
		r, size := utf8.DecodeRune(t[i:])
		if (r == utf8.RuneError && size == 1) || unicode.IsControl(r) {
			return i
		}
		i += size
	}
	return -1
}
