package ghostreg_test

import (
	"fmt"
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

// BenchmarkInterpolatorScene measures one client tick of the interpolator
// in a scene of 1,024 remote ghosts of which none, 10 % or all move: the
// tick's snapshot (the moving ghosts' records; a ghost at rest is sent
// no more) is pushed, the others are posed for a prediction and
// restored, and one frame is shown 4 ticks behind the newest state.
// Moving ghosts walk a triangle wave of 16 ticks. It reports ns/ghost
// (per ghost of the scene) and ns/moving (per moving ghost); beside them,
// in the same run, base-ns/moving: the least a client does per moving
// ghost and tick, storing the record's position in a ring and lerping two
// of them; x-base is the ratio.
func BenchmarkInterpolatorScene(b *testing.B) {
	for _, pct := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("moving=%d%%", pct), func(b *testing.B) { benchScene(b, 1024, pct) })
	}
}

func benchScene(b *testing.B, n, pct int) {
	const period, delay = 16, 4
	r := newIPRig(b, 4)
	var es, moving []ecs.Entity
	var isMoving []bool
	for i := 0; i < n; i++ {
		e, _ := r.spawn(b, ipStateX(float32(i*10)))
		es = append(es, e)
		m := pct > 0 && i%(100/pct) == 0
		isMoving = append(isMoving, m)
		if m {
			moving = append(moving, e)
		}
	}
	wave := func(i, tick int) ipState {
		p := tick % period
		if p > period/2 {
			p = period - p
		}
		st := ipStateX(float32(i*10) + float32(p)*0.25)
		st.Pos.Y = 1 - float32(p)*0.125
		return st
	}
	// decode encodes es in as many packets as they need and decodes each
	// into a snapshot of its own.
	decode := func(tick gw.Tick, es []ecs.Entity) []*protocol.Snapshot {
		var out []*protocol.Snapshot
		for len(es) > 0 {
			k := min(len(es), 32)
			s := new(protocol.Snapshot)
			require.NoError(b, protocol.DecodeSnapshot(r.packetOf(tick, es[:k]), r.s, s))
			out = append(out, s)
			es = es[k:]
		}
		return out
	}
	push := func(ss []*protocol.Snapshot, tick gw.Tick) {
		for _, s := range ss {
			s.Tick = tick
			for gi := range s.Ghosts {
				r.ip.Push(s, gi)
			}
		}
	}
	// Tick 1: every ghost, the still ones said to rest.
	for _, s := range decode(1, es) {
		for gi := range s.Ghosts {
			s.Ghosts[gi].Rest = !isMoving[int(s.Ghosts[gi].ID)-1]
		}
		push([]*protocol.Snapshot{s}, 1)
	}
	// One decoded snapshot set per phase of the wave, retimed as it is
	// pushed again.
	var phases [period][]*protocol.Snapshot
	var recs [period][]ipPos
	for p := range period {
		for i, e := range es {
			if isMoving[i] {
				st := wave(i, p)
				r.set(e, st)
				recs[p] = append(recs[p], st.Pos)
			}
		}
		phases[p] = decode(gw.Tick(p), moving)
	}
	tick := 1
	step := func() {
		tick++
		push(phases[tick%period], gw.Tick(tick))
		r.ip.Pose(gw.Tick(tick+6), true)
		r.ip.Restore()
		r.ip.Update(float64(tick-delay), 1)
	}
	for range 2 * period {
		step()
	}
	require.Equal(b, n, r.cl.Stats().Live, "ghosts shown")

	// The baseline: each moving ghost's position stored in a ring and two
	// of them lerped, per tick.
	ring := make([][period]ipPos, len(moving))
	lerpSink = make([]ipPos, len(moving))
	start := time.Now()
	for k := 0; k < b.N; k++ {
		t := k + 2*period
		for i := range ring {
			ring[i][t%period] = recs[t%period][i]
			a, c := &ring[i][(t-delay)%period], &ring[i][(t-delay+1)%period]
			lerpSink[i] = ipPos{codec.LerpFloat(a.X, c.X, 0.5), codec.LerpFloat(a.Y, c.Y, 0.5)}
		}
	}
	baseline := time.Since(start)

	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		step()
	}
	b.StopTimer()
	st := r.ip.Stats()
	require.Zero(b, st.ExtrapolatedTicks, "the benchmark left the buffered states")
	require.Zero(b, st.Teleports, "the benchmark teleported")
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(n), "ns/ghost")
	if len(moving) > 0 {
		b.ReportMetric(perOp/float64(len(moving)), "ns/moving")
		base := float64(baseline.Nanoseconds()) / float64(b.N) / float64(len(moving))
		b.ReportMetric(base, "base-ns/moving")
		if base > 0 {
			b.ReportMetric(perOp/float64(len(moving))/base, "x-base")
		}
	}
}
