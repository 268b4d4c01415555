// Package conntest is the conformance suite of transport.Conn: every
// implementation in transport/... runs it, so they all keep the one contract
// documented on the interface.
package conntest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// Harness adapts one Conn implementation to Run.
type Harness struct {
	// NewPair returns a fresh, connected client/server pair on a perfect
	// link (nothing lost, duplicated or reordered) whose queues hold at least
	// 32 datagrams each way. It should close both ends in t.Cleanup;
	// Run's tests close them too, so Close on a closed end must only return
	// transport.ErrClosed.
	NewPair func(t *testing.T) (client, server transport.Conn)

	// Settle lets the link deliver until cond returns true, and fails t
	// when cond does not become true within the harness's bound: a link on
	// a virtual clock advances its clock, a link on real sockets polls with a
	// deadline (see Poll). cond may Send and Receive.
	Settle func(t *testing.T, cond func() bool)
}

// batch is the most datagrams a test sends one way before it settles, so a
// harness's queues need hold only this many.
const batch = 32

// Run runs the conformance tests against h, each as a subtest of t.
func Run(t *testing.T, h Harness) {
	t.Run("DatagramBoundaries", func(t *testing.T) { testBoundaries(t, h) })
	t.Run("SizeLimits", func(t *testing.T) { testSizeLimits(t, h) })
	t.Run("SendCopies", func(t *testing.T) { testSendCopies(t, h) })
	t.Run("ReceiveDropsWhatDoesNotFit", func(t *testing.T) { testTruncated(t, h) })
	t.Run("CloseByClient", func(t *testing.T) { testClose(t, h, true) })
	t.Run("CloseByServer", func(t *testing.T) { testClose(t, h, false) })
	t.Run("StatsCountBothWays", func(t *testing.T) { testStats(t, h) })
	t.Run("EveryDatagramIsReceivedOrCounted", func(t *testing.T) { testAccounting(t, h) })
}

// Poll is a Settle for links that deliver in real time: it checks cond at
// once and then every millisecond until it holds, and fails t when timeout
// passes first.
func Poll(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	if cond() {
		return
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			require.True(t, cond(), "condition not met within %v", timeout)
			return
		case <-tick.C:
			if cond() {
				return
			}
		}
	}
}

// pattern fills p with bytes that depend on its length and position, so a
// datagram cut, merged or mixed up with another does not match.
func pattern(p []byte) []byte {
	for i := range p {
		p[i] = byte(len(p)*7 + i*13)
	}
	return p
}

// drain receives everything src has now, appending copies to got.
func drain(src transport.Conn, got [][]byte) [][]byte {
	buf := make([]byte, transport.MaxDatagramSize)
	for {
		n, ok := src.Receive(buf)
		if !ok {
			return got
		}
		got = append(got, append([]byte(nil), buf[:n]...))
	}
}

func testBoundaries(t *testing.T, h Harness) {
	client, server := h.NewPair(t)
	for _, dir := range []struct {
		name     string
		from, to transport.Conn
	}{{"up", client, server}, {"down", server, client}} {
		t.Run(dir.name, func(t *testing.T) {
			for first := 1; first <= transport.MaxDatagramSize; first += batch {
				last := min(first+batch-1, transport.MaxDatagramSize)
				for size := first; size <= last; size++ {
					require.NoError(t, dir.from.Send(pattern(make([]byte, size))))
				}
				var got [][]byte
				h.Settle(t, func() bool {
					got = drain(dir.to, got)
					return len(got) >= last-first+1
				})
				seen := make(map[int]bool)
				for _, p := range got {
					require.Equal(t, pattern(make([]byte, len(p))), p, "datagram of %d bytes delivered whole", len(p))
					require.False(t, seen[len(p)], "datagram of %d bytes delivered twice", len(p))
					require.GreaterOrEqual(t, len(p), first)
					require.LessOrEqual(t, len(p), last)
					seen[len(p)] = true
				}
			}
			assert.Equal(t, uint64(transport.MaxDatagramSize), dir.to.Stats().Received)
		})
	}
}

func testSizeLimits(t *testing.T, h Harness) {
	client, server := h.NewPair(t)
	err := client.Send(make([]byte, transport.MaxDatagramSize+1))
	require.ErrorIs(t, err, transport.ErrDatagramSize)
	assert.Equal(t, "transport: datagram of 1201 bytes exceeds MaxDatagramSize 1200", err.Error())

	err = server.Send(nil)
	require.ErrorIs(t, err, transport.ErrDatagramSize)
	assert.Equal(t, "transport: empty datagram (0 bytes); a datagram must be 1 to 1200 bytes", err.Error())

	err = server.Send([]byte{})
	require.ErrorIs(t, err, transport.ErrDatagramSize)

	require.NoError(t, client.Send(make([]byte, transport.MaxDatagramSize)), "exactly MaxDatagramSize is allowed")
	require.NoError(t, server.Send([]byte{1}), "one byte is allowed")
	assert.Equal(t, uint64(1), client.Stats().Sent, "refused datagrams are not counted as sent")
	assert.Equal(t, uint64(1), server.Stats().Sent)

	var up, down [][]byte
	h.Settle(t, func() bool {
		up, down = drain(server, up), drain(client, down)
		return len(up) == 1 && len(down) == 1
	})
	assert.Len(t, up[0], transport.MaxDatagramSize)
	assert.Equal(t, []byte{1}, down[0])
}

func testSendCopies(t *testing.T, h Harness) {
	client, server := h.NewPair(t)
	p := []byte("hello")
	require.NoError(t, client.Send(p))
	copy(p, "XXXXX")
	var got [][]byte
	h.Settle(t, func() bool {
		got = drain(server, got)
		return len(got) == 1
	})
	assert.Equal(t, "hello", string(got[0]))
}

func testTruncated(t *testing.T, h Harness) {
	client, server := h.NewPair(t)
	require.NoError(t, client.Send([]byte("too long")))
	require.NoError(t, client.Send([]byte("fits")))
	buf := []byte("????????")[:4]
	var n int
	h.Settle(t, func() bool {
		var ok bool
		n, ok = server.Receive(buf)
		return ok
	})
	assert.Equal(t, "fits", string(buf[:n]), "the datagram after a truncated one is still delivered")
	assert.Equal(t, "fits????", string(buf[:8]), "nothing beyond n was written")

	require.NoError(t, client.Send([]byte("too long")))
	h.Settle(t, func() bool {
		n, ok := server.Receive(buf)
		require.False(t, ok)
		require.Zero(t, n)
		return server.Stats().Truncated == 2
	})
	assert.Equal(t, "fits", string(buf), "a truncated datagram is never half-delivered")

	st := server.Stats()
	assert.Equal(t, uint64(1), st.Received)
	assert.Equal(t, uint64(4), st.ReceivedBytes)
}

// testClose closes one end (the client when byClient) with datagrams in
// flight both ways.
func testClose(t *testing.T, h Harness, byClient bool) {
	client, server := h.NewPair(t)
	closer, peer := client, server
	if !byClient {
		closer, peer = server, client
	}
	for i := range 3 {
		require.NoError(t, closer.Send([]byte{byte(i)}))
	}
	require.NoError(t, peer.Send([]byte("never read")))
	require.NoError(t, closer.Close())

	require.ErrorIs(t, closer.Send([]byte("x")), transport.ErrClosed, "at once on the closed end")
	_, ok := closer.Receive(make([]byte, 16))
	assert.False(t, ok, "a closed end receives nothing")

	var got [][]byte
	h.Settle(t, func() bool {
		got = drain(peer, got)
		return len(got) == 3 && errors.Is(peer.Send([]byte("x")), transport.ErrClosed)
	})
	assert.Equal(t, [][]byte{{0}, {1}, {2}}, got, "the peer drains what was in flight")

	require.ErrorIs(t, closer.Close(), transport.ErrClosed, "second Close")
	require.NoError(t, peer.Close(), "first Close of the other end")
	require.ErrorIs(t, peer.Close(), transport.ErrClosed)
	require.ErrorIs(t, peer.Send([]byte("x")), transport.ErrClosed)
	assert.Equal(t, uint64(3), peer.Stats().Received, "stats survive Close")
	assert.Equal(t, uint64(3), closer.Stats().Sent)
}

func testStats(t *testing.T, h Harness) {
	client, server := h.NewPair(t)
	require.NoError(t, client.Send([]byte("abc")))
	require.NoError(t, client.Send([]byte("de")))
	require.NoError(t, server.Send([]byte("f")))
	var up, down [][]byte
	h.Settle(t, func() bool {
		up, down = drain(server, up), drain(client, down)
		return len(up) == 2 && len(down) == 1
	})
	assert.Equal(t, transport.Stats{Sent: 2, SentBytes: 5, Received: 1, ReceivedBytes: 1}, client.Stats())
	assert.Equal(t, transport.Stats{Sent: 1, SentBytes: 1, Received: 2, ReceivedBytes: 5}, server.Stats())
}

// testAccounting sends a burst far beyond a queue's length without waiting:
// every datagram must be received or counted as dropped at one end or the
// other, never lost without a trace.
func testAccounting(t *testing.T, h Harness) {
	const count = 2000
	client, server := h.NewPair(t)
	msg := make([]byte, 1000)
	for i := range count {
		msg[0] = byte(i)
		require.NoError(t, client.Send(msg))
	}
	accounted := func() uint64 {
		return server.Stats().Received + server.Stats().Dropped + client.Stats().Dropped
	}
	h.Settle(t, func() bool {
		drain(server, nil)
		return accounted() == count
	})
	assert.Equal(t, uint64(count), client.Stats().Sent)
	assert.Equal(t, uint64(count)*1000, client.Stats().SentBytes)
	assert.Equal(t, server.Stats().Received*1000, server.Stats().ReceivedBytes)
	assert.Positive(t, server.Stats().Received)
}
