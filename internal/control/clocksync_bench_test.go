package control_test

import (
	"slices"
	"testing"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
)

var leadSink float64

// BenchmarkLeadTracker measures what the server does per connection and
// tick: one arrival observed, the lead asked. The baseline, in the same
// loop on the same values, keeps the last 60 leads in a ring and scans
// them for the minimum (the naive window).
func BenchmarkLeadTracker(b *testing.B) {
	var l control.LeadTracker
	var ring [60]float64
	var tracked, naive time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		tick := gw.Tick(i)
		server := float64(i) - 2 - float64(i%13)/4
		start := time.Now()
		l.Observe(tick, server)
		lead, _ := l.Lead()
		tracked += time.Since(start)

		start = time.Now()
		ring[i%len(ring)] = float64(i) - server
		m := slices.Min(ring[:min(i+1, len(ring))])
		naive += time.Since(start)
		if m != lead {
			b.Fatalf("arrival %d: tracker %v, scan %v", i, lead, m)
		}
		leadSink = lead
		i++
	}
	b.ReportMetric(float64(tracked.Nanoseconds())/float64(b.N), "ns/arrival")
	b.ReportMetric(float64(naive.Nanoseconds())/float64(b.N), "scan-ns/arrival")
}
