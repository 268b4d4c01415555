package websocket

import (
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// frozenClock is the memory baseline's clock: a perfect link delivers at
// once, so time never needs to move.
type frozenClock struct{}

func (frozenClock) Now() time.Duration { return 0 }

// memoryRoundTrip returns the cost in ns of n round trips of msg over a
// perfect memory link, the baseline of the WebSocket round trip: the same
// Conn calls with no socket beneath.
func memoryRoundTrip(b *testing.B, n int, msg []byte) float64 {
	client, server, err := transport.NewMemoryNetwork(frozenClock{}, 1).Pair(transport.Conditions{})
	if err != nil {
		b.Fatal(err)
	}
	buf, w := make([]byte, transport.MaxDatagramSize), newWaiter()
	for range 100 { // grow the link's free list
		w.roundTrip(b, client, server, msg, buf)
	}
	start := time.Now()
	for range n {
		w.roundTrip(b, client, server, msg, buf)
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// BenchmarkRoundTrip sends a 1,000-byte datagram from a client to a server
// over loopback WebSocket and back, polling Receive as a game loop does
// (without its tick), beside the same round trip over a memory link
// measured in the same run.
func BenchmarkRoundTrip(b *testing.B) {
	const size = 1000
	client, server := pair(b, ListenerOptions{}, Options{})
	msg, buf, w := make([]byte, size), make([]byte, transport.MaxDatagramSize), newWaiter()
	for range 100 { // reach steady state: buffers and socket warmed up
		w.roundTrip(b, client, server, msg, buf)
	}
	memoryNs := memoryRoundTrip(b, max(b.N, 1000), msg)
	b.SetBytes(2 * size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.roundTrip(b, client, server, msg, buf)
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/1e3, "µs/roundtrip")
	b.ReportMetric(memoryNs, "memory-ns/roundtrip")
	b.ReportMetric(ns/memoryNs, "x-memory")
}
