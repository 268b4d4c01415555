package ecs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestSideEffectsFireOncePerTickDespiteRollbacks(t *testing.T) {
	g := newGame(t, 20, 64)
	fired := map[gw.Tick]int{}
	ran := map[gw.Tick]int{}
	var replaySeen, firstSeen int
	g.sched.AddSideEffect(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		require.False(t, w.IsReplaying(), "side effect during replay")
		fired[w.Tick()]++
	}))
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		ran[w.Tick()]++
		if w.IsFirstTimePredicted() {
			firstSeen++
		} else {
			replaySeen++
		}
	}))
	const ticks = 200
	replayed := map[gw.Tick]int{}
	for i := 1; i <= ticks; i++ {
		g.sched.Tick(g.world)
		back := gw.Tick(i%9 + 1) // 1..9 ticks, a rollback every tick
		now := g.world.Tick()
		if now > back {
			require.NoError(t, g.sched.Rollback(g.world, now-back, nil))
			for tick := now - back + 1; tick <= now; tick++ {
				replayed[tick]++
			}
		}
	}
	require.Len(t, fired, ticks)
	total := 0
	for tick := gw.Tick(1); tick <= ticks; tick++ {
		assert.Equalf(t, 1, fired[tick], "side effect at tick %d", tick)
		assert.Equalf(t, 1+replayed[tick], ran[tick], "prediction system at tick %d", tick)
		total += replayed[tick]
	}
	assert.Equal(t, ticks, firstSeen)
	assert.Equal(t, total, replaySeen)
	assert.Equal(t, uint64(total), g.sched.Stats().ReplayedTicks)
}

func TestOnlyThePredictionStageIsReplayed(t *testing.T) {
	g := newGame(t, 1, 16)
	runs := map[gw.Stage]int{}
	for st := gw.StageReceive; st <= gw.StagePresentation; st++ {
		st := st
		g.sched.Add(st, gw.SystemFunc(func(*gw.World) { runs[st]++ }))
	}
	for i := 0; i < 10; i++ {
		g.sched.Tick(g.world)
	}
	g.sched.Frame(g.world)
	require.NoError(t, g.sched.Rollback(g.world, 5, nil))
	for _, st := range []gw.Stage{gw.StagePrePrediction, gw.StagePrediction, gw.StagePostPrediction} {
		assert.Equal(t, 15, runs[st], st.String())
	}
	for _, st := range []gw.Stage{gw.StageReceive, gw.StageInput, gw.StageSimulation, gw.StageHistory, gw.StageSend} {
		assert.Equal(t, 10, runs[st], st.String())
	}
	assert.Equal(t, 1, runs[gw.StageInterpolation])
	assert.Equal(t, 1, runs[gw.StagePresentation])
}

func TestRollbackFixIsAppliedAndRecorded(t *testing.T) {
	g := newGame(t, 3, 32)
	for i := 0; i < 10; i++ {
		g.sched.Tick(g.world)
	}
	e := g.entities[1]
	require.NoError(t, g.sched.Rollback(g.world, 4, func(w *gw.World) {
		assert.Equal(t, gw.Tick(4), w.Tick(), "the fix writes the restored tick, and the world says so")
		p, _ := gw.ValueAt[Position](g.history, 4, e)
		p.X += 100
		*mapGet[Position](w, e) = p
	}))
	p4, _ := gw.ValueAt[Position](g.history, 4, e)
	p10, _ := gw.ValueAt[Position](g.history, 10, e)
	assert.Greater(t, p4.X, float32(90), "tick 4 re-recorded with the fix")
	assert.Greater(t, p10.X, float32(80), "the fix carried through the replay")
}

func TestRollbackDuringReplayIsRefused(t *testing.T) {
	g := newGame(t, 1, 16)
	var nested error
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		if w.IsReplaying() && nested == nil {
			nested = g.sched.Rollback(w, 1, nil)
		}
	}))
	for i := 0; i < 5; i++ {
		g.sched.Tick(g.world)
	}
	require.NoError(t, g.sched.Rollback(g.world, 3, nil))
	require.Error(t, nested)
	assert.Panics(t, func() {
		g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) { g.sched.Tick(w) }))
		_ = g.sched.Rollback(g.world, 4, nil)
	})
}

func TestStageNames(t *testing.T) {
	assert.Equal(t, "prediction", gw.StagePrediction.String())
	assert.Equal(t, "Stage(99)", gw.Stage(99).String())
	assert.Panics(t, func() { gw.NewSchedule().Group(gw.Stage(99)) })
	assert.Panics(t, func() { gw.NewGroup("g").Add(nil) })
}

func TestNestedGroups(t *testing.T) {
	var order []string
	inner := gw.NewGroup("inner").
		Add(gw.SystemFunc(func(*gw.World) { order = append(order, "a") })).
		AddSideEffect(gw.SystemFunc(func(*gw.World) { order = append(order, "fx") }))
	s := gw.NewSchedule()
	s.Add(gw.StagePrediction, inner)
	s.Add(gw.StagePrediction, gw.SystemFunc(func(*gw.World) { order = append(order, "b") }))
	w := gw.NewWorld(gw.WorldOptions{})
	s.Tick(w)
	assert.Equal(t, []string{"a", "fx", "b"}, order)
	assert.Equal(t, 2, inner.Len())
	assert.Equal(t, "inner", inner.Name())
}
