package ghostreg

import (
	"testing"

	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// A client's states of a ghost: one slot while it rests, the window's
// once it changes, every state of the window's ticks found by its exact
// tick (across the 2³² wrap), older ones dropped, the rings reused from
// their slabs.
func TestStatesKeepTheRelativeWindow(t *testing.T) {
	slabs := newStateSlabs(8)
	var s states
	s.size = 8
	start := gw.Tick(1<<32 - 20)
	fill := func(tick gw.Tick) { copy(s.next(tick, slabs), []byte{byte(tick), 1, 2, 3, 4, 5, 6, byte(tick >> 8)}) }
	fill(start)
	require.Equal(t, 1, s.slots(), "a ghost at rest holds one slot")
	fill(start) // a second record of the same tick replaces the first
	require.Equal(t, 1, s.n)
	for k := 1; k <= 100; k++ {
		fill(start.Add(k))
		require.LessOrEqual(t, s.n, protocol.RelativeWindow+1)
	}
	require.Equal(t, statesMax, s.slots())
	now := start.Add(100)
	for k := 0; k <= protocol.RelativeWindow; k++ {
		st, ok := s.at(now.Add(-k))
		require.Truef(t, ok, "%d ticks back", k)
		require.Equal(t, byte(now.Add(-k)), st[0])
	}
	_, ok := s.at(now.Add(-protocol.RelativeWindow - 1))
	require.False(t, ok, "beyond the window")
	tick, st := s.newest()
	require.Equal(t, now, tick)
	require.Equal(t, byte(now), st[0])

	ring := &s.buf[0]
	s.release(slabs)
	require.Nil(t, s.buf)
	var u states
	u.size = 8
	u.next(1, slabs)
	u.next(2, slabs)
	require.Same(t, ring, &u.buf[0], "the ring is reused")
}

// A server's past encodings: the one current at a baseline is the newest
// that began at or before it; a ghost that changed more than the window's
// times since has none.
func TestEncodingsFindTheOneCurrentAtABaseline(t *testing.T) {
	ring := encodingSlab(2)
	var e encodings
	start := gw.Tick(1<<32 - 10)
	for k := 0; k < 3*protocol.RelativeWindow; k += 2 { // a change every other tick
		e.push([]byte{byte(k), 0}, start.Add(k), ring)
	}
	now := start.Add(3 * protocol.RelativeWindow)
	last := 3*protocol.RelativeWindow - 2
	for back := 2; back < 2*protocol.RelativeWindow; back++ {
		enc, from, ok := e.at(now.Add(-back), now)
		require.Truef(t, ok, "%d back", back)
		k := (3*protocol.RelativeWindow - back) &^ 1 // the change at or before
		require.Equal(t, start.Add(k), from)
		require.Equal(t, byte(k), enc[0])
	}
	_, _, ok := e.at(start.Add(last-2*protocol.RelativeWindow-1), now)
	require.False(t, ok, "older than the window's oldest")
	e.release(ring)
	require.Len(t, ring.free, 1)
}
