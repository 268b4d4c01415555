package control_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/internal/control"
)

func TestRTTJacobsonKarels(t *testing.T) {
	var r control.RTT
	assert.Zero(t, r.Smoothed(), "no sample yet")
	assert.Zero(t, r.Variation())
	assert.Zero(t, r.Samples())

	// srtt = 7/8·srtt + 1/8·R and rttvar = 3/4·rttvar + 1/4·|srtt − R|
	// (with the old srtt); the first sample sets srtt = R, rttvar = R/2.
	// Every value here is exact in binary, so the expectations are exact.
	steps := []struct {
		sample, srtt, rttvar time.Duration
	}{
		{100 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond},
		{120 * time.Millisecond, 102500 * time.Microsecond, 42500 * time.Microsecond},
		{80 * time.Millisecond, 99687500 * time.Nanosecond, 37500 * time.Microsecond},
		// 99.7265625 ms is 99726562.5 ns: Smoothed truncates to whole ns.
		{100 * time.Millisecond, 99726562 * time.Nanosecond, 28203125 * time.Nanosecond},
	}
	for i, s := range steps {
		r.Sample(s.sample)
		assert.Equal(t, s.srtt, r.Smoothed(), "after sample %d", i+1)
		assert.Equal(t, s.rttvar, r.Variation(), "after sample %d", i+1)
		assert.Equal(t, uint64(i+1), r.Samples())
	}

	// Negative samples (a clock that went backwards, a forged echo) are
	// ignored; zero is a valid sample.
	r.Sample(-time.Millisecond)
	r.Sample(math.MinInt64)
	assert.Equal(t, uint64(4), r.Samples())
	assert.Equal(t, 99726562*time.Nanosecond, r.Smoothed())
	r.Sample(0)
	assert.Equal(t, uint64(5), r.Samples())
	// srtt = 7/8·99.7265625 = 87.2607421875 ms and
	// rttvar = 3/4·28.203125 + 1/4·99.7265625 = 46.083984375 ms.
	assert.Equal(t, 87260742*time.Nanosecond, r.Smoothed())
	assert.Equal(t, 46083984*time.Nanosecond, r.Variation())
}

func TestRTTConvergesAndTracksJitter(t *testing.T) {
	var steady, jittery control.RTT
	for i := range 200 {
		steady.Sample(50 * time.Millisecond)
		jitter := time.Duration(i%2*20-10) * time.Millisecond // 40 or 60 ms
		jittery.Sample(50*time.Millisecond + jitter)
	}
	assert.InDelta(t, float64(50*time.Millisecond), float64(steady.Smoothed()), float64(time.Microsecond))
	assert.Less(t, steady.Variation(), time.Microsecond, "no jitter, no variation")
	assert.InDelta(t, float64(50*time.Millisecond), float64(jittery.Smoothed()), float64(2*time.Millisecond))
	assert.Greater(t, jittery.Variation(), 8*time.Millisecond, "±10 ms of jitter shows")
	assert.Less(t, jittery.Variation(), 12*time.Millisecond)

	// A step change is followed within a few dozen samples.
	for range 60 {
		steady.Sample(150 * time.Millisecond)
	}
	assert.InDelta(t, float64(150*time.Millisecond), float64(steady.Smoothed()), float64(time.Millisecond))
}
