package websocket

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ghostwire/ghostwire/transport"
)

// frozenClock is the memory baseline's clock: a perfect link delivers at
// once, so time never needs to move.
type frozenClock struct{}

func (frozenClock) Now() time.Duration { return 0 }

// memoryRoundTrip returns the cost in ns of n round trips of msg over a
// perfect memory link: the same Conn calls with no socket beneath.
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

// bareRoundTrip returns the times of n round trips of msg over the
// WebSocket library alone: blocking Write and Read on both ends, with no
// queues, goroutines of ours or polling.
func bareRoundTrip(b *testing.B, n int, msg []byte) []time.Duration {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := context.Background()
		for {
			typ, p, err := ws.Read(ctx)
			if err != nil || ws.Write(ctx, typ, p) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.CloseNow()
	once := func() {
		if err := ws.Write(ctx, websocket.MessageBinary, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := ws.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for range 100 {
		once()
	}
	took := make([]time.Duration, n)
	for i := range took {
		start := time.Now()
		once()
		took[i] = time.Since(start)
	}
	return took
}

// percentile returns the p-th percentile of took, sorting it.
func percentile(took []time.Duration, p int) time.Duration {
	slices.Sort(took)
	return took[(len(took)-1)*p/100]
}

// BenchmarkRoundTrip sends a 1,000-byte datagram from a client to a server
// over loopback WebSocket and back, polling Receive, beside two baselines
// measured in the same run: the same round trip over a memory link, and
// over the WebSocket library alone with blocking calls. Besides the mean it
// reports the median and 99th percentile round trip, and the ratio of the
// medians to the bare library's, which survive a loaded machine better.
func BenchmarkRoundTrip(b *testing.B) {
	const size = 1000
	client, server := pair(b, ListenerOptions{}, Options{})
	msg, buf, w := make([]byte, size), make([]byte, transport.MaxDatagramSize), newWaiter()
	for range 100 { // reach steady state: buffers and socket warmed up
		w.roundTrip(b, client, server, msg, buf)
	}
	memoryNs := memoryRoundTrip(b, max(b.N, 1000), msg)
	bareTook := bareRoundTrip(b, max(b.N, 100), msg)
	bare := percentile(bareTook, 50)
	took := make([]time.Duration, b.N)
	b.SetBytes(2 * size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range took {
		start := time.Now()
		w.roundTrip(b, client, server, msg, buf)
		took[i] = time.Since(start)
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	p50 := percentile(took, 50)
	b.ReportMetric(ns/1e3, "µs/roundtrip")
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(percentile(took, 99).Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(bare.Nanoseconds())/1e3, "bare-p50-µs")
	b.ReportMetric(float64(percentile(bareTook, 99).Nanoseconds())/1e3, "bare-p99-µs")
	b.ReportMetric(float64(p50)/float64(bare), "p50-x-bare")
	b.ReportMetric(memoryNs, "memory-ns/roundtrip")
	b.ReportMetric(ns/memoryNs, "x-memory")
}
