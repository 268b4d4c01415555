package ecs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestTickRingNeverReturnsAnotherTicksData(t *testing.T) {
	r := gw.NewTickRing[int](8)
	assert.Equal(t, 8, r.Size())
	_, ok := r.Get(0)
	assert.False(t, ok, "an empty slot is not tick 0")
	for tick := gw.Tick(0); tick < 20; tick++ {
		r.Set(tick, int(tick)*10)
	}
	for tick := gw.Tick(0); tick < 12; tick++ {
		_, ok := r.Get(tick)
		assert.Falsef(t, ok, "tick %d was overwritten", tick)
		assert.Nil(t, r.Ptr(tick))
	}
	for tick := gw.Tick(12); tick < 20; tick++ {
		v, ok := r.Get(tick)
		assert.True(t, ok)
		assert.Equal(t, int(tick)*10, v)
		assert.True(t, r.Has(tick))
	}
	*r.Ptr(15) = 7
	v, _ := r.Get(15)
	assert.Equal(t, 7, v)
	r.Delete(7) // not held: no effect on 15
	assert.True(t, r.Has(15))
	r.Delete(15)
	assert.False(t, r.Has(15))
	r.Clear()
	assert.False(t, r.Has(19))
	assert.Panics(t, func() { gw.NewTickRing[int](0) })
}
