package replay

import (
	"io"
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
)

// playbackTicker returns a step running one tick of a Playback of the
// test game with players players, recorded to io.Discard when record is
// set: the server's tick with no network, so that what the recorder adds
// is not lost in the noise of the rest.
func playbackTicker(b *testing.B, players int, record bool) func() {
	s, err := testgame.NewSchema()
	if err != nil {
		b.Fatal(err)
	}
	g := s.Game()
	var opts systems.ServerOptions
	if record {
		rec, err := NewRecorder(io.Discard, g, RecorderOptions{})
		if err != nil {
			b.Fatal(err)
		}
		opts.Recorder = rec
	}
	pb, err := systems.NewPlayback(g, opts)
	if err != nil {
		b.Fatal(err)
	}
	for c := range components.ConnID(players) {
		if err := pb.Connect(c+1, components.GhostID(c+1)); err != nil {
			b.Fatal(err)
		}
	}
	in := make([]byte, s.Schema.InputSize())
	step := func() {
		tick := pb.Server().World().Tick() + 1
		for c := range components.ConnID(players) {
			in[0] = byte(tick>>3) + byte(c) // a change every 8 ticks
			h := components.InputHeader{Tick: tick, HasView: true, ViewTick: tick - 6, ViewFraction: float32(tick%4) / 4,
				MaxViewAge: 9 + float32(tick%7)/7, Acked: tick - 9}
			if err := pb.Input(c+1, &h, in); err != nil {
				b.Fatal(err)
			}
		}
		pb.Tick()
	}
	for range 600 {
		step()
	}
	return step
}

// BenchmarkRecorderTick times a server tick of 16 players with no network
// (a Playback of the test game), without a recorder and with one (a hash
// every tick, a keyframe every 5 s), in turn in the same loop; it reports
// each one's ns per tick and what recording adds.
func BenchmarkRecorderTick(b *testing.B) {
	plain, recorded := playbackTicker(b, 16, false), playbackTicker(b, 16, true)
	b.ReportAllocs()
	b.ResetTimer()
	var tp, tr float64
	for i := 0; i < b.N; i++ {
		t0 := nanotime()
		plain()
		t1 := nanotime()
		recorded()
		t2 := nanotime()
		tp += float64(t1 - t0)
		tr += float64(t2 - t1)
	}
	n := float64(b.N)
	b.ReportMetric(tp/n, "ns/tick-plain")
	b.ReportMetric(tr/n, "ns/tick-recording")
	b.ReportMetric((tr-tp)/n, "ns/tick-added")
	b.ReportMetric(tr/tp, "x-recording")
}

// nanotime reads the monotonic clock.
func nanotime() int64 { return time.Since(epoch).Nanoseconds() }

var epoch = time.Now()
