package ghostreg_test

import (
	"testing"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

var copySink []byte

// BenchmarkWriteSnapshot measures Server.WriteSnapshot plus
// SnapshotWriter.Finish for 64 ghosts (half players, half crates, a quarter
// owned by the connection) and compares it with a plain copy of the same
// component bytes measured in the same run. Steady state it must allocate
// nothing.
func BenchmarkWriteSnapshot(b *testing.B) {
	const n = 64
	const conn = 1
	p := newPair(b, conn)
	p.sw.SetTick(1)
	for i := range n {
		owner := components.ConnID(0)
		if i%4 == 0 {
			owner = conn
		}
		p.spawn(b, altType(p.s, i), owner, Pos{float32(i) - 31.7, 0.3 * float32(i)}, HP{int32(100 + i)})
	}
	p.sw.SetTick(100)
	p.srv.Quantize()
	sw, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
	require.NoError(b, err)
	h := protocol.SnapshotHeader{Tick: 100}
	v := p.srv.NewView(conn)
	write := func() []byte {
		sw.Begin(100)
		require.Zero(b, p.srv.WriteSnapshot(sw, v, 100), "ghosts left out")
		return sw.Finish(&h)
	}
	packet := write() // warm up: scratch buffers reach their size
	var snap protocol.Snapshot
	require.NoError(b, protocol.DecodeSnapshot(packet, p.s.Schema, &snap))
	require.Len(b, snap.Ghosts, n)

	// Baseline: copy the same component bytes (every ghost's Pos and HP).
	size := n * int(unsafe.Sizeof(Pos{})+unsafe.Sizeof(HP{}))
	src, dst := make([]byte, size), make([]byte, size)
	start := time.Now()
	for range b.N {
		copy(dst, src)
	}
	copyNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	copySink = dst

	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		write()
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/n, "ns/ghost")
	b.ReportMetric(copyNs, "copy-ns/op")
	b.ReportMetric(ns/max(copyNs, 0.01), "x-copy")
	b.ReportMetric(float64(len(packet)), "bytes/snapshot")
}

var sameSink int

// BenchmarkChangeDetectionAtRest measures ServerRegister.Quantize over
// 10,000 crates at rest (a position and HP each): the per-tick change
// detection, which compares whole runs of values (an archetype's column)
// with the bytes last encoded. The baseline, measured in the same run on
// the same values: the same comparison ghost by ghost and component by
// component, through pointers taken once (what a per-ghost comparison
// costs at best). Neither finds a change; neither allocates.
func BenchmarkChangeDetectionAtRest(b *testing.B) {
	const n = 10000
	s := newTestSchema(b)
	w, bind := newServerWorld(b, s)
	srv := ghostreg.NewServerRegister(bind)
	var ptrs []unsafe.Pointer
	var sizes []int
	for i := range n {
		e := newEntity(w, Pos{float32(i%200) - 99, float32(i / 200)}, HP{V: int32(i % 1000)})
		spawn(b, srv, e, s.crate, 0)
		ptrs = append(ptrs, unsafe.Pointer(getPos(w, e)), unsafe.Pointer(getHP(w, e)))
		sizes = append(sizes, int(unsafe.Sizeof(Pos{})), int(unsafe.Sizeof(HP{})))
	}
	srv.Quantize()
	sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(b, err)
	sw.Begin(1)
	srv.WriteSnapshot(sw, srv.NewView(1), 1) // encodes every ghost once
	copies := make([][]byte, len(ptrs))
	for i, p := range ptrs {
		copies[i] = append([]byte(nil), unsafe.Slice((*byte)(p), sizes[i])...)
	}

	start := time.Now()
	for range b.N {
		for i, p := range ptrs {
			if string(unsafe.Slice((*byte)(p), sizes[i])) != string(copies[i]) {
				sameSink++
			}
		}
	}
	naive := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	require.Zero(b, sameSink, "nothing changed")

	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		srv.Quantize()
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/n, "ns/ghost")
	b.ReportMetric(naive/n, "per-ghost-ns/ghost")
	b.ReportMetric(naive/ns, "x-faster")
}

// BenchmarkMassJoin measures 16 clients joining a scene of 10,000
// crates long at rest at once: one op is the whole catch-up, every
// connection sent a snapshot (one packet) a tick and acknowledging each 6
// ticks later, until none has a pending ghost (each crate's spawn record
// says it rests, so its acknowledgement ends it). It reports the server's mean
// send time per tick during the catch-up and the ticks it took. The
// baseline, measured in the same op on the same ghosts for as many
// ticks: per connection a cursor that writes the next full states
// (AddGhost) until the packet is full, the least a sender can do per
// tick (no priority, no delta, no acknowledgement).
func BenchmarkMassJoin(b *testing.B) {
	const n, conns, rtt = 10000, 16, 6
	s := newTestSchema(b)
	w, bind := newServerWorld(b, s)
	srv := ghostreg.NewServerRegister(bind)
	a := w.Arche()
	var ghosts []components.Ghost
	var vals [][]unsafe.Pointer
	for i := range n {
		e := newEntity(w, Pos{float32(i%200) - 99, float32(i / 200)}, HP{V: int32(i % 1000)})
		spawn(b, srv, e, s.crate, 0)
		ghosts = append(ghosts, getGhost(w, e))
		vals = append(vals, []unsafe.Pointer{a.Get(e, ecs.ComponentID[HP](a)), a.Get(e, ecs.ComponentID[Pos](a))})
	}
	sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(b, err)
	tick := gw.Tick(1)
	w.SetTick(tick)
	srv.Quantize()
	first := srv.NewView(conns + 1) // the scene is encoded (changes) once, long before the join
	sw.Begin(tick)
	srv.WriteSnapshot(sw, first, tick)
	first.Close()
	tick += 1000
	views := make([]*ghostreg.View, conns)
	var join, naive time.Duration
	ticks := 0
	b.ReportAllocs()
	for b.Loop() {
		for i := range views {
			if views[i] != nil {
				views[i].Close()
			}
			views[i] = srv.NewView(components.ConnID(i + 1))
		}
		start := time.Now()
		t := 0
		for pending := true; pending; t++ {
			require.Less(b, t, 10*n, "the catch-up never ends")
			tick++
			w.SetTick(tick)
			srv.Quantize()
			pending = false
			for _, v := range views {
				sw.Begin(tick)
				srv.WritePart(sw, v, tick, 0)
				sw.Finish(&protocol.SnapshotHeader{Tick: tick})
				if t >= rtt {
					v.Ack(tick-rtt, 1)
				}
				pending = pending || v.Pending() > 0
			}
		}
		join += time.Since(start)
		ticks += t

		start = time.Now()
		cursor := make([]int, conns)
		for range t {
			for c := range conns {
				sw.Begin(tick)
				for cursor[c] < n && sw.AddGhost(ghosts[cursor[c]], true, vals[cursor[c]]) {
					cursor[c]++
				}
				sw.Finish(&protocol.SnapshotHeader{Tick: tick})
			}
		}
		naive += time.Since(start)
	}
	b.ReportMetric(float64(join.Nanoseconds())/1e3/float64(ticks), "us/tick")
	b.ReportMetric(float64(naive.Nanoseconds())/1e3/float64(ticks), "cursor-us/tick")
	b.ReportMetric(float64(ticks)/float64(b.N), "ticks")
	b.ReportMetric(float64(join)/float64(naive), "x-cursor")
}
