package packet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBucket(t *testing.T) {
	b := newBucket(1000, 0)
	assert.True(t, b.allows(), "starts at zero, which allows one packet")
	b.spend(500)
	assert.False(t, b.allows())
	b.refill(400 * time.Millisecond)
	assert.False(t, b.allows(), "earned 400 of the 500 owed")
	b.refill(500 * time.Millisecond)
	assert.True(t, b.allows())
	b.refill(time.Hour)
	assert.Equal(t, 100.0, b.tokens, "at most 100 ms of budget kept")
	free := newBucket(0, 0)
	free.spend(1 << 20)
	assert.True(t, free.allows(), "zero means unlimited")
}
