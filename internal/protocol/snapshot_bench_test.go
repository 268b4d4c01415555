package protocol_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// BenchmarkSnapshot encodes a snapshot of 16 or 64 ghosts with two
// components each (a 12-byte position and an 8-byte velocity, quantized to
// 17 and 14 bits per axis), every identity acknowledged as in steady play
// (64 ghosts with their 64-bit identities would not fit one packet), with
// a reused SnapshotWriter, and decodes it into a reused Snapshot. ns/op and allocs/op cover encode plus decode; ns/ghost
// is the same per ghost. As a baseline, the same component bytes are copied
// into a flat buffer and back out (what a raw memory snapshot would cost),
// reported as copy-ns/ghost and as the ratio x-copy (snapshot time over
// copy time). B/snapshot is the packet size.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{16, 64} {
		b.Run(fmt.Sprintf("ghosts=%d", n), func(b *testing.B) { benchmarkSnapshot(b, n) })
	}
}

func benchmarkSnapshot(b *testing.B, n int) {
	ts := wiretest.NewSchema(b)
	rng := rand.New(rand.NewPCG(81, 82))
	var rt codec.Coder
	ghosts := make([]wiretest.Ghost, n)
	values := make([][]unsafe.Pointer, n)
	for i := range ghosts {
		g := &ghosts[i]
		g.Ghost = components.Ghost{ID: components.GhostID(3 * (i + 1)), Type: uint16(ts.Rocket)} // owner and spawn tick known to the client
		g.Pos = wiretest.Pos{X: float32(rng.NormFloat64() * 200), Y: float32(rng.NormFloat64() * 200), Z: float32(rng.NormFloat64() * 10)}
		g.Vel = wiretest.Vel{X: float32(rng.NormFloat64() * 10), Y: float32(rng.NormFloat64() * 10)}
		g.Quantize(ts, &rt)
		values[i] = g.Values(ts)
	}
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	if err != nil {
		b.Fatal(err)
	}
	var s protocol.Snapshot
	var size int
	b.ReportAllocs()
	b.ResetTimer()

	start := time.Now()
	for range b.N {
		w.Begin(1000)
		for i := range ghosts {
			if !w.AddGhost(ghosts[i].Ghost, false, values[i]) {
				b.Fatalf("ghost %d does not fit", i)
			}
		}
		h := protocol.SnapshotHeader{Tick: 1000, Confirmed: 998, HasConfirmed: true, Lead: 1.25, EchoTime: 5, Hold: 1}
		p := w.Finish(&h)
		size = len(p)
		if err := protocol.DecodeSnapshot(p, ts.Schema, &s); err != nil {
			b.Fatal(err)
		}
		if len(s.Ghosts) != n {
			b.Fatalf("decoded %d ghosts, want %d", len(s.Ghosts), n)
		}
	}
	snapTime := time.Since(start)
	b.StopTimer()

	// Baseline: the same bytes copied in and out, ghost by ghost.
	sizes := [2]uintptr{unsafe.Sizeof(wiretest.Pos{}), unsafe.Sizeof(wiretest.Vel{})}
	flat := make([]byte, 0, n*int(sizes[0]+sizes[1]))
	out := make([]wiretest.Ghost, n)
	outValues := make([][]unsafe.Pointer, n)
	for i := range out {
		out[i].Type = uint16(ts.Rocket)
		outValues[i] = out[i].Values(ts)
	}
	start = time.Now()
	for range b.N {
		flat = flat[:0]
		for i := range values {
			for c, p := range values[i] {
				flat = append(flat, unsafe.Slice((*byte)(p), sizes[c])...)
			}
		}
		off := 0
		for i := range outValues {
			for c, p := range outValues[i] {
				off += copy(unsafe.Slice((*byte)(p), sizes[c]), flat[off:])
			}
		}
	}
	copyTime := time.Since(start)

	for i := range ghosts {
		if out[i].Pos != ghosts[i].Pos || out[i].Vel != ghosts[i].Vel {
			b.Fatalf("copy baseline lost ghost %d", i)
		}
		wiretest.RequireGhostState(b, ts, &ghosts[i], &s, i)
	}
	perGhost := float64(b.N) * float64(n)
	b.ReportMetric(float64(snapTime.Nanoseconds())/perGhost, "ns/ghost")
	b.ReportMetric(float64(copyTime.Nanoseconds())/perGhost, "copy-ns/ghost")
	b.ReportMetric(float64(snapTime)/float64(copyTime), "x-copy")
	b.ReportMetric(float64(size), "B/snapshot")
}
