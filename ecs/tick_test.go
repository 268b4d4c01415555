package ecs_test

import (
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
	assert.Equal(t, "4294967295", gw.Tick(math.MaxUint32).String())
}
