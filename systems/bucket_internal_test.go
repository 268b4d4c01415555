package systems

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A bucket starts full, refuses once empty, refills at its rate up to its
// depth, and a clock going back adds nothing.
func TestBucket(t *testing.T) {
	var b bucket
	now := 10 * time.Second
	for i := range 3 {
		assert.True(t, b.take(now, 2, 3), "burst %d", i)
	}
	assert.False(t, b.take(now, 2, 3), "empty")
	assert.False(t, b.take(now+400*time.Millisecond, 2, 3), "0.8 of a token")
	assert.True(t, b.take(now+500*time.Millisecond, 2, 3), "one token in half a second")
	assert.False(t, b.take(now, 2, 3), "the clock went back")
	n := 0
	for b.take(now+time.Hour, 2, 3) {
		n++
	}
	assert.Equal(t, 3, n, "never more than the depth")
}
