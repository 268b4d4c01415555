package websocket

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/internal/conntest"
)

// settleTimeout bounds every wait on real sockets: generous, so a loaded
// 2-core machine never fails a test that a quick one passes.
const settleTimeout = 10 * time.Second

// settle polls cond until it holds, failing t after settleTimeout.
func settle(t testing.TB, cond func() bool) {
	t.Helper()
	conntest.Poll(t, settleTimeout, cond)
}

// serve starts an HTTP server on loopback with a Listener at /ws and returns
// the Listener and the socket's ws:// URL. Both close when t ends.
func serve(t testing.TB, opts ListenerOptions) (*Listener, string) {
	t.Helper()
	ln := NewListener(opts)
	srv := httptest.NewServer(ln)
	t.Cleanup(func() {
		_ = ln.Close()
		srv.Close()
	})
	return ln, "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}

// accept waits for the Listener's next connection.
func accept(t testing.TB, ln *Listener) transport.Conn {
	t.Helper()
	var c transport.Conn
	settle(t, func() bool {
		var ok bool
		c, ok = ln.Accept()
		return ok
	})
	return c
}

// dial connects a client to url, closing it when t ends.
func dial(t testing.TB, url string, opts Options) transport.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	c, err := Dial(ctx, url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pair returns a connected client and server over loopback WebSocket.
func pair(t testing.TB, opts ListenerOptions, clientOpts Options) (client, server transport.Conn) {
	t.Helper()
	ln, url := serve(t, opts)
	client = dial(t, url, clientOpts)
	server = accept(t, ln)
	t.Cleanup(func() { _ = server.Close() })
	return client, server
}

// waiter waits for a datagram as a latency measurement must, and a game
// loop (which polls once per tick) need not: it spins, yielding, for up to
// spinFor, then blocks briefly at a time so that the scheduler polls the
// network for the goroutines behind the Conn. It reuses one timer, so
// waiting does not allocate.
type waiter struct{ timer *time.Timer }

const spinFor = 5 * time.Millisecond

func newWaiter() *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{timer: t}
}

// receive waits until c returns a datagram into buf, failing tb after
// settleTimeout.
func (w *waiter) receive(tb testing.TB, c transport.Conn, buf []byte) {
	start := time.Now()
	for {
		if _, ok := c.Receive(buf); ok {
			return
		}
		waited := time.Since(start)
		switch {
		case waited < spinFor:
			runtime.Gosched()
		case waited < settleTimeout:
			w.timer.Reset(50 * time.Microsecond)
			<-w.timer.C
		default:
			tb.Fatalf("no datagram arrived within %v", settleTimeout)
		}
	}
}

// roundTrip sends msg from client to server and back.
func (w *waiter) roundTrip(tb testing.TB, client, server transport.Conn, msg, buf []byte) {
	if err := client.Send(msg); err != nil {
		tb.Fatal(err)
	}
	w.receive(tb, server, buf)
	if err := server.Send(msg); err != nil {
		tb.Fatal(err)
	}
	w.receive(tb, client, buf)
}
