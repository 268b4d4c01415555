package codec

import (
	"fmt"
	"math"
	"math/bits"
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
)

// field describes one Stream call of a Serialize method.
type field struct {
	kind  fieldKind
	off   uintptr // offset of the field in the value
	size  uintptr // bytes of the field
	bits  int
	param [3]uint64 // what else changes the bits (ranges, resolution)
}

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
