package ecs_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestTickOrderAndDistanceAcrossTheWraps(t *testing.T) {
	for _, base := range []gw.Tick{0, 1 << 31, math.MaxUint32 - 3, 1<<31 - 2} {
		next := base.Add(5)
		assert.Equal(t, int32(5), next.Sub(base), "base %d", base)
		assert.Equal(t, int32(-5), base.Sub(next), "base %d", base)
		assert.True(t, base.Before(next), "base %d", base)
		assert.True(t, next.After(base), "base %d", base)
		assert.False(t, base.After(next), "base %d", base)
		assert.False(t, base.Before(base), "base %d", base)
		assert.Equal(t, base, next.Add(-5), "base %d", base)
	}
	assert.Equal(t, gw.Tick(2), gw.Tick(math.MaxUint32).Add(3))
	assert.Equal(t, int32(1), gw.Tick(0).Sub(math.MaxUint32))
	assert.Equal(t, uint32(1), gw.Tick(0).Since(math.MaxUint32))
	start := gw.Tick(math.MaxUint32 - 3)
	far := start.Add(1<<31 + 7) // past where Sub turns negative
	assert.Negative(t, far.Sub(start))
	assert.Equal(t, uint32(1<<31+7), far.Since(start), "Since keeps counting up")
	assert.Equal(t, "4294967295", fmt.Sprint(gw.Tick(math.MaxUint32)))
}

func TestTickAtSplitsAContinuousTickAcrossTheWraps(t *testing.T) {
	for _, tc := range []struct {
		tick gw.Tick
		want float64
	}{
		{5, 5},
		{2, 1<<32 + 2},              // just past 2³²
		{math.MaxUint32, 1<<32 - 1}, // just before it
		{1<<31 + 1, 1<<31 + 1},      // across 2³¹
		{math.MaxUint32, -1},        // before a server's first tick
		{7, 3*(1<<32) + 7},          // three wraps on
	} {
		tick, frac := gw.TickAt(tc.want + 0.25)
		assert.Equal(t, tc.tick, tick, "TickAt(%v)", tc.want+0.25)
		assert.Equal(t, 0.25, frac, "TickAt(%v)", tc.want+0.25)
	}
	tick, frac := gw.TickAt(-0.75)
	assert.Equal(t, gw.Tick(math.MaxUint32), tick)
	assert.Equal(t, 0.25, frac)
}
