package websocket

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/internal/conntest"
)

func TestConformance(t *testing.T) {
	conntest.Run(t, conntest.Harness{
		NewPair: func(t *testing.T) (transport.Conn, transport.Conn) {
			return pair(t, ListenerOptions{}, Options{})
		},
		Settle: func(t *testing.T, cond func() bool) { settle(t, cond) },
	})
}

// receiveOne waits for one datagram on c and returns it.
func receiveOne(t *testing.T, c transport.Conn) []byte {
	t.Helper()
	buf := make([]byte, transport.MaxDatagramSize)
	var n int
	settle(t, func() bool {
		var ok bool
		n, ok = c.Receive(buf)
		return ok
	})
	return buf[:n]
}

func TestGoroutinesEndWhenBothEndsClose(t *testing.T) {
	ln, url := serve(t, ListenerOptions{})
	idle := goleak.IgnoreCurrent() // the HTTP server's own goroutines
	client := dial(t, url, Options{})
	server := accept(t, ln)
	require.NoError(t, client.Send([]byte("hi")))
	assert.Equal(t, "hi", string(receiveOne(t, server)))
	require.NoError(t, client.Close())
	require.NoError(t, server.Close())
	goleak.VerifyNone(t, idle)
}

// TestGoroutinesEndWhenThePeerCloses: an end whose peer closed needs no
// Close of its own to release its goroutines and socket.
func TestGoroutinesEndWhenThePeerCloses(t *testing.T) {
	ln, url := serve(t, ListenerOptions{})
	idle := goleak.IgnoreCurrent()
	client := dial(t, url, Options{})
	server := accept(t, ln)
	require.NoError(t, server.Send([]byte("bye")))
	require.NoError(t, server.Close())
	settle(t, func() bool { return client.Send([]byte{1}) == transport.ErrClosed })
	goleak.VerifyNone(t, idle)
	assert.Equal(t, "bye", string(receiveOne(t, client)), "what arrived stays receivable")
	require.NoError(t, client.Close(), "first Close of the end whose peer closed")
	require.ErrorIs(t, client.Close(), transport.ErrClosed)
}

// TestFlushTimeoutCutsAStalledPeer: Close on an end whose peer does not read
// gives up flushing after FlushTimeout, and its goroutines end although the
// peer stays connected.
func TestFlushTimeoutCutsAStalledPeer(t *testing.T) {
	ln, url := serve(t, ListenerOptions{Conn: Options{SendQueue: 16, FlushTimeout: 50 * time.Millisecond}})
	idle := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	peer, _, err := websocket.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer func() { _ = peer.CloseNow() }()
	server := accept(t, ln)
	stall(t, server.(*conn), 1000)

	require.NoError(t, server.Close())
	settle(t, func() bool {
		select {
		case <-server.(*conn).ended:
			return true
		default:
			return false
		}
	})
	goleak.VerifyNone(t, idle)
}

func TestDefaultsAndOptions(t *testing.T) {
	assert.Equal(t, Options{SendQueue: DefaultQueueLen, ReceiveQueue: DefaultQueueLen, FlushTimeout: DefaultFlushTimeout},
		Options{}.withDefaults())
	assert.Equal(t, Options{SendQueue: DefaultQueueLen, ReceiveQueue: DefaultQueueLen, FlushTimeout: DefaultFlushTimeout},
		Options{SendQueue: -1, ReceiveQueue: -5, FlushTimeout: -time.Second}.withDefaults())
	assert.Equal(t, Options{SendQueue: 3, ReceiveQueue: 4, FlushTimeout: time.Second},
		Options{SendQueue: 3, ReceiveQueue: 4, FlushTimeout: time.Second}.withDefaults())
	assert.Equal(t, DefaultMaxPending, NewListener(ListenerOptions{}).maxPending)
}

// rawPeer dials the Listener with the WebSocket library itself, so a test
// can send what a Conn never sends and read (or not) at will.
func rawPeer(t *testing.T, opts ListenerOptions) (peer *websocket.Conn, server transport.Conn) {
	t.Helper()
	ln, url := serve(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	peer, _, err := websocket.Dial(ctx, url, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = peer.CloseNow() })
	server = accept(t, ln)
	t.Cleanup(func() { _ = server.Close() })
	return peer, server
}

// closeStatus reads from peer until the connection ends and returns the
// status the other end closed it with.
func closeStatus(t *testing.T, peer *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	for {
		if _, _, err := peer.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func TestOversizedMessageIsDroppedCountedAndEndsTheConnection(t *testing.T) {
	for _, size := range []int{transport.MaxDatagramSize + 1, 64 << 10} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			peer, server := rawPeer(t, ListenerOptions{})
			ctx := context.Background()
			require.NoError(t, peer.Write(ctx, websocket.MessageBinary, []byte("before")))
			// The server may cut the connection before a long message is
			// written whole, failing the write; otherwise it says why.
			if err := peer.Write(ctx, websocket.MessageBinary, make([]byte, size)); err == nil {
				assert.Equal(t, websocket.StatusMessageTooBig, closeStatus(t, peer))
			}
			settle(t, func() bool { return server.Send([]byte{1}) == transport.ErrClosed })
			buf := make([]byte, 2*size)
			n, ok := server.Receive(buf)
			require.True(t, ok, "what arrived before stays receivable")
			assert.Equal(t, "before", string(buf[:n]))
			_, ok = server.Receive(buf)
			assert.False(t, ok, "the oversized message is never delivered, not even in part")
			st := server.Stats()
			assert.Equal(t, uint64(1), st.Truncated)
			assert.Equal(t, uint64(1), st.Received)
		})
	}
}

func TestLargestMessageIsDelivered(t *testing.T) {
	peer, server := rawPeer(t, ListenerOptions{})
	require.NoError(t, peer.Write(context.Background(), websocket.MessageBinary, make([]byte, transport.MaxDatagramSize)))
	buf := make([]byte, 2*transport.MaxDatagramSize)
	var n int
	settle(t, func() bool {
		var ok bool
		n, ok = server.Receive(buf)
		return ok
	})
	assert.Equal(t, transport.MaxDatagramSize, n)
}

func TestEmptyMessageIsDroppedAndCounted(t *testing.T) {
	peer, server := rawPeer(t, ListenerOptions{})
	ctx := context.Background()
	require.NoError(t, peer.Write(ctx, websocket.MessageBinary, nil))
	require.NoError(t, peer.Write(ctx, websocket.MessageBinary, []byte("ok")))
	buf := make([]byte, 16)
	var n int
	settle(t, func() bool {
		var ok bool
		n, ok = server.Receive(buf)
		return ok
	})
	assert.Equal(t, "ok", string(buf[:n]))
	assert.Equal(t, uint64(1), server.Stats().Truncated)
	require.NoError(t, server.Send([]byte{1}), "an empty message does not end the connection")
}

func TestTextMessageEndsTheConnection(t *testing.T) {
	peer, server := rawPeer(t, ListenerOptions{})
	require.NoError(t, peer.Write(context.Background(), websocket.MessageText, []byte("hello")))
	assert.Equal(t, websocket.StatusUnsupportedData, closeStatus(t, peer))
	settle(t, func() bool { return server.Send([]byte{1}) == transport.ErrClosed })
	_, ok := server.Receive(make([]byte, 16))
	assert.False(t, ok, "the text is not delivered as a datagram")
}

// TestReceiveQueueCapDropsAndCounts: a client that stops calling Receive
// keeps only ReceiveQueue datagrams; the rest are dropped and counted.
func TestReceiveQueueCapDropsAndCounts(t *testing.T) {
	client, server := pair(t, ListenerOptions{}, Options{ReceiveQueue: 8})
	for i := range 100 {
		require.NoError(t, server.Send([]byte{byte(i)}))
	}
	settle(t, func() bool { return client.Stats().Dropped == 92 })
	buf := make([]byte, 16)
	for i := range 8 {
		n, ok := client.Receive(buf)
		require.True(t, ok)
		assert.Equal(t, []byte{byte(i)}, buf[:n], "the oldest are kept")
	}
	_, ok := client.Receive(buf)
	assert.False(t, ok)
	assert.Equal(t, uint64(0), server.Stats().Dropped)
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// stall sends size-byte datagrams on c until its writer is stuck on a peer
// that does not read: for 200ms the send queue has stayed full and nothing
// more went onto the socket. It returns the datagrams the writer took from
// the queue.
func stall(t *testing.T, c *conn, size int) (written uint64) {
	t.Helper()
	const window = 200 * time.Millisecond
	msg := make([]byte, size)
	lastProgress := time.Now()
	settle(t, func() bool {
		for range 100 {
			require.NoError(t, c.Send(msg), "Send never blocks and never fails on a live connection")
			runtime.Gosched() // let the writer drain what the socket still takes
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		now := c.stats.Sent - c.stats.Dropped - uint64(c.sendq.Len())
		if now != written || !c.sendq.Full() {
			written, lastProgress = now, time.Now()
			return false
		}
		return time.Since(lastProgress) > window
	})
	return written
}

// TestStalledPeerDoesNotGrowServerMemory: a peer that never reads fills the
// socket buffers, then the server's send queue; from then on Sends are
// dropped and counted, and the server holds no more than its queue.
func TestStalledPeerDoesNotGrowServerMemory(t *testing.T) {
	const size, queue = 1000, 16
	_, server := rawPeer(t, ListenerOptions{Conn: Options{SendQueue: queue}})
	before := heapInUse()
	written := stall(t, server.(*conn), size)
	grown := int64(heapInUse()) - int64(before)
	st := server.Stats()
	t.Logf("the socket took %d KB before the writer stalled; %d of %d Sends dropped", written*size/1024, st.Dropped, st.Sent)
	assert.Greater(t, written*size, uint64(64<<10), "the socket buffers filled first")
	assert.Positive(t, st.Dropped)
	assert.Equal(t, st.Sent, written+st.Dropped+queue, "each Send was written, dropped, or waits in the full queue")
	assert.Less(t, grown, int64(1<<20), "the server keeps at most its queue, not the megabytes offered")
}

func TestSteadyStateSendReceiveDoNotAllocate(t *testing.T) {
	client, server := pair(t, ListenerOptions{}, Options{})
	msg, buf := make([]byte, 1000), make([]byte, transport.MaxDatagramSize)
	w := newWaiter()
	for range 50 {
		w.roundTrip(t, client, server, msg, buf)
	}
	// AllocsPerRun counts every goroutine's allocations: the Conns' readers
	// and writers and the WebSocket library beneath them.
	assert.Zero(t, testing.AllocsPerRun(100, func() { w.roundTrip(t, client, server, msg, buf) }))
}
