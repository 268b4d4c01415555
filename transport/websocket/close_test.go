package websocket

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ghostwire/ghostwire/transport"
)

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
