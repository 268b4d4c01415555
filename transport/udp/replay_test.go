package udp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReplayWindow(t *testing.T) {
	var w replayWindow
	assert.False(t, w.seen(0))
	w.advance(0)
	assert.True(t, w.seen(0), "received twice")
	assert.False(t, w.seen(5))
	w.advance(5)
	assert.False(t, w.seen(3), "older but unseen is fine inside the window")
	w.advance(300)
	assert.True(t, w.seen(44), "300-256: too old to tell")
	assert.False(t, w.seen(45))
	assert.True(t, w.seen(300))
}

func TestReplayWindowTopOfSequenceSpace(t *testing.T) {
	// Written as `seq + 256 <= mostRecent`, this would wrap and reject the
	// legitimate packets at the top of the space (netcode errata).
	var w replayWindow
	top := uint64(math.MaxUint64)
	w.advance(top - 10)
	for seq := top - 9; ; seq++ {
		assert.False(t, w.seen(seq), "sequence %d", seq)
		w.advance(seq)
		assert.True(t, w.seen(seq))
		if seq == top {
			break
		}
	}
	assert.True(t, w.seen(top-300), "old")
	assert.True(t, w.seen(top-10))
	assert.False(t, w.seen(top-11), "inside the window, never received")
}

func TestReplayWindowSlotReuse(t *testing.T) {
	var w replayWindow
	w.advance(1)
	assert.False(t, w.seen(257), "same slot, newer sequence")
	w.advance(257)
	assert.True(t, w.seen(1), "slot now holds a newer sequence; 1 is also below the window")
}
