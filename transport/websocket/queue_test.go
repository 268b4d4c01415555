package websocket

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingIsFIFOAcrossTheWrap(t *testing.T) {
	r := newRing(3)
	_, ok := r.pop()
	assert.False(t, ok, "empty")
	next := byte(0)
	var got []byte
	for range 10 { // pushes and pops wrap the head around several times
		for !r.full() {
			r.push([]byte{next})
			next++
		}
		require.Equal(t, 3, r.len())
		b, ok := r.pop()
		require.True(t, ok)
		got = append(got, b[0])
		b, ok = r.pop()
		require.True(t, ok)
		got = append(got, b[0])
	}
	for {
		b, ok := r.pop()
		if !ok {
			break
		}
		got = append(got, b[0])
	}
	want := make([]byte, next)
	for i := range want {
		want[i] = byte(i)
	}
	assert.Equal(t, want, got)
	for _, item := range r.items {
		assert.Nil(t, item, "popped buffers are not kept reachable")
	}
}
