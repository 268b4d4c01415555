package game

import (
	"bytes"
	"io"
	"testing"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/harness/serverbench"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// BenchmarkRecording measures what recording costs the arena's server
// and what it gives: an 8-bot match at 150 ms and 5 % loss is played
// once with every client's traffic kept (serverbench), then two twins of
// its server run that traffic again in turn, step by step, one without a
// recorder and one recording to io.Discard, so both share the machine's
// load alike (in both orders, averaged). It reports each twin's server time per tick (Update:
// receive, tick, send) and their ratio, each twin's heap allocations per
// tick (run alone), the file's bytes per player per minute, and the
// replay's ticks per second (Player.Run, every hash checked).
func BenchmarkRecording(b *testing.B) {
	const play = 30 * time.Second
	cfg := recordedConfig(play)
	cfg.Chat = false
	traffic := &serverbench.Recorder{}
	cfg.Client = func(_ int, spec *harness.ClientSpec) { spec.Wrap = traffic.Wrap(spec.Link) }
	var file bytes.Buffer
	cfg.Record = &file
	m, err := NewMatch(cfg)
	if err != nil {
		b.Fatal(err)
	}
	traffic.Now = m.Harness.Time.Now
	m.Harness.Run(play)
	if err := m.Recorder.Close(); err != nil {
		b.Fatal(err)
	}
	end := m.Harness.Time.Now()
	from := 5 * time.Second // the match under way
	twin := func(record bool) *serverbench.Twin {
		fresh, err := newMatch(cfg)
		if err != nil {
			b.Fatal(err)
		}
		opts := harness.Options{Game: fresh.game(), Server: fresh.serverOptions()}
		if record {
			rec, err := replay.NewRecorder(io.Discard, opts.Game, replay.RecorderOptions{})
			if err != nil {
				b.Fatal(err)
			}
			opts.Server.Recorder = rec
		}
		tw, err := serverbench.NewTwin(cfg.Seed, traffic, serverbench.Build(opts, func(s *systems.Server) error {
			if err := fresh.setupServer(s); err != nil {
				return err
			}
			KillFeedOf(s.World()).Keep = true
			return nil
		}))
		if err != nil {
			b.Fatal(err)
		}
		return tw
	}
	var plain, recorded, ticks float64
	var allocsPlain, allocsRec float64
	var replayTPS float64
	for i := 0; i < b.N; i++ {
		// Each order once: the twin that steps second runs on caches the
		// first warmed.
		for _, recFirst := range []bool{false, true} {
			a, r := twin(false), twin(true)
			pair := []*serverbench.Twin{a, r}
			if recFirst {
				pair = []*serverbench.Twin{r, a}
			}
			ms, _ := serverbench.Run(time.Millisecond, from, end, pair...)
			for _, tw := range pair {
				if want, got := m.Harness.Server.Stats(), tw.Server.Stats(); want.Ticks != got.Ticks || want.InputsApplied != got.InputsApplied {
					b.Fatalf("a twin ran another match: %+v\nwant %+v", got, want)
				}
			}
			pm, rm := ms[0], ms[1]
			if recFirst {
				pm, rm = rm, pm
			}
			plain += float64(pm.Wall.Nanoseconds()) / 1e3 / float64(pm.Ticks) / 2
			recorded += float64(rm.Wall.Nanoseconds()) / 1e3 / float64(rm.Ticks) / 2
			ticks = float64(pm.Ticks)
		}
		_, n := serverbench.Run(time.Millisecond, from, end, twin(false))
		allocsPlain += float64(n) / ticks
		_, n = serverbench.Run(time.Millisecond, from, end, twin(true))
		allocsRec += float64(n) / ticks

		f, err := replay.Open(bytes.NewReader(file.Bytes()))
		if err != nil {
			b.Fatal(err)
		}
		var last *Match
		p, err := replay.NewPlayer(f, ReplayBuild(&last))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := p.Run(); err != nil {
			b.Fatal(err)
		}
		replayTPS += float64(p.Tick()-gw.Tick(f.Header.StartTick)) / time.Since(start).Seconds()
	}
	n := float64(b.N)
	b.ReportMetric(plain/n, "µs/tick-plain")
	b.ReportMetric(recorded/n, "µs/tick-recording")
	b.ReportMetric(recorded/plain, "x-recording")
	b.ReportMetric(allocsPlain/n, "allocs/tick-plain")
	b.ReportMetric(allocsRec/n, "allocs/tick-recording")
	minutes := end.Minutes()
	b.ReportMetric(float64(file.Len())/float64(cfg.Clients)/minutes, "B/player-min")
	b.ReportMetric(replayTPS/n, "replay-ticks/s")
}
