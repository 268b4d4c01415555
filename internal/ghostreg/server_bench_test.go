package ghostreg_test

import (
	"testing"
	"time"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/ecsx"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
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
	ecsx.SetTick(p.sw, 1)
	for i := range n {
		owner := components.ConnID(0)
		if i%4 == 0 {
			owner = conn
		}
		p.spawn(b, altType(p.s, i), owner, Pos{float32(i) - 31.7, 0.3 * float32(i)}, HP{int32(100 + i)})
	}
	ecsx.SetTick(p.sw, 100)
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
