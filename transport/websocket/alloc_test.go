package websocket

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// roundTrip sends msg from client to server and back, spinning until each
// arrives: the benchmark's and the allocation test's unit of work.
func roundTrip(tb testing.TB, client, server transport.Conn, msg, buf []byte) {
	if err := client.Send(msg); err != nil {
		tb.Fatal(err)
	}
	for {
		if _, ok := server.Receive(buf); ok {
			break
		}
		runtime.Gosched()
	}
	if err := server.Send(msg); err != nil {
		tb.Fatal(err)
	}
	for {
		if _, ok := client.Receive(buf); ok {
			break
		}
		runtime.Gosched()
	}
}

func TestSteadyStateSendReceiveDoNotAllocate(t *testing.T) {
	client, server := pair(t, ListenerOptions{}, Options{})
	msg, buf := make([]byte, 1000), make([]byte, transport.MaxDatagramSize)
	for range 50 {
		roundTrip(t, client, server, msg, buf)
	}
	allocs := testing.AllocsPerRun(100, func() { roundTrip(t, client, server, msg, buf) })
	t.Logf("%.2f allocations per round trip, all goroutines", allocs)
	require.NotNil(t, client)
	assert.Zero(t, allocs)
}
