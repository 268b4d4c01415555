package ghostreg_test

import (
	"testing"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

var lerpSink []ipPos

// packetOf encodes the given server ghosts alone, with their identity, as
// the snapshot of tick.
func (r *ipRig) packetOf(tick gw.Tick, es []ecs.Entity) []byte {
	a := r.sw.Arche()
	gid := ecs.ComponentID[components.Ghost](a)
	r.wr.Begin(tick)
	for _, e := range es {
		if !r.wr.AddGhost(*(*components.Ghost)(a.Get(e, gid)), true, []unsafe.Pointer{a.Get(e, r.syid), a.Get(e, r.spid), a.Get(e, r.slid)}) {
			panic("ghost does not fit")
		}
	}
	return append([]byte(nil), r.wr.Finish(&protocol.SnapshotHeader{Tick: tick})...)
}

// BenchmarkInterpolatorUpdate measures one frame of Interpolator.Update
// for 64 interpolated ghosts (three components each: facing blended the
// short way, position lerped with a teleport check, life stepped), the
// render tick moving a quarter tick per frame a few ticks behind the
// newest buffered state.
// Beside it, in the same function, a baseline: a plain linear lerp of the
// same 64 positions computed directly; x-lerp is the ratio of the two.
func BenchmarkInterpolatorUpdate(b *testing.B) {
	const n = 64
	r := newIPRig(b, 4)
	var es []ecs.Entity
	for i := 0; i < n; i++ {
		e, _ := r.spawn(b, ipStateX(float32(i)))
		es = append(es, e)
	}
	const states = 64
	for tick := gw.Tick(1); tick <= states; tick++ {
		for i, e := range es {
			st := ipStateX(float32(i*10) + float32(tick)*0.37)
			st.Pos.Y = float32(i) - float32(tick)*0.21
			r.set(e, st)
		}
		// 64 such ghosts outgrow one datagram: two incomplete snapshots
		// of 32 per tick.
		r.receive(b, r.packetOf(tick, es[:n/2]))
		r.receive(b, r.packetOf(tick, es[n/2:]))
	}
	r.ip.Update(56, 0) // spawn them all
	require.Equal(b, n, r.cl.Stats().Live, "ghosts shown")

	// The same positions as plain arrays, for the baseline.
	pos := make([][states + 1]ipPos, n)
	for i := range pos {
		for tick := 1; tick <= states; tick++ {
			pos[i][tick] = ipPos{float32(i*10) + float32(tick)*0.37, float32(i) - float32(tick)*0.21}
		}
	}
	lerpSink = make([]ipPos, n)
	// The render tick cycles through 56 ≤ rt < 62: 2 to 8 ticks behind the
	// newest state, as an interpolation delay keeps it, never extrapolating.
	render := func(k int) float64 { return 56 + float64(k%24)*0.25 }

	start := time.Now()
	for k := 0; k < b.N; k++ {
		rt := render(k)
		tick := int(rt)
		t := float32(rt - float64(tick))
		for i := range pos {
			a, c := &pos[i][tick], &pos[i][tick+1]
			lerpSink[i] = ipPos{codec.LerpFloat(a.X, c.X, t), codec.LerpFloat(a.Y, c.Y, t)}
		}
	}
	baseline := time.Since(start)

	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		r.ip.Update(render(k), 0.25)
	}
	b.StopTimer()
	st := r.ip.Stats()
	require.Zero(b, st.ExtrapolatedTicks, "the benchmark left the buffered states")
	require.Zero(b, st.Teleports, "the benchmark left the buffered states")
	perGhost := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
	b.ReportMetric(perGhost, "ns/ghost")
	if baseline > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(baseline), "x-lerp")
		b.ReportMetric(float64(baseline.Nanoseconds())/float64(b.N)/n, "lerp-ns/ghost")
	}
}
