package protocol_test

import (
	"math/rand/v2"
	"testing"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// BenchmarkRecordRun writes a snapshot of 64 delta records (each against
// the default baseline, identities known) as one stretch of a run
// (AddRun, then Finish: ns/record), beside, in the same run on the same
// records, each record's head and body added one at a time (AddBody, the
// bodies encoded once: body-ns/record, x-body). Both give the same bytes.
func BenchmarkRecordRun(b *testing.B) {
	const n, tick = 64, gw.Tick(1000)
	ts := wiretest.NewSchema(b)
	rng := rand.New(rand.NewPCG(61, 62))
	egs, bodies := runGhosts(b, ts, rng, n, tick, tick-6)
	var run protocol.RecordRun
	for i, eg := range egs {
		run.Append(eg, &bodies[i])
	}
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	if err != nil {
		b.Fatal(err)
	}
	h := protocol.SnapshotHeader{Tick: tick}
	var out []byte
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Begin(tick)
		w.DefaultBase(tick - 6)
		if !w.AddRun(&run, 0, n) {
			b.Fatal("the run did not fit")
		}
		out = w.Finish(&h)
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
	want := string(out)

	start := time.Now()
	for range b.N {
		w.Begin(tick)
		w.DefaultBase(tick - 6)
		for i, eg := range egs {
			if !w.AddBody(eg, &bodies[i]) {
				b.Fatal("a record did not fit")
			}
		}
		out = w.Finish(&h)
	}
	body := float64(time.Since(start).Nanoseconds()) / float64(b.N) / n
	if string(out) != want {
		b.Fatal("the records one at a time wrote other bytes")
	}
	b.ReportMetric(ns, "ns/record")
	b.ReportMetric(body, "body-ns/record")
	b.ReportMetric(ns/body, "x-body")
}
