package codec_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// halfStepSlack is the float32 rounding Quantizer's promise allows on top of
// half a step: one float32 spacing near the range's largest magnitude.
func halfStepSlack(min, max float32) float64 {
	magnitude := math.Max(math.Abs(float64(min)), math.Abs(float64(max)))
	return float64(math.Nextafter32(float32(magnitude), float32(math.Inf(1)))) - magnitude
}

// TestQuantizeWithinHalfStepOfZeroOffGrid is the failure FuzzQuantize found
// at once (kept in testdata/fuzz/FuzzQuantize): Range(-500, 500, 15.009998)
// puts 0 a third of a step off the grid from -500, and its zero code,
// decoding to exactly 0, took -7.919091 to 0, 7.92 away, more than half a
// step (7.505). The grid now holds 0 itself.
func TestQuantizeWithinHalfStepOfZeroOffGrid(t *testing.T) {
	for _, tt := range []struct{ min, max, res, v float32 }{
		{-500, 500, 15.009998, -7.919091},
		{-97.42857, 40000, 42.006664, -28.85841},
		{-1, 0, 0.3, -0.25}, // 0 at max, off the grid from min
	} {
		q := mustQuantizer(t, tt.min, tt.max, tt.res)
		got := q.Quantize(tt.v)
		diff := math.Abs(float64(got) - float64(tt.v))
		assert.LessOrEqual(t, diff, float64(tt.res)/2+halfStepSlack(tt.min, tt.max),
			"Range(%v, %v, %v).Quantize(%v) = %v, %v away", tt.min, tt.max, tt.res, tt.v, got, diff)
		assert.Equal(t, float32(0), q.Quantize(0), "Range(%v, %v, %v).Quantize(0)", tt.min, tt.max, tt.res)
	}
	q := mustQuantizer(t, -500, 500, 15.009998)
	assert.Equal(t, uint32(66), q.MaxCode(), "round((500 + 33·15.009998)/15.009998) = round(66.31)")
	assert.Equal(t, 7, q.Bits())
}

// TestQuantizeWithinHalfStepEverywhere sweeps values across ranges whose
// resolution divides them unevenly, from 0 and from min, and checks each
// lands within half a step of itself, including next to min and max.
func TestQuantizeWithinHalfStepEverywhere(t *testing.T) {
	for _, c := range []struct{ min, max, res float32 }{
		{-500, 500, 15.009998},
		{-1, 1, 0.0013},
		{0, 1, 0.35}, // grid point past max: capped
		{0, 1, 0.3},  // grid stops short of max
		{5, 10, 1.7}, // no 0 in range: the grid starts at min
		{-10, -3, 2}, // nor here
		{-1, 0, 0.3}, // 0 at max
		{-2.7, 7, 1}, // the base below min
		{-3.5, 2, 1}, // min's tie: the base half a step above it
		{-97.42857, 40000, 42.006664},
		{-0.99999994, 0.99999994, 1.0 / (1 << 23)},
		{-3e38, 3e38, 7e31},
	} {
		q := mustQuantizer(t, c.min, c.max, c.res)
		bound := float64(c.res)/2 + halfStepSlack(c.min, c.max)
		span := float64(c.max) - float64(c.min)
		const n = 20000
		for i := 0; i <= n; i++ {
			v := float32(float64(c.min) + span*float64(i)/n)
			v = min(max(v, c.min), c.max)
			for _, x := range []float32{v, math.Nextafter32(v, c.min), math.Nextafter32(v, c.max)} {
				got := q.Quantize(x)
				diff := math.Abs(float64(got) - float64(x))
				if diff > bound || got < c.min || got > c.max {
					require.Failf(t, "more than half a step away", "Range(%v, %v, %v).Quantize(%v) = %v, %v away; at most %v",
						c.min, c.max, c.res, x, got, diff, bound)
				}
			}
		}
		lo, _ := q.Decode(0)
		hi, _ := q.Decode(q.MaxCode())
		assert.LessOrEqual(t, float64(lo)-float64(c.min), bound, "%v: code 0 decodes to %v", c, lo)
		assert.LessOrEqual(t, float64(c.max)-float64(hi), bound, "%v: the top code decodes to %v", c, hi)
	}
}

// TestQuantizerKeepsEvenGrids pins that the ranges games use, which hold 0
// on the grid from min (up to float32 rounding of the resolution), or hold
// no 0, still decode code k to min + k·resolution (0 exactly for the code
// of 0): moving the base changed no grid that already kept its promise.
func TestQuantizerKeepsEvenGrids(t *testing.T) {
	for _, c := range []struct{ min, max, res float32 }{
		{-500, 500, 0.01},
		{-50, 50, 0.01},
		{-16, 16, 1.0 / 256},
		{-1, 1, 1.0 / 127},
		{-1, 1, 1.0 / 64},
		{-2, 2, 1.0 / 64},
		{0, 255, 1},
		{0, 1, 1.0 / 255},
		{-255, 1, 1.0 / 255},
		{-3, 5, 0.1},
		{-10, 10, 0.5},
		{-1, 1, 0.5},
		{-1000, 1000, 1.0 / 64},
		{1000, 1001, 1.0 / 4096},
		{5, 10, 1.7},
	} {
		q := mustQuantizer(t, c.min, c.max, c.res)
		assert.Equal(t, uint32(math.Round((float64(c.max)-float64(c.min))/float64(c.res))), q.MaxCode(), "%v: MaxCode", c)
		for code := uint32(0); code <= q.MaxCode(); code++ {
			want := min(float32(float64(c.min)+float64(float64(code)*float64(c.res))), c.max)
			got, err := q.Decode(code)
			require.NoError(t, err)
			if got != want && !(got == 0 && code == q.Encode(0)) {
				require.Failf(t, "grid moved", "Range(%v, %v, %v): Decode(%d) = %v; want min + k·res = %v", c.min, c.max, c.res, code, got, want)
			}
		}
	}
}
