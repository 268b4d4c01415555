package netsync

import (
	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// Serializer is implemented (on the pointer) by every replicated component
// and input type: its Serialize method is the type's one description of
// its wire form. It calls one [Stream] method per field, the same calls in
// the same order every time, and the stream decides what the calls do:
// encode, decode, quantize in place, or describe the form for the schema
// hash. So encoder and decoder cannot drift apart, and a changed range or
// precision changes the hash.
//
//	func (p *Position) Serialize(s *netsync.Stream) {
//		s.Float(&p.X, coord)
//		s.Float(&p.Y, coord)
//	}
type Serializer interface {
	Serialize(s *Stream)
}

// Stream is what a [Serializer] writes its fields to. A stream is made by
// the schema for one direction at a time; games only call its methods from
// Serialize. Errors are sticky: after the first, later calls do nothing and
// [Stream.Err] returns it.
type Stream codec.Stream

// Err returns the first error the stream met: a decoding error, or (while
// the schema describes a type) a field coded with an unconfigured or
// invalid quantizer.
func (s *Stream) Err() error { return (*codec.Stream)(s).Err() }

// Float codes a float32 through q: the value crosses the wire as q's code,
// and quantizing sets it to the nearest value of q's grid without encoding
// anything.
func (s *Stream) Float(v *float32, q Quantizer) { (*codec.Stream)(s).Float(v, codec.Quantizer(q)) }

// Float32 codes a float32 exactly, in 32 bits: for values no range bounds.
// Decoding refuses NaN and infinities.
func (s *Stream) Float32(v *float32) { (*codec.Stream)(s).Float32(v) }

// Angle codes an angle in radians through q; angles wrap.
func (s *Stream) Angle(v *float32, q AngleQuantizer) {
	(*codec.Stream)(s).Angle(v, codec.AngleQuantizer(q))
}

// Bool codes a bool in one bit.
func (s *Stream) Bool(v *bool) { (*codec.Stream)(s).Bool(v) }

// Press codes an input event that must count exactly once (see
// [components.Press]) in one bit. Quantizing makes any press a plain 1.
func (s *Stream) Press(v *components.Press) { (*codec.Stream)(s).Press(v) }

// Tick codes a tick in 32 bits: its size never grows with uptime.
func (s *Stream) Tick(v *ecs.Tick) { (*codec.Stream)(s).Tick(v) }

// Int codes an integer field known to lie in [lo, hi] in as few bits as
// the range needs. Encoding and quantizing clamp a value outside the range;
// decoding refuses a code beyond it. An empty range (lo > hi) is an error
// when the schema is built. T is any integer type of 8 to 32 bits.
func Int[T ~int8 | ~int16 | ~int32 | ~uint8 | ~uint16 | ~uint32](s *Stream, v *T, lo, hi T) {
	codec.Int((*codec.Stream)(s), v, lo, hi)
}

// Bytes codes the first *n bytes of b, for message types: *n in as many
// bits as len(b) needs, then the bytes. Encoding clamps *n to len(b);
// decoding refuses a length above len(b), fills b[:*n] and zeroes the rest,
// so a decoded value depends on the wire alone. b and n are fields of the
// value (an array and its length):
//
//	type Blob struct {
//		Data [4096]byte
//		Len  uint32
//	}
//
//	func (m *Blob) Serialize(s *netsync.Stream) { s.Bytes(m.Data[:], &m.Len) }
//
// A fixed array keeps the type plain data, so it is copied and checked as
// a component is, and bounds the message without a length to trust. A
// component or the input type may not use Bytes or Text (snapshots and
// input batches code each field in one width): Build refuses it, as a
// buffer of 0 or more than MaxMessageBytes bytes.
func (s *Stream) Bytes(b []byte, n *uint32) { (*codec.Stream)(s).Bytes(b, n) }

// Text is [Stream.Bytes] for text: UTF-8 without control characters (a
// chat line, a player's name), which a peer can show and log as it
// arrives. Encoding sends a '?' for each byte of invalid UTF-8 and a space
// for each byte of a control character (newlines and tabs included), so
// it never fails; decoding refuses text that is not valid, and the message
// with it.
func (s *Stream) Text(b []byte, n *uint32) { (*codec.Stream)(s).Text(b, n) }
