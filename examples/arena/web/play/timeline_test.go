package play

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/systems"
)

func TestTimelineRatesOverASecond(t *testing.T) {
	var tl timeline
	tl.sample(0, systems.ClientStats{})
	tl.sample(500*time.Millisecond, systems.ClientStats{Rollbacks: 3, ReplayedTicks: 30, BytesSent: 500, BytesReceived: 1000})
	assert.Zero(t, tl.t.RollbacksPerS, "not a second yet")
	assert.Equal(t, uint64(3), tl.t.Rollbacks)
	tl.sample(2*time.Second, systems.ClientStats{Rollbacks: 10, ReplayedTicks: 100, BytesSent: 4000, BytesReceived: 8000,
		RTT: 120 * time.Millisecond, Ahead: 7.5, Confirmed: 90, NewestSnapshot: 88})
	assert.Equal(t, 5.0, tl.t.RollbacksPerS)
	assert.Equal(t, 50.0, tl.t.ReplayedPerS)
	assert.Equal(t, 2000.0, tl.t.UpBps)
	assert.Equal(t, 4000.0, tl.t.DownBps)
	assert.Equal(t, 120.0, tl.t.RTTms)
	assert.Equal(t, 7.5, tl.t.Ahead)
	assert.Equal(t, uint32(90), tl.t.Confirmed)
	assert.Equal(t, uint32(88), tl.t.Snapshot)
}

func TestTimelineErrorPlot(t *testing.T) {
	var tl timeline
	tl.sample(0, systems.ClientStats{})
	tl.corrected(0.5, false)
	tl.corrected(0.25, false)
	tl.sample(150*time.Millisecond, systems.ClientStats{})
	assert.Equal(t, []float64{0.5}, tl.t.Errors, "the largest correction of the interval")
	tl.sample(250*time.Millisecond, systems.ClientStats{})
	assert.Equal(t, []float64{0.5, 0}, tl.t.Errors)
	assert.Equal(t, 0.5, tl.t.MaxError)

	// The plot holds errorSamples; a long pause does not loop over every
	// missed step.
	tl.corrected(2, false)
	tl.sample(time.Hour, systems.ClientStats{})
	assert.Len(t, tl.t.Errors, errorSamples)
	assert.Equal(t, 2.0, tl.t.Errors[0])
	assert.Equal(t, make([]float64, errorSamples-1), tl.t.Errors[1:])
	tl.sample(time.Hour+errorStep, systems.ClientStats{})
	assert.Len(t, tl.t.Errors, errorSamples)
}
