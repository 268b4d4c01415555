package netsync

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/codec"
)

// Quantizer maps float32 values in [min, max] to integer codes in steps of
// a fixed resolution, and codes back to floats, identically on every
// machine: every value in [min, max] quantizes to within half a step of
// itself (give or take one float32 spacing near the range's largest
// magnitude), whether or not the resolution divides the range evenly;
// every decoded value lies in [min, max]; 0, when the range holds it,
// quantizes to exactly 0; and quantizing a value twice gives the same bits
// as quantizing it once, so a client predicting with quantized values
// matches the server bit for bit.
//
// The grid is min + k·resolution, its last point capped at max (it may lie
// up to half a step past max, or stop up to half a step short of it). When
// the range holds 0 and that grid misses 0 by more than float32 rounding,
// as Range(-1, 1, 0.0013) does, the grid is instead the multiples of the
// resolution, k·resolution, its first point within half a step of min and
// clamped to it, so that 0 is a grid point. Such a range codes the same
// number of steps to within one (so its Bits may differ by one from a
// min-based grid) and its schema hash marks the moved grid; builds before
// this grid rule coded those ranges from min and will be refused by the
// hash. Every other range keeps the grid min + k·resolution.
//
// Make one with [Range]. The zero Quantizer is unconfigured: a schema
// refuses a component that codes a field with it (it would encode every
// value as 0). Quantizer is a small value type: pass and copy it freely.
type Quantizer codec.Quantizer

// Range returns a Quantizer for [min, max] at the given resolution. It
// never fails: a bad configuration (bounds that are not finite, min not
// below max, a resolution outside (0, max−min] or finer than twice
// float32's spacing near the largest magnitude in range) is kept in the
// quantizer and refused with the component's name when a schema is built
// with it. So
// games declare quantizers as package variables without a must helper:
//
//	var coord = netsync.Range(-1000, 1000, 1.0/64)
func Range(min, max, resolution float32) Quantizer {
	return Quantizer(codec.Range(min, max, resolution))
}

// Quantize returns the value a peer will see after v crosses the wire: v
// clamped to [min, max] and rounded to the nearest step. The server
// applies it to its own state at the end of each tick so that client and
// server agree bit-exactly; a game uses it to keep a value it computes (a
// bot's input, a clamped input, a spawn point) on the grid. Quantize is
// idempotent: Quantize(Quantize(v)) is bit-identical to Quantize(v).
func (q Quantizer) Quantize(v float32) float32 { return codec.Quantizer(q).Quantize(v) }

// AngleQuantizer maps angles in radians onto 2ⁿ codes spread evenly round
// the circle, identically on every machine; angles wrap, and quantizing is
// idempotent.
//
// Make one with [Angle]. The zero AngleQuantizer is unconfigured and a
// schema refuses it. AngleQuantizer is a small value type: pass and copy
// it freely.
type AngleQuantizer codec.AngleQuantizer

// Angle returns an AngleQuantizer using bits bits per angle. Like [Range]
// it never fails: bits outside 1..23 (beyond 23 decoded angles could no
// longer re-encode to their own code) is refused when a schema is built.
func Angle(bits int) AngleQuantizer { return AngleQuantizer(codec.Angle(bits)) }

// Quantize returns the angle a peer will see. Like
// [Quantizer.Quantize], the server applies it to its own state so both
// sides agree, and it is idempotent.
func (q AngleQuantizer) Quantize(a float32) float32 { return codec.AngleQuantizer(q).Quantize(a) }

// Quantize rounds v in place to what the wire carries, field by field
// through the Serialize description of T that s holds, as a peer will see
// it. For a component this is what the server does to every replicated
// component at the end of each tick, so a test of a bare world (no
// endpoints) keeps its state on the wire's grid the way the endpoints do.
// For the input type it is what the server applies: the input quantized,
// then the input rules' Validate, whose clamp is kept and whose refusal is
// returned as an error naming the reason. It returns an error naming T
// when T is neither a component nor the input type of s. It allocates
// nothing unless it errs.
func Quantize[T any](s *Schema, v *T) error {
	cs := (*codec.Schema)(s)
	t := reflect.TypeFor[T]()
	var c codec.Coder
	if id, ok := cs.ComponentOf(t); ok {
		c.Quantize(cs, id, unsafe.Pointer(v))
		return nil
	}
	if cs.InputType() == t {
		if _, refuse := c.QuantizeInput(cs, unsafe.Pointer(v)); refuse != "" {
			return fmt.Errorf("netsync: input %v refused by its rules: %s", t, refuse)
		}
		return nil
	}
	return fmt.Errorf("netsync: %v is neither a component nor the input type of the schema", t)
}
