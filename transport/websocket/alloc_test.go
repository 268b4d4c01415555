package websocket

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/transport"
)

// waiter waits for a datagram as a latency measurement must, and a game
// loop (which polls once per tick) need not: it spins, yielding, for up to
// spinFor, then blocks briefly at a time so that the scheduler polls the
// network for the goroutines behind the Conn. It reuses one timer, so
// waiting does not allocate.
type waiter struct{ timer *time.Timer }

const spinFor = time.Millisecond

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
