package transport_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// copySink keeps the baseline's copies observable so the compiler cannot drop them.
var copySink byte

// copyBaseline returns the cost in ns of copying size bytes into a ring of
// buffers, the least any datagram transport must do per packet.
func copyBaseline(n, size int) float64 {
	var ring [64][transport.MaxDatagramSize]byte
	src := make([]byte, size)
	start := time.Now()
	for i := range n {
		copy(ring[i%len(ring)][:size], src)
	}
	elapsed := time.Since(start)
	copySink = ring[n%len(ring)][0]
	return float64(elapsed.Nanoseconds()) / float64(n)
}

func BenchmarkSendReceive(b *testing.B) {
	const size = 100
	cases := []struct {
		name string
		c    transport.Conditions
	}{
		{"zero", transport.Conditions{}},
		{"conditioned", transport.Conditions{Up: transport.LinkConfig{
			Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.01, Duplicate: 0.01, Reorder: 0.01,
		}}},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			clock := &testClock{}
			client, server, err := transport.NewMemoryNetwork(clock, 1).Pair(bc.c)
			require.NoError(b, err)
			msg, buf := make([]byte, size), make([]byte, transport.MaxDatagramSize)
			// One op: send a datagram, advance 1ms, receive everything due.
			// With latency 20ms about 20 datagrams stay in flight.
			op := func() {
				if err := client.Send(msg); err != nil {
					b.Fatal(err)
				}
				clock.Advance(time.Millisecond)
				for {
					if _, ok := server.Receive(buf); !ok {
						return
					}
				}
			}
			for range 1000 { // reach steady state: free list and queue grown
				op()
			}
			copyNs := copyBaseline(b.N, size)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				op()
			}
			b.StopTimer()
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(ns, "ns/packet")
			b.ReportMetric(copyNs, "copy-ns/packet")
			if copyNs > 0 {
				b.ReportMetric(ns/copyNs, "x-copy")
			}
		})
	}
}
