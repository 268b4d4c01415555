package ring

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingIsFIFOAcrossTheWrap(t *testing.T) {
	r := New(3)
	_, ok := r.Pop()
	assert.False(t, ok, "empty")
	next := byte(0)
	var got []byte
	for range 10 { // pushes and pops wrap the head around several times
		for !r.Full() {
			r.Push([]byte{next})
			next++
		}
		require.Equal(t, 3, r.Len())
		b, ok := r.Pop()
		require.True(t, ok)
		got = append(got, b[0])
		b, ok = r.Pop()
		require.True(t, ok)
		got = append(got, b[0])
	}
	for {
		b, ok := r.Pop()
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
