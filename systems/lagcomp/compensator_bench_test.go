package lagcomp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// crowd builds 64 players with 1,000 hitboxes between them (40 with 16,
// 24 with 15), on a circle, recorded for a full window.
func crowd(b *testing.B) (*gw.World, *lagcomp.Compensator, []ecs.Entity, generic.Map[Position]) {
	w := gw.NewWorld(gw.WorldOptions{})
	lc := newFlatCompensator(b, w, lagcomp.Options{})
	m := generic.NewMap3[Position, Facing, components.Hitboxes](w.Arche())
	var es []ecs.Entity
	total := 0
	for i := 0; i < 64; i++ {
		n := 16
		if i >= 40 {
			n = 15
		}
		hb := components.Hitboxes{N: uint8(n)}
		for k := 0; k < n; k++ {
			hb.Boxes[k] = components.Hitbox{Shape: uint8(1 + k%3), Part: uint8(k), Offset: [3]float32{float32(k%4) * 0.1, float32(k/4) * 0.1, 0},
				Half: [3]float32{0.05, 0.1, 0.5}, Radius: 0.08}
		}
		total += n
		a := float64(i) * 2 * math.Pi / 64
		es = append(es, m.NewWith(&Position{X: float32(20 * math.Cos(a)), Y: float32(20 * math.Sin(a))}, &Facing{Yaw: float32(a)}, &hb))
	}
	if total != 1000 {
		b.Fatalf("%d hitboxes", total)
	}
	pos := generic.NewMap[Position](w.Arche())
	for tick := gw.Tick(1); tick <= 40; tick++ {
		w.SetTick(tick)
		lc.Record(tick)
	}
	return w, lc, es, pos
}

// BenchmarkRecord records the declared components (position, facing and
// 16 hitboxes) of 64 players for one tick, and poses each one with the
// reach of its hitboxes for the shots' test before rewinding; the
// baseline is a plain copy of the same bytes.
func BenchmarkRecord(b *testing.B) {
	_, lc, _, _ := crowd(b)
	bytes := 64 * (8 + 4 + int(unsafeSizeofHitboxes()))
	src, dst := make([]byte, bytes), make([]byte, bytes)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		copy(dst, src)
	}
	base := time.Since(start)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lc.Record(gw.Tick(41 + i%2))
	}
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 64
	b.ReportMetric(per, "ns/entity")
	b.ReportMetric(per/(float64(base.Nanoseconds())/float64(b.N)/64), "x-copy")
}

// BenchmarkRewoundRay answers one lag-compensated ray query: rewind 64
// players to a fractional tick (blending between two recorded ticks) and
// cast the ray against their 1,000 hitboxes and the walls. Two baselines
// are timed in the same loop: the same query against the present (no
// blending; x-present is the cost of compensating), and the same query
// rewinding every player (no test of the ray against their recorded
// poses first; x-every is what that test saves).
func BenchmarkRewoundRay(b *testing.B) {
	_, lc, es, _ := crowd(b)
	shot := lagcomp.Shot{Shooter: es[0], Origin: [3]float32{20, 0, 0}, Dir: [3]float32{-1, 0.01, 0}, MaxViewAge: math.MaxFloat32}
	var rewound, present, every time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		shot.Tick, shot.ViewTick, shot.ViewFraction = gw.Tick(40).Add(3*i), 25, 0.5
		t0 := time.Now()
		want := lc.Judge(shot)
		t1 := time.Now()
		lc.SetBroadphase(false)
		shot.Tick = gw.Tick(41).Add(3 * i)
		if got := lc.Judge(shot); got != want {
			b.Fatalf("rewinding every player judged %+v, the test first %+v", got, want)
		}
		lc.SetBroadphase(true)
		t2 := time.Now()
		shot.Tick, shot.ViewTick, shot.ViewFraction = gw.Tick(42).Add(3*i), 40, 0
		lc.Judge(shot)
		present += time.Since(t2)
		every += t2.Sub(t1)
		rewound += t1.Sub(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(rewound.Nanoseconds())/n, "ns/query")
	b.ReportMetric(float64(rewound.Nanoseconds())/n/64, "ns/player")
	b.ReportMetric(float64(present.Nanoseconds())/n, "present-ns/query")
	b.ReportMetric(float64(every.Nanoseconds())/n, "every-ns/query")
	b.ReportMetric(float64(rewound)/float64(present), "x-present")
	b.ReportMetric(float64(rewound)/float64(every), "x-every")
}

// BenchmarkShotBroadphase judges shots against 16, 64 and 1,000 players
// spread over a square as densely as the arena's (16 square units each),
// walking about, recorded for a full window: each shot, from a player in
// a random direction with the arena's range (40) at a random view (three
// in four between two ticks), is judged walking its view tick's grid
// (built beforehand, whatever the count) and, in the same loop, testing
// every player's pose (the baseline). ns/shot and tested/shot are the
// grid's, every-ns/shot and every-tested/shot the baseline's; build-ns is
// what building a tick's grid adds to the first shot that walks it, once
// a recorded tick that shots view.
func BenchmarkShotBroadphase(b *testing.B) {
	for _, n := range []int{16, 64, 1000} {
		b.Run(fmt.Sprintf("players=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(uint64(n), 1))
			w := gw.NewWorld(gw.WorldOptions{})
			lc := newFlatCompensator(b, w, lagcomp.Options{Range: 40})
			m := generic.NewMap3[Position, Facing, components.Hitboxes](w.Arche())
			side := float32(4 * math.Sqrt(float64(n)))
			hb := bodyBoxes()
			es := make([]ecs.Entity, n)
			for i := range es {
				es[i] = m.NewWith(&Position{X: rng.Float32() * side, Y: rng.Float32() * side}, &Facing{Yaw: rng.Float32() * 6}, &hb)
			}
			const last = 46
			for tick := gw.Tick(1); tick <= last; tick++ {
				for _, e := range es {
					p, f, _ := m.Get(e)
					p.X, p.Y, f.Yaw = p.X+rng.Float32()*0.2-0.1, p.Y+rng.Float32()*0.2-0.1, f.Yaw+0.05
				}
				w.SetTick(tick)
				lc.Record(tick)
			}
			shots := make([]lagcomp.Shot, 256)
			for i := range shots {
				e := es[rng.IntN(n)]
				p, _, _ := m.Get(e)
				a := rng.Float64() * 2 * math.Pi
				view, frac := gw.Tick(last-1-rng.IntN(40)), rng.Float32()
				if i%4 == 0 {
					frac = 0
				}
				shots[i] = lagcomp.Shot{Shooter: e, Tick: last, ViewTick: view, ViewFraction: frac, MaxViewAge: 100,
					Origin: [3]float32{p.X, p.Y, 0}, Dir: [3]float32{float32(math.Cos(a)), float32(math.Sin(a)), 0}}
			}
			grid := func(on bool) {
				lc.SetGridMin(math.MaxInt)
				if on {
					lc.SetGridMin(0)
				}
			}
			grid(true)
			for _, s := range shots { // every view tick's grid built, as in a long run
				lc.Probe(s, false)
			}
			var walking, every time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Each first every other shot: the second finds the caches warm.
				s, on := shots[i%len(shots)], i%2 == 0
				grid(on)
				t0 := time.Now()
				v0 := lc.Probe(s, false)
				t1 := time.Now()
				grid(!on)
				v1 := lc.Probe(s, false)
				t2 := time.Now()
				if v0 != v1 {
					b.Fatalf("one way judged %+v, the other %+v", v0, v1)
				}
				if on {
					walking, every = walking+t1.Sub(t0), every+t2.Sub(t1)
				} else {
					walking, every = walking+t2.Sub(t1), every+t1.Sub(t0)
				}
			}
			b.StopTimer()
			tested := func(on bool) float64 {
				grid(on)
				before := lc.Stats().Tested
				for _, s := range shots {
					lc.Probe(s, false)
				}
				return float64(lc.Stats().Tested-before) / float64(len(shots))
			}
			nn := float64(b.N)
			b.ReportMetric(float64(walking.Nanoseconds())/nn, "ns/shot")
			b.ReportMetric(float64(every.Nanoseconds())/nn, "every-ns/shot")
			b.ReportMetric(float64(walking)/float64(every), "x-every")
			b.ReportMetric(tested(true), "tested/shot")
			b.ReportMetric(tested(false), "every-tested/shot")
			// The newest tick recorded again with every player moved: its
			// first shot builds its grid, the same shot again walks it.
			grid(true)
			s := shots[0]
			s.ViewTick, s.ViewFraction = last, 0
			var build time.Duration
			const builds = 64
			for range builds {
				for _, e := range es {
					p, _, _ := m.Get(e)
					p.X += 0.01
				}
				lc.Record(last)
				t0 := time.Now()
				lc.Probe(s, false)
				t1 := time.Now()
				lc.Probe(s, false)
				build += 2*t1.Sub(t0) - time.Since(t0)
			}
			b.ReportMetric(float64(build.Nanoseconds())/builds, "build-ns")
		})
	}
}

func unsafeSizeofHitboxes() uintptr {
	var hb components.Hitboxes
	return unsafeSizeof(hb)
}
