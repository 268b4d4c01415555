package systems

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// The plausible view age adds the input's lead, the acknowledged
// snapshot's smoothed age plus four deviations, the claimed interpolation
// delay within its bound and the tolerance, across the tick wrap.
func TestMaxViewAgeFormula(t *testing.T) {
	base := gw.Tick(math.MaxUint32 - 5) // the acknowledgements cross the wrap
	m := newViewMeter(64)
	for i := 0; i < 200; i++ {
		at := base.Add(i + 6)
		m.acknowledged(at.Add(-6), at, 0.5) // every snapshot is 6.5 ticks old on arrival
	}
	assert.InDelta(t, 6.5, float64(m.ack.Smoothed())/1e6, 0.01)
	assert.InDelta(t, 0, float64(m.ack.Variation())/1e6, 0.01)
	tick := base.Add(210)
	m.arrived(tick, tick.Add(-3), 0.25) // arrived 2.75 ticks early
	assert.Equal(t, base.Add(199), m.ackedBefore(tick), "the newest snapshot acknowledged when it arrived")
	assert.Zero(t, m.ackedBefore(tick.Add(1)), "unknown")
	h := components.InputHeader{Tick: tick, InterpolationDelay: 4}
	assert.InDelta(t, 2.75+6.5+4+3, first(m.maxViewAge(&h, 9, 3)), 0.02)
	h.InterpolationDelay = 40 // a claim beyond the bound counts as the bound
	age, clamped := m.maxViewAge(&h, 9, 3)
	assert.InDelta(t, 2.75+6.5+9+3, age, 0.02)
	assert.True(t, clamped, "counted in ServerStats.InterpolationClaimsClamped")
	h.InterpolationDelay = float32(math.NaN())
	assert.InDelta(t, 2.75+6.5+3, first(m.maxViewAge(&h, 9, 3)), 0.02)
	h.Tick = tick.Add(1) // arrival unknown: counted as arriving on its tick
	h.InterpolationDelay = 0
	assert.InDelta(t, 6.5+3, first(m.maxViewAge(&h, 9, 3)), 0.02)
}

// Only acknowledgements newer than every earlier one are samples: an old
// one overtaken on the way, a duplicate, one of a snapshot never sent (a
// claim from the future) and "none yet" do not raise the round trip.
func TestAcknowledgementsThatDoNotCount(t *testing.T) {
	m := newViewMeter(64)
	h := components.InputHeader{Tick: 500}
	assert.InDelta(t, 3, first(m.maxViewAge(&h, 9, 3)), 1e-6, "nothing measured: nothing granted")
	m.acknowledged(0, 100, 0)
	assert.Zero(t, m.ack.Samples())
	m.acknowledged(98, 100, 0)
	m.acknowledged(98, 130, 0)  // duplicate
	m.acknowledged(90, 131, 0)  // reordered
	m.acknowledged(200, 132, 0) // never sent
	assert.Equal(t, uint64(1), m.ack.Samples())
	assert.InDelta(t, 2, float64(m.ack.Smoothed())/1e6, 0.01)
}

// first returns the plausible age of maxViewAge's answer.
func first(age float32, _ bool) float32 { return age }
