package packet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecvAcksShift(t *testing.T) {
	var r recvAcks
	r.record(65530)
	for _, s := range []Seq{65531, 65535, 2} { // across the wrap
		dup, stale := r.seen(s)
		require.False(t, dup || stale)
		r.record(s)
	}
	assert.Equal(t, Seq(2), r.newest)
	// 65535 is 3 below 2, 65531 is 7 below, 65530 is 8 below.
	assert.Equal(t, uint32(1<<2|1<<6|1<<7), r.bits)
	dup, _ := r.seen(65531)
	assert.True(t, dup)
	dup, stale := r.seen(1)
	assert.False(t, dup || stale)
	r.record(40) // 38 ahead: the old bits fall off
	assert.Equal(t, uint32(1<<(38-1)&0xffffffff), r.bits)
	_, stale = r.seen(7)
	assert.True(t, stale, "33 behind")
	dup, stale = r.seen(8)
	assert.False(t, dup || stale, "32 behind is the oldest bit")
}

func TestLossWindowSlides(t *testing.T) {
	var w lossWindow
	assert.Zero(t, w.rate())
	for range 256 {
		w.push(true)
	}
	assert.Equal(t, 1.0, w.rate())
	for range 192 {
		w.push(false)
	}
	assert.Equal(t, 0.25, w.rate())
	for range 1000 {
		w.push(false)
	}
	assert.Zero(t, w.rate())
}
