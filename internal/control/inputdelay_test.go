package control_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/internal/control"
)

const tick60 = time.Second / 60

func TestAdaptiveInputDelayCoversTheTripAndTheJitter(t *testing.T) {
	for _, tc := range []struct {
		rtt, jitter time.Duration
		want        int
	}{
		{0, 0, 0},
		{20 * time.Millisecond, 0, 1},  // 0.6 tick
		{100 * time.Millisecond, 0, 3}, // 3 ticks
		{100 * time.Millisecond, 10 * time.Millisecond, 5},  // 4.2 ticks
		{200 * time.Millisecond, 30 * time.Millisecond, 10}, // 9.6 ticks
	} {
		assert.Equalf(t, tc.want, control.AdaptiveInputDelay(tc.rtt, tc.jitter, tick60, 0, 0, 30), "%v ±%v", tc.rtt, tc.jitter)
	}
	assert.Equal(t, 4, control.AdaptiveInputDelay(200*time.Millisecond, 30*time.Millisecond, tick60, 0, 0, 4), "capped at hi")
	assert.Equal(t, 2, control.AdaptiveInputDelay(0, 0, tick60, 0, 2, 4), "raised to lo")
}

// A link near a boundary keeps the delay: it follows only a quarter tick
// past the current delay's range.
func TestAdaptiveInputDelayHasHysteresis(t *testing.T) {
	at := func(ticks float64, cur int) int {
		return control.AdaptiveInputDelay(time.Duration(2*ticks*float64(tick60)), 0, tick60, cur, 0, 30)
	}
	assert.Equal(t, 3, at(3.2, 3), "within a quarter tick above")
	assert.Equal(t, 4, at(3.3, 3))
	assert.Equal(t, 3, at(1.8, 3), "within a quarter tick below 2")
	assert.Equal(t, 2, at(1.7, 3))
	assert.Equal(t, 1, at(0.5, 3), "a large change goes the whole way")
}

func TestLimitInputDelayKeepsThePredictionAheadOfTheSnapshots(t *testing.T) {
	limit := func(want, cur int, rtt time.Duration) int {
		return control.LimitInputDelay(want, cur, rtt, tick60, 1)
	}
	assert.Equal(t, 0, limit(3, 0, 0), "a LAN: no room for a delay")
	assert.Equal(t, 0, limit(3, 3, 10*time.Millisecond), "lowered as soon as the link shows it")
	assert.Equal(t, 1, limit(3, 0, 25*time.Millisecond))
	assert.Equal(t, 3, limit(3, 0, 100*time.Millisecond), "room enough")
	assert.Equal(t, 6, limit(8, 0, 105*time.Millisecond))
	assert.Equal(t, 12, limit(20, 0, 205*time.Millisecond))
	assert.Equal(t, 0, limit(-1, 0, time.Second), "never negative")
}

// Near its limit the delay neither rises nor falls for a quarter tick.
func TestLimitInputDelayHasHysteresis(t *testing.T) {
	at := func(ticks float64, cur int) int {
		return control.LimitInputDelay(10, cur, time.Duration(ticks*float64(tick60)), tick60, 1)
	}
	assert.Equal(t, 6, at(6.1, 6))
	assert.Equal(t, 6, at(5.8, 6), "kept a quarter tick below")
	assert.Equal(t, 5, at(5.7, 6))
	assert.Equal(t, 5, at(6.1, 5), "not raised within a quarter tick")
	assert.Equal(t, 6, at(6.3, 5))
}
