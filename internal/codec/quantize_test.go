package codec_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
)

func mustQuantizer(t testing.TB, min, max, res float32) codec.Quantizer {
	t.Helper()
	q, err := quantizer(min, max, res)
	require.NoError(t, err, "NewQuantizer(%v, %v, %v)", min, max, res)
	return q
}

func mustAngleQuantizer(t testing.TB, bits int) codec.AngleQuantizer {
	t.Helper()
	q, err := angleQuantizer(bits)
	require.NoError(t, err, "NewAngleQuantizer(%d)", bits)
	return q
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

func TestNewQuantizerErrors(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name          string
		min, max, res float32
		message       string
	}{
		{"NaN min", nan, 1, 0.1, "quantizer min is NaN; it must be finite"},
		{"infinite max", 0, inf, 0.1, "quantizer max is +Inf; it must be finite"},
		{"infinite resolution", 0, 1, -inf, "quantizer resolution is -Inf; it must be finite"},
		{"min equals max", 1, 1, 0.1, "quantizer min 1 must be less than max 1"},
		{"min above max", 2, 1, 0.1, "quantizer min 2 must be less than max 1"},
		{"zero resolution", 0, 1, 0, "quantizer resolution 0 must be in (0, 1]"},
		{"negative resolution", -1, 1, -0.5, "quantizer resolution -0.5 must be in (0, 2]"},
		{"resolution above span", 0, 1, 1.5, "quantizer resolution 1.5 must be in (0, 1]"},
		{"would need more than 32 bits", 0, 1, 1e-10, "resolution 1e-10 is finer than float32 can hold near 1; it must be at least 2.3841858e-07"},
		{"finer than float32", -1e5, 1e5, 0.01, "resolution 0.01 is finer than float32 can hold near 100000; it must be at least 0.015625"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := quantizer(tt.min, tt.max, tt.res)
			require.Error(t, err, "NewQuantizer(%v, %v, %v) = %+v, want an error", tt.min, tt.max, tt.res, q)
			assert.Contains(t, err.Error(), tt.message)
		})
	}
}

func TestQuantizerSuggestedMinimumsAreAccepted(t *testing.T) {
	// The least resolutions the errors above suggest must themselves work.
	for _, c := range []struct{ min, max, res float32 }{{0, 1, 2.3841858e-07}, {-1e5, 1e5, 0.015625}} {
		_, err := quantizer(c.min, c.max, c.res)
		assert.NoError(t, err, "suggested least resolution refused")
	}
}

func TestQuantizerBits(t *testing.T) {
	tests := []struct {
		min, max, res float32
		maxCode       uint32
		bits          int
	}{
		{0, 1, 1, 1, 1},
		{0, 1, 0.1, 10, 4},
		{-1, 1, 1.0 / 1024, 2048, 12},
		{-1, 1, 0.0013, 1538, 11},     // from -769·0.0013, 1538.23 rounds down: the top code decodes just below max
		{0, 1, 0.35, 3, 2},            // 2.86 rounds up: the top code is capped at max
		{0, 255, 1, 255, 8},           // a byte
		{-500, 500, 0.01, 100000, 17}, // positions to a centimetre
		{-0.99999994, 0.99999994, 1.0 / (1 << 23), 1<<24 - 1, 24}, // the most codes float32 allows
	}
	for _, tt := range tests {
		q := mustQuantizer(t, tt.min, tt.max, tt.res)
		assert.Equal(t, tt.maxCode, q.MaxCode(), "NewQuantizer(%v, %v, %v): MaxCode", tt.min, tt.max, tt.res)
		assert.Equal(t, tt.bits, q.Bits(), "NewQuantizer(%v, %v, %v): Bits", tt.min, tt.max, tt.res)
	}
}

func TestQuantizerEncode(t *testing.T) {
	q := mustQuantizer(t, -10, 10, 0.5) // codes 0..40, code 20 is 0
	shifted := mustQuantizer(t, 5, 10, 1)
	nan := float32(math.NaN())
	tests := []struct {
		q    codec.Quantizer
		v    float32
		want uint32
	}{
		{q, -10, 0},
		{q, 10, 40},
		{q, 0, 20},
		{q, 0.24, 20},
		{q, 0.25, 21}, // ties away from zero (upwards, codes are never negative)
		{q, -0.25, 20},
		{q, -0.26, 19},
		{q, -11, 0},
		{q, 1e30, 40},
		{q, float32(math.Inf(-1)), 0},
		{q, float32(math.Inf(1)), 40},
		{q, nan, 20},      // NaN is 0
		{shifted, nan, 0}, // NaN is 0, clamped up to min 5
		{shifted, 7.5, 3},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.q.Encode(tt.v), "Encode(%v)", tt.v)
	}
}

func TestQuantizerDecode(t *testing.T) {
	// Expected bits cross-checked with an independent implementation.
	tests := []struct {
		q    codec.Quantizer
		code uint32
		want uint32
	}{
		{mustQuantizer(t, -1, 1, 0.0013), 0, 0xbf7fec57},    // -0.9997 = -769·0.0013: 0 is off the grid from -1, so the grid is the multiples of 0.0013
		{mustQuantizer(t, -1, 1, 0.0013), 768, 0xbaaa64c3},  // -0.0013
		{mustQuantizer(t, -1, 1, 0.0013), 769, 0x00000000},  // the code of 0 decodes to exactly 0, its grid point
		{mustQuantizer(t, -1, 1, 1.0/127), 127, 0x00000000}, // exactly 0, where -1 + 127·(1/127) rounds off it
		{mustQuantizer(t, -1, 1, 0.0013), 1538, 0x3f7fec57}, // 0.9997: round((1 + 0.9997)/0.0013) = round(1538.23) steps stop short of max
		{mustQuantizer(t, -3.5, 2, 1), 0, 0xc0400000},       // -3: min's tie puts the grid's first point half a step above min
		{mustQuantizer(t, -2.7, 7, 1), 0, 0xc02ccccd},       // -2.7: the grid's first point, -3, is below min and decodes to min
		{mustQuantizer(t, 0, 1, 0.3), 3, 0x3f666667},        // 0.90000004: round(3.33) steps stop short of max
		{mustQuantizer(t, 0, 1, 0.35), 3, 0x3f800000},       // 1: round(2.86) steps would pass max and are capped
	}
	for _, tt := range tests {
		got, err := tt.q.Decode(tt.code)
		assert.NoError(t, err, "Decode(%d)", tt.code)
		assert.Equal(t, tt.want, math.Float32bits(got), "Decode(%d) = %#08x; want %#08x", tt.code, math.Float32bits(got), tt.want)
	}
}

func TestQuantizerDecodeRejectsCodeAboveMax(t *testing.T) {
	q := mustQuantizer(t, 0, 1, 0.1)
	for _, code := range []uint32{11, 15, math.MaxUint32} {
		got, err := q.Decode(code)
		if !assert.ErrorIs(t, err, bitstream.ErrOutOfRange, "Decode(%d) = %v, %v; want 0 and ErrOutOfRange", code, got, err) ||
			!assert.Equal(t, float32(0), got, "Decode(%d) = %v, %v; want 0 and ErrOutOfRange", code, got, err) {
			continue
		}
		assert.Contains(t, err.Error(), fmt.Sprintf("code %d out of range 0..10", code), "Decode(%d) error", code)
	}
}

// TestQuantizerEveryCodeRoundTrips checks Encode(Decode(c)) == c, ordering
// and range for every code of quantizers up to the float32 precision limit.
func TestQuantizerEveryCodeRoundTrips(t *testing.T) {
	quantizers := []struct{ min, max, res float32 }{
		{0, 1, 0.1},
		{-1, 1, 0.0013},
		{-500, 500, 0.01},
		{1000, 1001, 1.0 / 4096},                   // far from zero, at the limit for that magnitude
		{-1024, 1024, 1.0 / 4096},                  // 2²³ codes at exactly twice float32's spacing near 1024
		{-1024, 1024, 1.0 / 4096 * 1.3},            // near the limit, a resolution that is not a power of two
		{-0.99999994, 0.99999994, 1.0 / (1 << 23)}, // 2²⁴ codes, the most float32 allows
		{-3e38, 3e38, 7e31},                        // near the float32 maximum
		{1e-40, 2e-40, 3e-45},                      // subnormals
	}
	for _, c := range quantizers {
		q := mustQuantizer(t, c.min, c.max, c.res)
		prev := float32(math.Inf(-1))
		for code := uint32(0); code <= q.MaxCode(); code++ {
			v, err := q.Decode(code)
			back := q.Encode(v)
			// Assert only once something is wrong: testify calls on each
			// of 2^24 codes would take minutes.
			if err != nil || back != code || !(v > prev) || v < c.min || v > c.max {
				require.NoError(t, err, "%v: Decode(%d)", c, code)
				require.Equal(t, code, back, "%v: Encode(Decode(%d) = %v)", c, code, v)
				require.Fail(t, "not strictly increasing in [min, max]", "%v: Decode(%d) = %v after %v: want strictly increasing values in [min, max]", c, code, v, prev)
			}
			prev = v
		}
	}
}

// TestQuantizeIdempotent checks Quantize on seeded random values, including
// arbitrary float32 bit patterns (NaN, infinities, subnormals).
func TestQuantizeIdempotent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	quantizers := []codec.Quantizer{
		mustQuantizer(t, -500, 500, 0.01),
		mustQuantizer(t, 0, 1, 1.0/255),
		mustQuantizer(t, -1, 1, 0.0013),
		mustQuantizer(t, -0.99999994, 0.99999994, 1.0/(1<<23)),
		mustQuantizer(t, -3e38, 3e38, 7e31),
	}
	for _, q := range quantizers {
		lo, _ := q.Decode(0)
		hi, _ := q.Decode(q.MaxCode())
		for i := range 100000 {
			var v float32
			if i%2 == 0 {
				v = math.Float32frombits(rng.Uint32())
			} else {
				v = lo + (hi-lo)*(rng.Float32()*1.2-0.1)
			}
			once := q.Quantize(v)
			twice := q.Quantize(once)
			require.Equal(t, math.Float32bits(once), math.Float32bits(twice), "Quantize(%v) = %v but Quantize(%v) = %v", v, once, once, twice)
			require.True(t, once >= lo && once <= hi, "Quantize(%v) = %v, outside [%v, %v]", v, once, lo, hi)
		}
	}
}

func TestQuantizerGolden(t *testing.T) {
	// Pins Encode and Decode bit for bit, so a change of formula, or a
	// platform that computes differently, fails here rather than as a
	// desync between client and server. The expected values were
	// cross-checked with an independent implementation.
	pos := mustQuantizer(t, -500, 500, 0.01)
	unit := mustQuantizer(t, 0, 1, 1.0/255)
	tests := []struct {
		q    codec.Quantizer
		v    float32
		code uint32
		bits uint32
	}{
		{pos, 3.14159, 50314, 0x4048f593},  // 3.1399887
		{pos, -123.456, 37654, 0xc2f6eb86}, // -123.46001
		{pos, 499.995, 100000, 0x43f9ffff}, // 499.99997: float32(0.01) is a little under 0.01
		{unit, 0.5, 127, 0x3efeff00},       // 0.49803925: float32(1/255) is a little over 1/255
		{unit, 0.1, 25, 0x3dc8c8ca},        // 0.09803922
	}
	for _, tt := range tests {
		code := tt.q.Encode(tt.v)
		got := tt.q.Quantize(tt.v)
		assert.Equal(t, tt.code, code, "Encode(%v)", tt.v)
		assert.Equal(t, tt.bits, math.Float32bits(got), "Quantize(%v) = %#08x; want %#08x", tt.v, math.Float32bits(got), tt.bits)
	}
}

func TestQuantizerZeroValue(t *testing.T) {
	var q codec.Quantizer
	require.Equal(t, uint32(0), q.Encode(42), "zero Quantizer: Encode")
	require.Equal(t, float32(0), q.Quantize(42), "zero Quantizer: Quantize")
	require.Equal(t, 0, q.Bits(), "zero Quantizer: Bits")
	_, err := q.Decode(1)
	require.ErrorIs(t, err, bitstream.ErrOutOfRange, "zero Quantizer Decode(1)")
}

func TestQuantizerDoesNotAllocate(t *testing.T) {
	q := mustQuantizer(t, -500, 500, 0.01)
	var got float32
	allocs := testing.AllocsPerRun(100, func() {
		got, _ = q.Decode(q.Encode(12.34))
	})
	require.Zero(t, allocs, "Encode+Decode: allocations")
	require.Equal(t, math.Float32bits(q.Quantize(12.34)), math.Float32bits(got), "Encode+Decode: value %v; want %v", got, q.Quantize(12.34))
}

func TestNewAngleQuantizerErrors(t *testing.T) {
	for _, bits := range []int{-1, 0, codec.MaxAngleBits + 1, 32, 64} {
		_, err := angleQuantizer(bits)
		want := fmt.Sprintf("angle quantizer bits %d out of range 1..23", bits)
		assert.ErrorContains(t, err, want, "NewAngleQuantizer(%d)", bits)
	}
}

func TestAngleQuantizerWraps(t *testing.T) {
	q := mustAngleQuantizer(t, 8) // 256 codes, code 128 is angle 0
	pi := float32(math.Pi)
	tests := []struct {
		a    float32
		want uint32
	}{
		{0, 128},
		{-pi, 0},
		{pi, 0}, // π and -π are the same direction
		{3 * pi, 0},
		{-3 * pi, 0},
		{2 * pi, 128},
		{pi / 2, 192},
		{-pi / 2, 64},
		{-3 * pi / 2, 192},
		{5 * pi / 2, 192},
		{pi - 0.01, 0},   // rounds up to the wrap
		{pi - 0.02, 255}, // rounds down: the last code
		{float32(math.NaN()), 128},
		{float32(math.Inf(1)), 128},
		{float32(math.Inf(-1)), 128},
		{math.MaxFloat32, 128}, // a huge multiple of the 256-step turn: angle 0
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, q.Encode(tt.a), "Encode(%v)", tt.a)
	}
	assert.Equal(t, math.Float32bits(q.Quantize(-pi)), math.Float32bits(q.Quantize(pi)), "Quantize(π) = %v, Quantize(-π) = %v; want both float32(-π)", q.Quantize(pi), q.Quantize(-pi))
	assert.Equal(t, math.Float32bits(-pi), math.Float32bits(q.Quantize(-pi)), "Quantize(π) = %v, Quantize(-π) = %v; want both float32(-π)", q.Quantize(pi), q.Quantize(-pi))
}

// TestAngleQuantizerEveryCodeRoundTrips covers every code of every width,
// 2²⁴ codes in all.
func TestAngleQuantizerEveryCodeRoundTrips(t *testing.T) {
	lo, hi := -float32(math.Pi), float32(math.Pi)
	for bits := 1; bits <= codec.MaxAngleBits; bits++ {
		q := mustAngleQuantizer(t, bits)
		prev := float32(math.Inf(-1))
		for code := uint32(0); code < 1<<bits; code++ {
			a, err := q.Decode(code)
			back := q.Encode(a)
			// Assert only once something is wrong: testify calls on each
			// of 2^24 codes would take minutes.
			if err != nil || back != code || !(a > prev) || a < lo || a >= hi {
				require.NoError(t, err, "bits %d: Decode(%d)", bits, code)
				require.Equal(t, code, back, "bits %d: Encode(Decode(%d) = %v)", bits, code, a)
				require.Fail(t, "not strictly increasing in range", "bits %d: Decode(%d) = %v after %v: want strictly increasing values in [float32(-π), float32(π))", bits, code, a, prev)
			}

			prev = a
		}
		_, err := q.Decode(1 << bits)
		require.ErrorIs(t, err, bitstream.ErrOutOfRange, "bits %d: Decode(%d)", bits, 1<<bits)
	}
}

func TestAngleQuantizerGolden(t *testing.T) {
	q := mustAngleQuantizer(t, 16)
	tests := []struct {
		a    float32
		code uint32
		bits uint32
	}{
		{1, 43198, 0x3f7ffd9f},   // 0.9999637
		{-2.5, 6692, 0xc0200016}, // -2.5000052
		{7, 40245, 0x3f378360},   // 0.71684837, 7 - 2π
	}
	for _, tt := range tests {
		code := q.Encode(tt.a)
		got := q.Quantize(tt.a)
		assert.Equal(t, tt.code, code, "Encode(%v)", tt.a)
		assert.Equal(t, tt.bits, math.Float32bits(got), "Quantize(%v) = %#08x; want %#08x", tt.a, math.Float32bits(got), tt.bits)
	}
}

func TestAngleQuantizerZeroValue(t *testing.T) {
	var q codec.AngleQuantizer
	require.Equal(t, uint32(0), q.Encode(1), "zero AngleQuantizer: Encode")
	require.Equal(t, float32(0), q.Quantize(1), "zero AngleQuantizer: Quantize")
	require.Equal(t, 0, q.Bits(), "zero AngleQuantizer: Bits")
}

// FuzzQuantize checks, for any valid quantizer, value and code, that
// Quantize is idempotent and in range, that codes round-trip, and that
// Decode(Encode(v)) is Quantize(v).
func FuzzQuantize(f *testing.F) {
	f.Add(float32(-500), float32(500), float32(0.01), float32(3.14159), uint32(7))
	f.Add(float32(0), float32(1), float32(1.0/255), float32(0.5), uint32(255))
	f.Add(float32(-1), float32(1), float32(0.0013), float32(0.9999), uint32(1538))
	f.Add(float32(0), float32(1), float32(0.35), float32(math.NaN()), uint32(3))
	f.Add(float32(-0.99999994), float32(0.99999994), float32(1.0/(1<<23)), float32(-0.3), uint32(1<<24-1))
	f.Add(float32(-3e38), float32(3e38), float32(7e31), float32(math.Inf(1)), uint32(0))
	f.Add(float32(1e-40), float32(2e-40), float32(3e-45), float32(1.5e-40), uint32(9))
	f.Fuzz(func(t *testing.T, min, max, res, v float32, code uint32) {
		q, err := quantizer(min, max, res)
		if err != nil {
			return // an invalid configuration; TestNewQuantizerErrors covers the messages
		}
		c := q.Encode(v)
		require.LessOrEqual(t, c, q.MaxCode(), "Encode(%v) = %d, MaxCode %d, Bits %d", v, c, q.MaxCode(), q.Bits())
		require.LessOrEqual(t, q.Bits(), 24, "Encode(%v) = %d, MaxCode %d, Bits %d", v, c, q.MaxCode(), q.Bits())
		once := q.Quantize(v)
		twice := q.Quantize(once)
		require.Equal(t, math.Float32bits(once), math.Float32bits(twice), "Quantize(%v) = %v but Quantize(%v) = %v", v, once, once, twice)
		require.True(t, once >= min && once <= max, "Quantize(%v) = %v, outside [%v, %v]", v, once, min, max)
		require.Equal(t, c, q.Encode(once), "Encode(Quantize(%v) = %v)", v, once)
		// The error is at most half a step plus float32 rounding.
		clamped := float64(v)
		if v != v {
			clamped = 0
		}
		clamped = math.Min(math.Max(clamped, float64(min)), float64(max))
		magnitude := math.Max(math.Abs(float64(min)), math.Abs(float64(max)))
		spacing := float64(math.Nextafter32(float32(magnitude), float32(math.Inf(1)))) - magnitude
		diff := math.Abs(float64(once) - clamped)
		require.False(t, diff > float64(res)/2+spacing, "Quantize(%v) = %v, %v away from %v; resolution %v", v, once, diff, clamped, res)
		cc := uint32(uint64(code) % (uint64(q.MaxCode()) + 1))
		d, err := q.Decode(cc)
		require.NoError(t, err, "Decode(%d) = %v; Encode of it %d", cc, d, q.Encode(d))
		require.Equal(t, cc, q.Encode(d), "Decode(%d) = %v; Encode of it %d", cc, d, q.Encode(d))
		require.True(t, d >= min && d <= max, "Decode(%d) = %v; Encode of it %d", cc, d, q.Encode(d))
		if cc > 0 {
			below, _ := q.Decode(cc - 1)
			require.True(t, below < d, "Decode(%d) = %v is not below Decode(%d) = %v", cc-1, below, cc, d)
		}
		_, err = q.Decode(q.MaxCode() + 1)
		require.ErrorIs(t, err, bitstream.ErrOutOfRange, "Decode(MaxCode+1)")
		got, err := q.Decode(q.Encode(v))
		require.NoError(t, err, "Decode(Encode(%v)) = %v; want %v", v, got, once)
		require.Equal(t, math.Float32bits(once), math.Float32bits(got), "Decode(Encode(%v)) = %v; want %v", v, got, once)
	})
}

// FuzzAngleQuantize checks, for every width and any angle and code, that
// angles wrap into range, Quantize is idempotent and codes round-trip.
func FuzzAngleQuantize(f *testing.F) {
	f.Add(uint8(16), float32(math.Pi), uint32(0))
	f.Add(uint8(23), float32(-math.Pi), uint32(1<<23-1))
	f.Add(uint8(1), float32(1e30), uint32(1))
	f.Add(uint8(8), float32(math.NaN()), uint32(200))
	f.Fuzz(func(t *testing.T, bits uint8, a float32, code uint32) {
		n := int(bits)%codec.MaxAngleBits + 1
		q := mustAngleQuantizer(t, n)
		c := q.Encode(a)
		once := q.Quantize(a)
		twice := q.Quantize(once)
		require.Equal(t, math.Float32bits(once), math.Float32bits(twice), "bits %d: Quantize(%v) = %v but Quantize(%v) = %v", n, a, once, once, twice)
		require.True(t, once >= -float32(math.Pi) && once < float32(math.Pi), "bits %d: Quantize(%v) = %v, outside [-π, π)", n, a, once)
		back := q.Encode(once)
		require.Equal(t, c, back, "bits %d: Encode(%v) = %d, Encode(Quantize) = %d", n, a, c, back)
		require.Less(t, c, uint32(1)<<n, "bits %d: Encode(%v) = %d, Encode(Quantize) = %d", n, a, c, back)
		// Within half a step around the circle, for angles small enough that
		// float64 still resolves a step.
		if math.Abs(float64(a)) < 1e3 {
			step := 2 * math.Pi / float64(uint64(1)<<n)
			diff := math.Abs(math.Remainder(float64(once)-float64(a), 2*math.Pi))
			require.False(t, diff > step/2+1e-6, "bits %d: Quantize(%v) = %v, %v away; step %v", n, a, once, diff, step)
		}
		cc := code & (1<<n - 1)
		d, err := q.Decode(cc)
		require.NoError(t, err, "bits %d: Decode(%d) = %v; Encode of it %d", n, cc, d, q.Encode(d))
		require.Equal(t, cc, q.Encode(d), "bits %d: Decode(%d) = %v; Encode of it %d", n, cc, d, q.Encode(d))
		got, err := q.Decode(q.Encode(a))
		require.NoError(t, err, "bits %d: Decode(Encode(%v)) = %v; want %v", n, a, got, once)
		require.Equal(t, math.Float32bits(once), math.Float32bits(got), "bits %d: Decode(Encode(%v)) = %v; want %v", n, a, got, once)
	})
}

// quantizer and angleQuantizer make quantizers as games do, with Range and
// Angle, and return their configuration error.
func quantizer(min, max, res float32) (codec.Quantizer, error) {
	q := codec.Range(min, max, res)
	return q, q.Err()
}

func angleQuantizer(bits int) (codec.AngleQuantizer, error) {
	q := codec.Angle(bits)
	return q, q.Err()
}
