package lagcomp_test

import (
	"math/rand/v2"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// Every shot judged among 80 wandering entities, behind walls, some
// invisible to everyone, with a fire-rate limit, views inside and
// outside the window and origins behind a wall now and then: the scene
// captured in OnJudge, cast again after
// the history has moved on, gives the verdict of every shot that reached
// the cast (hit, occluded, not visible, no target) field for field, and
// keeps the verdict and its reason for every refused one; capturing
// changes none of the compensator's counters.
func TestCapturedScenesGiveTheVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	w := gw.NewWorld(gw.WorldOptions{})
	walls := [][2][3]float32{{{-3, -30, -1}, {-2, 30, 3}}, {{5, 4, -1}, {9, 5, 3}}}
	var scenes []lagcomp.Scene
	var verdicts []lagcomp.Verdict
	hidden := map[ecs.Entity]bool{}
	lc := newFlatCompensator(t, w, lagcomp.Options{Range: 60, MaxOriginError: 1, MinShotInterval: 3, Walls: walls,
		Visible: func(_ ecs.Entity, tg *lagcomp.Rewound) bool { return !hidden[tg.Entity] },
		OnJudge: func(c *lagcomp.Compensator, s lagcomp.Shot, v lagcomp.Verdict) {
			var sc lagcomp.Scene
			c.Capture(s, v, &sc)
			scenes, verdicts = append(scenes, sc), append(verdicts, v)
		}})
	m := generic.NewMap3[Position, Facing, components.Hitboxes](w.Arche())
	hb := bodyBoxes()
	type mover struct {
		e          ecs.Entity
		vx, vy, vt float32
	}
	var ms []mover
	for i := range 80 {
		e := m.NewWith(&Position{X: rng.Float32()*30 - 15, Y: rng.Float32()*30 - 15}, &Facing{Yaw: rng.Float32() * 6}, &hb)
		ms = append(ms, mover{e: e, vx: rng.Float32()*0.4 - 0.2, vy: rng.Float32()*0.4 - 0.2, vt: rng.Float32() - 0.5})
		hidden[e] = i%7 == 3
	}
	p0, _, _ := m.Get(ms[0].e)
	*p0, ms[0].vx, ms[0].vy = Position{X: -1.8}, 0, 0 // stands by the wall
	step := func(tick gw.Tick) {
		for _, mv := range ms {
			p, f, _ := m.Get(mv.e)
			p.X, p.Y, f.Yaw = p.X+mv.vx, p.Y+mv.vy, f.Yaw+mv.vt
		}
		w.SetTick(tick)
		lc.Record(tick)
	}
	tick := gw.Tick(0)
	for range 40 {
		tick++
		step(tick)
	}
	rewinds := uint64(0)
	for range 60 {
		tick++
		step(tick)
		if tick%5 == 0 { // the one standing by the wall claims an origin inside it
			before := lc.Stats().Rewinds
			lc.Judge(lagcomp.Shot{Shooter: ms[0].e, Tick: tick, ViewTick: tick - 2, MaxViewAge: 1000,
				Origin: [3]float32{-2.5, 0, 0}, Dir: [3]float32{1, 0, 0}})
			require.Equal(t, before, lc.Stats().Rewinds, "refused before any rewind")
		}
		for range 20 {
			shooter, target := ms[1+rng.IntN(len(ms)-1)].e, ms[rng.IntN(len(ms))].e
			p, _, _ := m.Get(shooter)
			q, _, _ := m.Get(target)
			view := float64(tick) - 1 - rng.Float64()*30
			if rng.IntN(10) == 0 {
				view = float64(tick) - 60 - rng.Float64()*10 // outside the 45-tick window
			}
			vt, frac := split(view)
			s := lagcomp.Shot{Shooter: shooter, Tick: tick, ViewTick: vt, ViewFraction: frac, MaxViewAge: 1000,
				Origin: [3]float32{p.X, p.Y, 0}, Dir: [3]float32{q.X - p.X + rng.Float32()*2 - 1, q.Y - p.Y + rng.Float32()*2 - 1, 0}}

			before := lc.Stats().Rewinds
			lc.Judge(s)
			if lc.Stats().Rewinds > before {
				rewinds++
			}
		}
	}
	for range 50 { // the history moves on: the scenes are the shots' own
		tick++
		step(tick)
	}
	require.Len(t, scenes, 60*20+12)
	reasons := map[lagcomp.Reason]int{}
	originOccluded := 0
	for i, sc := range scenes {
		v := verdicts[i]
		reasons[v.Reason]++
		assert.Equal(t, v, sc.Verdict)
		if v.Reason == lagcomp.ReasonOccluded && sc.Shot.Shooter == ms[0].e {
			assert.True(t, sc.Refused, "the origin rule, before the cast")
			originOccluded++
			continue
		}
		switch v.Reason {
		case lagcomp.ReasonHit, lagcomp.ReasonOccluded, lagcomp.ReasonNotVisible, lagcomp.ReasonNoTarget:
			require.Falsef(t, sc.Refused, "shot %d reached the cast", i)
			require.Equalf(t, v, sc.Cast(), "shot %d: %+v", i, sc.Shot)
			require.NotEmpty(t, sc.Posed)
		case lagcomp.ReasonOutsideWindow:
			assert.True(t, sc.Refused)
			assert.Empty(t, sc.Posed, "nothing recorded to show")
		default:
			assert.True(t, sc.Refused)
			assert.Len(t, sc.Posed, len(ms), "shot %d: every entity posed", i)
		}
	}
	t.Logf("verdicts by reason: %v; %d occluded before the cast (an origin behind a wall)", reasons, originOccluded)
	for _, r := range []lagcomp.Reason{lagcomp.ReasonHit, lagcomp.ReasonOccluded, lagcomp.ReasonNotVisible, lagcomp.ReasonNoTarget,
		lagcomp.ReasonFireRate, lagcomp.ReasonOutsideWindow} {
		assert.Positivef(t, reasons[r], "some shots end %s", r)
	}
	assert.Equal(t, 12, originOccluded, "every claim from inside the wall")
	assert.Equal(t, rewinds, lc.Stats().Rewinds, "captures are not counted as rewinds")
}

// A scene poses the entities where the shooter saw them, between two
// recorded ticks, and holds the shooter apart.
func TestCapturedSceneIsTheView(t *testing.T) {
	var sc lagcomp.Scene
	s := newScene(t, lagcomp.Options{OnJudge: func(c *lagcomp.Compensator, shot lagcomp.Shot, v lagcomp.Verdict) {
		c.Capture(shot, v, &sc)
	}})
	v := s.lc.Judge(s.aim(10, 4.05, 40.5))
	require.True(t, v.Hit)
	require.Len(t, sc.Posed, 2)
	for _, p := range sc.Posed {
		if p.Entity == s.shooter {
			assert.True(t, p.Shooter)
			continue
		}
		assert.False(t, p.Shooter)
		assert.InDelta(t, 10, p.Position[0], 1e-6)
		assert.InDelta(t, 4.05, p.Position[1], 1e-5, "halfway between tick 40 (4.0) and 41 (4.1)")
		assert.Equal(t, bodyBoxes(), p.Hitboxes)
		assert.True(t, p.Visible)
	}
	assert.Equal(t, 40.5, sc.View)
	assert.Equal(t, v, sc.Cast())
}
