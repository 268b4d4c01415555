package ecs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestVirtualTimeRefusesToGoBack(t *testing.T) {
	var vt gw.VirtualTime
	vt.Advance(time.Millisecond)
	assert.Equal(t, time.Millisecond, vt.Now())
	assert.Panics(t, func() { vt.Advance(-time.Millisecond) })
}

func TestRealTimeMovesForward(t *testing.T) {
	r := gw.NewRealTime()
	a := r.Now()
	b := r.Now()
	assert.GreaterOrEqual(t, b, a)
	assert.GreaterOrEqual(t, a, time.Duration(0))
}
