package web

import (
	"testing"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/transport"
)

// BenchmarkLink sends a 200-byte datagram each way per op through the
// conditioner (50 ms RTT, 5 ms jitter, 1 % loss and duplication) beside
// the bare memory pair it wraps, the baseline: the ratio is the
// conditioner's cost on the game loop's path.
func BenchmarkLink(b *testing.B) {
	for _, bc := range []struct {
		name string
		wrap bool
	}{{"bare", false}, {"conditioned", true}} {
		b.Run(bc.name, func(b *testing.B) {
			clock := &gw.VirtualTime{}
			net := transport.NewMemoryNetwork(clock, 1)
			client, server, err := net.Pair(transport.Conditions{})
			if err != nil {
				b.Fatal(err)
			}
			if bc.wrap {
				server = newLinkConn(server, clock, 1, Link{RTTms: 50, JitterMS: 5, LossPct: 1, DupPct: 1}, false)
			}
			p, buf := make([]byte, 200), make([]byte, transport.MaxDatagramSize)
			delivered := 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				_ = server.Send(p)
				_ = client.Send(p)
				clock.Advance(time.Millisecond)
				for {
					if _, ok := server.Receive(buf); !ok {
						break
					}
					delivered++
				}
				for {
					if _, ok := client.Receive(buf); !ok {
						break
					}
					delivered++
				}
			}
			b.ReportMetric(float64(delivered)/float64(b.N), "datagrams/op")
		})
	}
}
