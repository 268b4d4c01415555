package udp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByteQueueWrapsAndBounds(t *testing.T) {
	q := newByteQueue(20)
	buf := make([]byte, 20)
	for round := range 50 { // many laps around the ring
		p := []byte{byte(round), byte(round + 1), byte(round + 2), byte(round + 3), byte(round + 4)}
		require.True(t, q.push(p))
		require.True(t, q.push(p[:3]))
		n, fits, ok := q.pop(buf)
		require.True(t, ok && fits)
		assert.Equal(t, p, buf[:n])
		n, fits, ok = q.pop(buf)
		require.True(t, ok && fits)
		assert.Equal(t, p[:3], buf[:n])
	}
	assert.Zero(t, q.bytes())
	assert.True(t, q.push(make([]byte, 18)), "exactly full")
	assert.False(t, q.push([]byte{1}), "nothing more fits")
	assert.Equal(t, 20, q.bytes())
	_, _, ok := q.pop(buf)
	assert.True(t, ok)
	_, _, ok = q.pop(buf)
	assert.False(t, ok, "empty")
}

func TestByteQueueShortBuffer(t *testing.T) {
	q := newByteQueue(100)
	q.push([]byte("long datagram"))
	q.push([]byte("ok"))
	buf := make([]byte, 4)
	n, fits, ok := q.pop(buf)
	assert.True(t, ok)
	assert.False(t, fits)
	assert.Equal(t, 13, n)
	n, fits, ok = q.pop(buf)
	require.True(t, ok && fits)
	assert.Equal(t, "ok", string(buf[:n]))
}
