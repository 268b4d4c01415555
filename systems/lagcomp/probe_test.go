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
