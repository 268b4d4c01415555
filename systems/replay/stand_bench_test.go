package replay

import (
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/systems/harness"
)

// timedStand times a Stand's Update: the spectators' whole cost on the
// live server's goroutine.
type timedStand struct {
	*Stand
	wall time.Duration
}

func (t *timedStand) Update() {
	start := time.Now()
	t.Stand.Update()
	t.wall += time.Since(start)
}

// BenchmarkSpectators runs two matches of the test game with 8 players in
// turn, a step each, both with a Stand 3 s behind, one with no spectator
// and one with 32. Per live tick it reports the live server's Update
// less the stand's work (the room's own cost, which spectators must not
// change), the stand's work (the delayed world's tick and the
// spectators' snapshots), and what one spectator costs: the difference
// of the stands' work over 32.
func BenchmarkSpectators(b *testing.B) {
	const spectators = 32
	type match struct {
		h      *harness.Harness
		stand  *timedStand
		update time.Duration // the live server's Updates, the stand's included
		ticks  int
	}
	setup := func(n int) *match {
		m := &match{}
		ho, st := spectatedOptions(b, 8, n, spectators, 3*time.Second, time.Hour, true)
		m.stand = &timedStand{Stand: st}
		ho.Server.Spectators = m.stand
		ho.OnServerTick = func(d time.Duration) { m.update += d; m.ticks++ }
		m.h = runSpectated(b, ho, n, 3*time.Second, 6*time.Second) // the spectators seated and 2 s of their world
		m.update, m.ticks, m.stand.wall = 0, 0, 0
		return m
	}
	ms := []*match{setup(0), setup(spectators)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range ms {
			m.h.Run(time.Second / 60)
		}
	}
	b.StopTimer()
	us := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(max(n, 1)) }
	liveNone, liveSpect := us(ms[0].update-ms[0].stand.wall, ms[0].ticks), us(ms[1].update-ms[1].stand.wall, ms[1].ticks)
	standNone, standSpect := us(ms[0].stand.wall, ms[0].ticks), us(ms[1].stand.wall, ms[1].ticks)
	b.ReportMetric(liveNone, "µs/tick-live-0")
	b.ReportMetric(liveSpect, "µs/tick-live-32")
	b.ReportMetric(standNone, "µs/tick-stand-0")
	b.ReportMetric(standSpect, "µs/tick-stand-32")
	b.ReportMetric((standSpect-standNone)/spectators, "µs/tick-per-spectator")
	if w := ms[1].stand.Stats().Watching; w != spectators {
		b.Fatalf("%d spectators watching, want %d", w, spectators)
	}
}
