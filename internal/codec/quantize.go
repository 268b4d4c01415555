package codec

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// Quantizer maps float32 values in [min, max] to integer codes
// 0..[Quantizer.MaxCode] in steps of a fixed resolution, and codes back to
// floats, identically on every machine.
//
// The codes stand for the grid points base + code·resolution. The base is
// min, unless the range holds 0 and 0 is not on that grid (more than one
// float32 spacing near the range's largest magnitude off it): then the base
// is the multiple of the resolution within half a step of min, so that 0 is
// a grid point. Encoding computes round((v - base) × (1/resolution)) in
// float64, to the nearest step with ties away from zero, after clamping v
// to [min, max]. Decoding computes base + code*resolution in float64,
// rounding the product before the sum so that no compiler can fuse them
// into a multiply-add (which rounds once, and only on some CPUs), then
// rounds to float32 and clamps the result into [min, max]; the code of 0
// (when the range holds 0) decodes to exactly 0. MaxCode is
// round((max - base) × (1/resolution)). So the grid point of the top code
// lies within half a step of max, above it (and decodes to max) or below
// it, and likewise the bottom code's for min when the base is not min:
// every decoded value lies in [min, max], and every value in [min, max]
// decodes to within half a step of itself, give or take one float32
// spacing near the range's largest magnitude, however the resolution
// divides the range.
//
// The base moves off min only for ranges that hold 0 and that the
// resolution does not divide evenly from 0 (Range(-500, 500, 15.01),
// Range(-1, 1, 0.0013)); it was min for every range before, and its zero
// code, decoding to exactly 0, could land up to a whole step from the values
// it stood for. For those ranges the grid moves, MaxCode can differ by one
// (and Bits, where that crosses a power of two), and the schema
// description marks the moved base, so the schema hash differs from a
// build that used min. Every range that holds no 0, or that holds it on the
// grid from min, keeps its grid and hash.
//
// [Range] refuses resolutions finer than twice float32's spacing near
// the largest magnitude in range. That keeps the float32 rounding of a decoded
// value within a quarter step, so it always re-encodes to its own code:
// Encode(Decode(c)) == c for every code, and Quantize is idempotent.
//
// Make one with [Range]. The zero Quantizer is unconfigured: a schema
// refuses a component that codes a field with it (it would encode every
// value as 0). Quantizer is a small value type: pass and copy it freely.
type Quantizer struct {
	err      error // why the configuration is invalid, or that there is none
	min, max float32
	base64   float64 // the grid point of code 0: min, or the multiple of res64 within half a step of it
	res64    float64
	inv      float64 // 1/resolution; multiplying by it is cheaper than dividing
	maxCode  uint32
	nbits    int
	zero     uint32 // the code of 0, which decodes to exactly 0, when hasZero
	hasZero  bool
	moved    bool // base64 is not min: the range holds 0, off the grid from min
}

// Range returns a Quantizer for [min, max] at the given resolution. It
// never fails: a bad configuration is kept in the quantizer, returned by
// [Quantizer.Err], and refused with the component's name when a schema is
// built with it. So games declare quantizers as package variables without
// a must helper:
//
//	var coord = netsync.Range(-16, 16, 1.0/256)
func Range(min, max, resolution float32) Quantizer {
	q, err := newQuantizer(min, max, resolution)
	if err != nil {
		return Quantizer{err: err}
	}
	return q
}

// Err returns why q cannot be used: its configuration error, or that it is
// the unconfigured zero value; nil for a usable quantizer.
func (q Quantizer) Err() error {
	if q.err != nil {
		return q.err
	}
	if q.maxCode == 0 && q.nbits == 0 && q.inv == 0 {
		return errUnconfigured
	}
	return nil
}

var errUnconfigured = fmt.Errorf("netsync: an unconfigured Quantizer (the zero value) would encode every value as 0; make one with Range")

// newQuantizer returns a Quantizer for [min, max] at the given resolution.
// It returns an error naming the value at fault and its allowed range if any
// argument is NaN or infinite, if min >= max, if resolution is not in
// (0, max-min], or if resolution is finer than twice float32's spacing near
// the largest magnitude in range. That last limit also keeps MaxCode below 2²⁴
// (Bits at most 24), as float32 has a 24-bit significand, so no valid
// Quantizer needs more than the 32 bits of a code.
func newQuantizer(min, max, resolution float32) (Quantizer, error) {
	for _, a := range [...]struct {
		name string
		v    float32
	}{{"min", min}, {"max", max}, {"resolution", resolution}} {
		if math.IsNaN(float64(a.v)) || math.IsInf(float64(a.v), 0) {
			return Quantizer{}, fmt.Errorf("netsync: quantizer %s is %v; it must be finite", a.name, a.v)
		}
	}
	if min >= max {
		return Quantizer{}, fmt.Errorf("netsync: quantizer min %v must be less than max %v", min, max)
	}
	span := float64(max) - float64(min)
	res := float64(resolution)
	if res <= 0 || res > span {
		return Quantizer{}, fmt.Errorf("netsync: quantizer resolution %v must be in (0, %v], the span max-min", resolution, span)
	}
	magnitude := float32(math.Max(math.Abs(float64(min)), math.Abs(float64(max))))
	if least := float32(2 * float32Spacing(float64(magnitude))); resolution < least {
		return Quantizer{}, fmt.Errorf("netsync: quantizer resolution %v is finer than float32 can hold near %v; it must be at least %v", resolution, magnitude, least)
	}
	inv := 1 / res
	base := float64(min)
	moved := false
	if min <= 0 && max >= 0 {
		// -z·res, the multiple of res nearest min, with min + z·res in
		// [-res/2, res/2):
		// z·res is exact in float64 (z < 2²⁴, res has 24 significant bits),
		// and so is min + z·res, so the checks below are exact too.
		z := math.Ceil(-float64(min)/res - 0.5)
		off := float64(min) + z*res
		if off >= res/2 {
			z--
		} else if off < -res/2 {
			z++
		}
		off = float64(min) + z*res
		// Off by no more than float32 rounding (a resolution like 0.01 that
		// float32 cannot hold exactly), 0 is on the grid from min already.
		if math.Abs(off) > float32Spacing(float64(magnitude)) {
			base, moved = -(z * res), true
		}
	}
	// span ≤ 2·magnitude < 2²⁵·spacing and res ≥ 2·spacing, so span/res is
	// at most 2²⁴ - 1, and (max - base)/res < 2²⁴ - 1/2 as base ≥ min - res/2:
	// MaxCode < 2²⁴.
	steps := math.Round((float64(max) - base) * inv)
	q := Quantizer{
		min:     min,
		max:     max,
		base64:  base,
		res64:   res,
		inv:     inv,
		maxCode: uint32(steps),
		nbits:   bits.Len32(uint32(steps)),
		moved:   moved,
	}
	if min <= 0 && max >= 0 {
		q.zero, q.hasZero = q.Encode(0), true
	}
	return q, nil
}

// float32Spacing returns the gap between adjacent float32 values of
// magnitude a, a finite float32 widened to float64: the gap in a's binade,
// or the subnormal gap 2⁻¹⁴⁹ for tiny a.
func float32Spacing(a float64) float64 {
	_, exp := math.Frexp(a) // a = frac × 2^exp, frac in [0.5, 1)
	return math.Ldexp(1, max(exp-24, -149))
}

// Bits returns the number of bits a Stream codes per value: the
// bit length of MaxCode.
func (q Quantizer) Bits() int {
	return q.nbits
}

// MaxCode returns the largest code Encode returns and Decode accepts.
func (q Quantizer) MaxCode() uint32 {
	return q.maxCode
}

// Encode returns the code of v, in 0..MaxCode. Values outside [min, max] are
// clamped to it first; NaN is encoded as 0 clamped into [min, max], so a
// corrupted simulation value still yields a valid, deterministic code. O(1),
// no allocation.
func (q Quantizer) Encode(v float32) uint32 {
	if v != v {
		v = 0
	}
	if v < q.min {
		v = q.min
	}
	if v > q.max {
		v = q.max
	}
	k := math.Round((float64(v) - q.base64) * q.inv)
	if k < 0 {
		// Only a moved base above min, half a step from it: min's tie
		// rounds away from zero, to -1.
		return 0
	}
	return uint32(k)
}

// Decode returns the value of code u, in [min, max]. It returns an error
// wrapping [bitstream.ErrOutOfRange], naming u and MaxCode, if u exceeds MaxCode.
func (q Quantizer) Decode(u uint32) (float32, error) {
	if u > q.maxCode {
		return 0, fmt.Errorf("netsync: quantizer code %d out of range 0..%d: %w", u, q.maxCode, bitstream.ErrOutOfRange)
	}
	return q.decode(u), nil
}

// decode is Decode for a code known to be in range.
func (q Quantizer) decode(u uint32) float32 {
	// base + code·resolution misses 0 by a rounding error when resolution
	// is not a power of two; "no value" must stay exactly 0 (a resting
	// stick, a stopped body).
	if q.hasZero && u == q.zero {
		return 0
	}
	// The float64 conversion rounds the product on its own, which the Go spec
	// guarantees prevents fusing it with the addition.
	d := float32(q.base64 + float64(float64(u)*q.res64))
	if d > q.max {
		d = q.max
	}
	if d < q.min {
		d = q.min // code 0 of a moved base below min
	}
	return d
}

// Quantize returns Decode(Encode(v)): the value a peer will see after v
// crosses the wire. The server applies it to its own state at the end of
// each tick so that client and server agree bit-exactly. Quantize is
// idempotent: Quantize(Quantize(v)) is bit-identical to Quantize(v).
func (q Quantizer) Quantize(v float32) float32 {
	return q.decode(q.Encode(v))
}

// MaxAngleBits is the most bits an [AngleQuantizer] may use: beyond 23 the
// step drops below twice float32's spacing near π, and decoded angles could
// no longer re-encode to their own code.
const MaxAngleBits = 23

// AngleQuantizer maps angles in radians to codes of a fixed number of bits,
// spreading the codes evenly around the circle, and codes back to angles in
// [-π, π). Angles wrap: π and -π, or 0 and 2π, get the same code.
//
// Encoding computes k = round(a * 2ⁿ/2π), nearest step with ties away from
// zero, in float64; the code is k + 2ⁿ⁻¹ modulo 2ⁿ, so code 0 is -π and
// code 2ⁿ⁻¹ is 0. Decoding computes (code - 2ⁿ⁻¹) * 2π/2ⁿ in float64 and
// rounds it to float32; code 0 decodes to float32(-π), which float32
// rounding puts just below -π. Encode(Decode(c)) == c for every code, and
// Quantize is idempotent.
//
// Make one with [Angle]. The zero AngleQuantizer is unconfigured and a
// schema refuses it. AngleQuantizer is a small value type: pass and copy it
// freely.
type AngleQuantizer struct {
	err   error
	nbits int
	scale float64 // codes per radian
	step  float64 // radians per code
	codes float64 // 2^nbits
	half  int64   // code of angle 0
	mask  uint32  // largest code
}

// Angle returns an AngleQuantizer using bits bits per angle. Like [Range]
// it never fails: bits outside 1..[MaxAngleBits] is kept as the error of
// [AngleQuantizer.Err] and refused when a schema is built.
func Angle(bits int) AngleQuantizer {
	q, err := newAngleQuantizer(bits)
	if err != nil {
		return AngleQuantizer{err: err}
	}
	return q
}

// Err returns why q cannot be used, or nil.
func (q AngleQuantizer) Err() error {
	if q.err != nil {
		return q.err
	}
	if q.nbits == 0 {
		return errUnconfiguredAngle
	}
	return nil
}

var errUnconfiguredAngle = fmt.Errorf("netsync: an unconfigured AngleQuantizer (the zero value); make one with Angle")

// newAngleQuantizer returns an AngleQuantizer using bits bits per angle. It
// returns an error naming bits if it is outside 1..[MaxAngleBits].
func newAngleQuantizer(bits int) (AngleQuantizer, error) {
	if bits < 1 || bits > MaxAngleBits {
		return AngleQuantizer{}, fmt.Errorf("netsync: angle quantizer bits %d out of range 1..%d", bits, MaxAngleBits)
	}
	codes := math.Ldexp(1, bits)
	return AngleQuantizer{
		nbits: bits,
		scale: codes / (2 * math.Pi),
		step:  2 * math.Pi / codes,
		codes: codes,
		half:  int64(1) << (bits - 1),
		mask:  uint32(1)<<bits - 1,
	}, nil
}

// Bits returns the number of bits per angle.
func (q AngleQuantizer) Bits() int {
	return q.nbits
}

// Encode returns the code of angle a, wrapped into [-π, π) first. NaN and
// infinities have no direction and are encoded as angle 0. O(1), no
// allocation.
func (q AngleQuantizer) Encode(a float32) uint32 {
	// math.Mod is exact, so the wrap adds no error, and its result fits an
	// int64 whatever a was.
	k := math.Mod(math.Round(float64(a)*q.scale), q.codes)
	if k != k {
		return uint32(q.half)
	}
	return uint32(int64(k)+q.half) & q.mask
}

// Decode returns the angle of code u. It returns an error wrapping
// [bitstream.ErrOutOfRange], naming u and the largest code, if u does not fit in Bits
// bits.
func (q AngleQuantizer) Decode(u uint32) (float32, error) {
	if u > q.mask {
		return 0, fmt.Errorf("netsync: angle code %d out of range 0..%d: %w", u, q.mask, bitstream.ErrOutOfRange)
	}
	return q.decode(u), nil
}

// decode is Decode for a code known to be in range.
func (q AngleQuantizer) decode(u uint32) float32 {
	return float32(float64(int64(u)-q.half) * q.step)
}

// Quantize returns Decode(Encode(a)): the angle a peer will see. Like
// [Quantizer.Quantize], the server applies it to its own state so both sides
// agree, and it is idempotent.
func (q AngleQuantizer) Quantize(a float32) float32 {
	return q.decode(q.Encode(a))
}
