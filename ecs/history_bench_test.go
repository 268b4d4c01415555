package ecs_test

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRecordRestore records and restores one tick of 3 predicted
// components (40 bytes per entity) and reports the cost per entity beside a
// plain copy of the same bytes out and back, measured in the same run.
func BenchmarkRecordRestore(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("entities=%d", n), func(b *testing.B) {
			g := newGame(b, n, 16)
			g.sched.Tick(g.world) // first record captures the layout
			tick := g.world.Tick()
			src := make([]byte, n*40)
			dst := make([]byte, n*40)

			start := time.Now()
			for i := 0; i < b.N; i++ {
				copy(dst, src)
				copy(src, dst)
			}
			baseline := time.Since(start)

			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g.history.Record(tick)
				if err := g.history.Restore(tick); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(n)
			base := float64(baseline.Nanoseconds()) / float64(b.N) / float64(n)
			b.ReportMetric(per, "ns/entity")
			b.ReportMetric(base, "copy-ns/entity")
			b.ReportMetric(per/base, "x-copy")
		})
	}
}

// BenchmarkReplay rolls back 12 ticks and replays them, beside running the
// same 12 ticks without rollback in the same run; x-ticks is the ratio
// (1.10 means 10 % overhead).
func BenchmarkReplay(b *testing.B) {
	const k = 12
	g := newGame(b, 1_000, 64)
	warmUp(g)
	b.ReportAllocs()
	var plain, replay time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		for j := 0; j < k; j++ {
			g.sched.Tick(g.world)
		}
		t1 := time.Now()
		if err := g.sched.Rollback(g.world, g.world.Tick()-k, nil); err != nil {
			b.Fatal(err)
		}
		replay += time.Since(t1)
		plain += t1.Sub(t0)
	}
	b.ReportMetric(float64(replay.Nanoseconds())/float64(b.N), "replay-ns/op")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "ticks-ns/op")
	b.ReportMetric(float64(replay)/float64(plain), "x-ticks")
}

// BenchmarkTick is one plain client tick of 1,000 predicted entities: the
// prediction stage and the history record. It must not allocate.
func BenchmarkTick(b *testing.B) {
	g := newGame(b, 1_000, 64)
	warmUp(g)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.sched.Tick(g.world)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/entity")
}

// BenchmarkRecord and BenchmarkRestore show each half alone.
func BenchmarkRecord(b *testing.B) {
	g := newGame(b, 1_000, 64)
	warmUp(g)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.history.Record(g.world.Tick())
	}
}

func BenchmarkRestore(b *testing.B) {
	g := newGame(b, 1_000, 64)
	warmUp(g)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.history.Restore(g.world.Tick()); err != nil {
			b.Fatal(err)
		}
	}
}

// warmUp fills every ring slot once, so buffers are allocated before the
// timer starts and the benchmark shows the steady state.
func warmUp(g *game) {
	for i := 0; i <= g.history.Capacity(); i++ {
		g.sched.Tick(g.world)
	}
}
