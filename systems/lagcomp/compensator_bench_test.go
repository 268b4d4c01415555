package lagcomp_test

import (
	"math"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/ecsx"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// crowd builds 64 players with 1,000 hitboxes between them (40 with 16,
// 24 with 15), on a circle, recorded for a full window.
func crowd(b *testing.B) (*gw.World, *lagcomp.Compensator, []ecs.Entity, generic.Map[Position]) {
	w := gw.NewWorld(gw.WorldOptions{})
	lc, err := lagcomp.New(w, lagcomp.Options{Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
		p, f := lagcomp.Get[Position](r), lagcomp.Get[Facing](r)
		return [3]float32{p.X, p.Y, 0}, f.Yaw
	}})
	if err != nil {
		b.Fatal(err)
	}
	_ = lagcomp.Register[Position](lc)
	_ = lagcomp.Register[Facing](lc)
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
		ecsx.SetTick(w, tick)
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

func unsafeSizeofHitboxes() uintptr {
	var hb components.Hitboxes
	return unsafeSizeof(hb)
}
