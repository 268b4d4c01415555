package fixedclock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/fixedclock"
)

func TestFixedClockAccumulates(t *testing.T) {
	var vt gw.VirtualTime
	c, err := fixedclock.New(&vt, fixedclock.Options{TickRate: 50})
	require.NoError(t, err)
	assert.Equal(t, 20*time.Millisecond, c.Interval())
	assert.Equal(t, 0, c.Advance())
	vt.Advance(10 * time.Millisecond)
	assert.Equal(t, 0, c.Advance())
	assert.InDelta(t, 0.5, c.Alpha(), 1e-9)
	vt.Advance(15 * time.Millisecond)
	assert.Equal(t, 1, c.Advance())
	assert.InDelta(t, 0.25, c.Alpha(), 1e-9)
	vt.Advance(30 * time.Millisecond)
	assert.InDelta(t, 1.75, c.Pending(), 1e-9, "time not yet advanced counts")
	vt.Advance(5 * time.Millisecond)
	assert.Equal(t, 2, c.Advance())
	assert.InDelta(t, 0, c.Alpha(), 1e-9)
	assert.InDelta(t, 0, c.Pending(), 1e-9)
}

func TestFixedClockCapsCatchUpAndCountsDrops(t *testing.T) {
	var vt gw.VirtualTime
	c, err := fixedclock.New(&vt, fixedclock.Options{})
	require.NoError(t, err)
	vt.Advance(time.Second) // a one-second stall at 60 Hz
	assert.Equal(t, 8, c.Advance())
	assert.Equal(t, uint64(52), c.DroppedTicks())
	vt.Advance(c.Interval())
	assert.Equal(t, 1, c.Advance(), "dropped time is gone, not owed")
}

func TestFixedClockScale(t *testing.T) {
	var vt gw.VirtualTime
	c, err := fixedclock.New(&vt, fixedclock.Options{TickRate: 100, MaxCatchUp: 1000})
	require.NoError(t, err)
	c.SetScale(1.05)
	assert.Equal(t, 1.05, c.Scale())
	ticks := 0
	for i := 0; i < 10; i++ {
		vt.Advance(time.Second)
		ticks += c.Advance()
	}
	assert.Equal(t, 1050, ticks)
	assert.Panics(t, func() { c.SetScale(3) })
	assert.Panics(t, func() { c.SetScale(0.1) })
}

func TestFixedClockValidates(t *testing.T) {
	var vt gw.VirtualTime
	_, err := fixedclock.New(&vt, fixedclock.Options{TickRate: -5})
	assert.EqualError(t, err, "ecs: tick rate -5 outside 1..1000")
	_, err = fixedclock.New(&vt, fixedclock.Options{MaxCatchUp: 5000})
	assert.EqualError(t, err, "ecs: max catch-up 5000 outside 1..1000")
}
