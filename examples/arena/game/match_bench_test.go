package game

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkReplayPolicies plays the same 8-client match under both
// rollback policies in one run and reports replayed ticks per simulated
// second (per client) for each, and their ratio: how much replay work
// rolling back only on a misprediction saves against rolling back on every
// snapshot (Netcode for Entities' behaviour).
func BenchmarkReplayPolicies(b *testing.B) {
	for _, rtt := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) {
			b.ReportAllocs()
			replayed := map[RollbackPolicy]float64{}
			var wall = map[RollbackPolicy]time.Duration{}
			for i := 0; i < b.N; i++ {
				for _, p := range []RollbackPolicy{RollbackOnMismatch, RollbackAlways} {
					cfg := DefaultConfig()
					cfg.Clients, cfg.Duration, cfg.RTT, cfg.Rollback = 8, 20*time.Second, rtt, p
					m, err := NewMatch(cfg)
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					r := m.Run(nil)
					wall[p] += time.Since(start)
					var sum uint64
					for _, c := range r.Clients {
						sum += c.ReplayedTicks
					}
					sim := cfg.Duration.Seconds() + cfg.Settle().Seconds()
					replayed[p] += float64(sum) / float64(len(r.Clients)) / sim
				}
			}
			n := float64(b.N)
			mm, al := replayed[RollbackOnMismatch]/n, replayed[RollbackAlways]/n
			b.ReportMetric(mm, "replayed/s-mismatch")
			b.ReportMetric(al, "replayed/s-always")
			b.ReportMetric(al/mm, "x-always")
			b.ReportMetric(float64(wall[RollbackAlways])/float64(wall[RollbackOnMismatch]), "x-wall-always")
		})
	}
}

// BenchmarkArena8 reports simulated seconds per wall second of the default
// 8-client arena (RTT 100 ms, jitter 10 ms, 1 % loss).
func BenchmarkArena8(b *testing.B) {
	b.ReportAllocs()
	var sim float64
	for i := 0; i < b.N; i++ {
		cfg := DefaultConfig()
		cfg.Clients, cfg.Duration = 8, 30*time.Second
		m, err := NewMatch(cfg)
		if err != nil {
			b.Fatal(err)
		}
		m.Run(nil)
		sim += cfg.Duration.Seconds() + cfg.Settle().Seconds()
	}
	b.ReportMetric(sim/b.Elapsed().Seconds(), "sim-s/wall-s")
}

// BenchmarkSteadyStateTick advances a warmed-up 8-client match by one tick
// of virtual time (server, 8 clients, their rollbacks and the links). The
// per-tick hot path must not allocate.
func BenchmarkSteadyStateTick(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 8, time.Hour
	m, err := NewMatch(cfg)
	if err != nil {
		b.Fatal(err)
	}
	h := m.Harness
	h.Run(10 * time.Second)
	tick := time.Second / time.Duration(cfg.TickRate)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Run(tick)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/9, "ns/endpoint-tick")
}
