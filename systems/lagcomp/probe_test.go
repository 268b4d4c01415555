package lagcomp_test

import (
	"testing"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

type probePos struct{ X, Y float32 }

// A target runs up the y axis at 0.1 per tick; the shooter saw it at tick
// 20.5. Judged at the view tick the shot hits; probed against the present
// it misses, and probing counts nothing.
func TestProbeJudgesTheOtherModeWithoutCounting(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	lc, err := lagcomp.New(w, lagcomp.Options{Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
		p := lagcomp.Get[probePos](r)
		return [3]float32{p.X, p.Y, 0}, 0
	}, MinShotInterval: 100})
	require.NoError(t, err)
	require.NoError(t, lagcomp.Register[probePos](lc))
	hb := components.Hitboxes{N: 1}
	hb.Boxes[0] = components.Hitbox{Shape: components.ShapeSphere, Radius: 0.3}
	spawn := generic.NewMap2[probePos, components.Hitboxes](w.Arche())
	shooter := spawn.NewWith(&probePos{}, &hb)
	target := spawn.NewWith(&probePos{X: 10}, &hb)
	pos := generic.NewMap[probePos](w.Arche())
	s := gw.NewSchedule()
	s.Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) { pos.Get(target).Y = float32(w.Tick()) / 10 }))
	s.Add(gw.StageHistory, lc)
	for range 30 {
		s.Tick(w)
	}

	assert.False(t, lc.Present())
	newest, ok := lc.History().Newest()
	require.True(t, ok)
	assert.Equal(t, gw.Tick(30), newest)
	hp, ok := gw.ValueAt[probePos](lc.History(), 20, target)
	require.True(t, ok)
	assert.InDelta(t, 2, hp.Y, 1e-6)

	shot := lagcomp.Shot{Shooter: shooter, Tick: 30, ViewTick: 20, ViewFraction: 0.5, Dir: [3]float32{10, 2.05, 0}, MaxViewAge: 12}
	assert.Equal(t, lagcomp.ReasonNoTarget, lc.Probe(shot, true).Reason)
	assert.Equal(t, lagcomp.ReasonHit, lc.Probe(shot, false).Reason)
	assert.Equal(t, lagcomp.ReasonHit, lc.Judge(shot).Reason, "probes left the fire-rate book alone")
	shot.Tick++
	assert.Equal(t, lagcomp.ReasonFireRate, lc.Judge(shot).Reason)
	assert.True(t, lc.Probe(shot, false).Hit, "a probe does not check the fire rate")
}

// LineOfSight is the occlusion test Judge applies: a wall on the segment
// blocks it, touching no wall or a zero-length segment does not.
func TestLineOfSight(t *testing.T) {
	walls := [][2][3]float32{{{4, -1, -1}, {6, 1, 1}}}
	assert.False(t, lagcomp.LineOfSight(walls, [3]float32{0, 0, 0}, [3]float32{10, 0, 0}), "through the wall")
	assert.True(t, lagcomp.LineOfSight(walls, [3]float32{0, 2, 0}, [3]float32{10, 2, 0}), "beside it")
	assert.True(t, lagcomp.LineOfSight(walls, [3]float32{0, 0, 0}, [3]float32{3.9, 0, 0}), "short of it")
	assert.True(t, lagcomp.LineOfSight(walls, [3]float32{1, 1, 1}, [3]float32{1, 1, 1}), "no length")
	assert.True(t, lagcomp.LineOfSight(nil, [3]float32{0, 0, 0}, [3]float32{10, 0, 0}), "no walls")
}

// Reasons lists every reason in the order of the rules, as a copy; Stats
// counts verdicts by reason.
func TestReasonsAndStats(t *testing.T) {
	r := lagcomp.Reasons()
	require.Equal(t, lagcomp.ReasonHit, r[0])
	assert.Contains(t, r, lagcomp.ReasonShooterDead)
	r[0] = "changed"
	assert.Equal(t, lagcomp.ReasonHit, lagcomp.Reasons()[0], "callers get a copy")

	w := gw.NewWorld(gw.WorldOptions{})
	lc, err := lagcomp.New(w, lagcomp.Options{Pose: func(*lagcomp.Rewound) ([3]float32, float32) { return [3]float32{}, 0 }})
	require.NoError(t, err)
	st := lc.Stats()
	assert.Len(t, st.Verdicts, len(r))
	assert.Zero(t, st.Shots)
	assert.Equal(t, 60, lc.TickRate(), "the default")
}
