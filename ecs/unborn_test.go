package ecs_test

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// Counter is predicted state that counts up by one per tick.
type Counter struct{ N int32 }

// counterGame is a client world whose one prediction system counts every
// predicted Counter up by one per tick.
type counterGame struct {
	world   *gw.World
	sched   *gw.Schedule
	history *gw.History
	counter *generic.Map1[Counter]
}

func newCounterGame(t *testing.T) *counterGame {
	w := gw.NewWorld(gw.WorldOptions{})
	h, err := gw.EnableHistory[components.Predicted](w, 32)
	require.NoError(t, err)
	require.NoError(t, gw.Register[Counter](h))
	filter := generic.NewFilter1[Counter]().With(generic.T[components.Predicted]())
	s := gw.NewSchedule()
	s.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := filter.Query(w.Arche())
		for q.Next() {
			q.Get().N++
		}
	}))
	m := generic.NewMap1[Counter](w.Arche())
	return &counterGame{world: w, sched: s, history: h, counter: &m}
}

func (g *counterGame) spawn(n int32) ecs.Entity {
	m := generic.NewMap2[Counter, components.Predicted](g.world.Arche())
	return m.NewWith(&Counter{N: n}, &components.Predicted{})
}

func (g *counterGame) ticks(n int) {
	for i := 0; i < n; i++ {
		g.sched.Tick(g.world)
	}
}

// The repro: a counter spawned after tick 5, rolled back to tick 3 with a
// fix that sets it to -2, ended at 2: the value meant for tick 3 had become
// its state at its birth tick 6.
func TestRollbackFixWriteToAnUnbornSpawnIsMeantForTheRestoredTick(t *testing.T) {
	g := newCounterGame(t)
	g.spawn(0)
	g.ticks(5)
	spawned := g.spawn(0)
	g.ticks(5)
	require.NoError(t, g.sched.Rollback(g.world, 3, func(*gw.World) { g.counter.Get(spawned).N = -2 }))
	assert.Equal(t, int32(5), g.counter.Get(spawned).N, "-2 at tick 3, counted up through ticks 4..10")
}

// A rollback's fix that writes into a predicted spawn born after the
// restored tick says the entity existed then: the spawn is born at the
// restored tick with the fix's values, like an entity the fix spawns, and
// ends where the replay from there puts it. A spawn the fix leaves alone
// stays dormant until its own birth tick.
func TestRollbackFixWritesMakeAnUnbornSpawnBornAtTheRestoredTick(t *testing.T) {
	writes := map[string]func(w *gw.World, g *counterGame, e ecs.Entity){
		"through a pointer": func(_ *gw.World, g *counterGame, e ecs.Entity) { g.counter.Get(e).N = 100 },
		"through Commands": func(w *gw.World, _ *counterGame, e ecs.Entity) {
			w.Commands().Add(e, ecs.Component{ID: ecs.ComponentID[Counter](w.Arche()), Comp: &Counter{N: 100}})
		},
	}
	for how, write := range writes {
		t.Run("spawn recorded in the history, written "+how, func(t *testing.T) {
			g := newCounterGame(t)
			old := g.spawn(0)
			g.ticks(5)
			spawned, untouched := g.spawn(0), g.spawn(0) // first simulated and recorded at tick 6
			g.ticks(5)
			require.Equal(t, int32(5), g.counter.Get(spawned).N)

			require.NoError(t, g.sched.Rollback(g.world, 3, func(w *gw.World) {
				birth, unborn := w.History().Unborn(spawned)
				assert.True(t, unborn)
				assert.Equal(t, gw.Tick(6), birth)
				_, unborn = w.History().Unborn(old)
				assert.False(t, unborn, "an entity alive at the restored tick is born")
				write(w, g, spawned)
			}))
			assert.Equal(t, int32(107), g.counter.Get(spawned).N, "100 at tick 3, counted up through ticks 4..10")
			v, ok := gw.ValueAt[Counter](g.history, 3, spawned)
			require.True(t, ok, "recorded at the restored tick")
			assert.Equal(t, int32(100), v.N)
			v, _ = gw.ValueAt[Counter](g.history, 6, spawned)
			assert.Equal(t, int32(103), v.N)

			assert.Equal(t, int32(5), g.counter.Get(untouched).N, "ends where the replay from its own birth puts it")
			_, ok = gw.ValueAt[Counter](g.history, 3, untouched)
			assert.False(t, ok)
			assert.Equal(t, int32(10), g.counter.Get(old).N)
			assert.Equal(t, uint64(1), g.history.Stats().UnbornWrites)
			_, unborn := g.history.Unborn(untouched)
			assert.False(t, unborn, "woken after the replay")
		})
		t.Run("spawn after the newest record, written "+how, func(t *testing.T) {
			g := newCounterGame(t)
			g.spawn(0)
			g.ticks(10)
			spawned := g.spawn(7) // a ghost spawned while receiving, before the rollback
			untouched := g.spawn(7)
			require.NoError(t, g.sched.Rollback(g.world, 3, func(w *gw.World) {
				birth, unborn := w.History().Unborn(spawned)
				assert.True(t, unborn)
				assert.Equal(t, gw.Tick(11), birth, "born with the next tick")
				write(w, g, spawned)
			}))
			assert.Equal(t, int32(107), g.counter.Get(spawned).N, "100 at tick 3, counted up through ticks 4..10")
			assert.Equal(t, int32(7), g.counter.Get(untouched).N, "not simulated by the replay")
			assert.Equal(t, uint64(1), g.history.Stats().UnbornWrites)
			g.ticks(1)
			assert.Equal(t, int32(108), g.counter.Get(spawned).N)
			assert.Equal(t, int32(8), g.counter.Get(untouched).N)
		})
	}
}

// newStunGame is a counter game whose post-prediction systems add a
// registered Stunned tag through Commands when the counter reaches 7 (mod
// 10) and remove it at 9; a stunned counter moves back by one per tick.
func newStunGame(t *testing.T) (*counterGame, ecs.Entity) {
	g := newCounterGame(t)
	require.NoError(t, gw.Register[Stunned](g.history))
	stunID := ecs.ComponentID[Stunned](g.world.Arche())
	counters := generic.NewFilter1[Counter]().With(generic.T[components.Predicted]())
	g.sched.Add(gw.StagePostPrediction, gw.SystemFunc(func(w *gw.World) {
		q := counters.Query(w.Arche())
		for q.Next() {
			e := q.Entity()
			switch n := q.Get().N; {
			case n%10 == 7 && !w.Arche().Has(e, stunID):
				w.Commands().Add(e, ecs.Component{ID: stunID, Comp: &Stunned{}})
			case n%10 == 9 && w.Arche().Has(e, stunID):
				w.Commands().Remove(e, stunID)
			}
		}
	}))
	stunned := generic.NewFilter1[Counter]().With(generic.T[Stunned]())
	g.sched.Add(gw.StagePostPrediction, gw.SystemFunc(func(w *gw.World) {
		q := stunned.Query(w.Arche())
		for q.Next() {
			q.Get().N--
		}
	}))
	return g, g.spawn(0)
}

// A prediction system that adds or removes a registered component through
// Commands (the documented way) does it again when the tick is replayed. A
// rollback must therefore put back which registered components an entity
// had at the restored tick, or the replay runs with the newest tick's
// structure: a stun added at tick 7 would already hold at tick 6.
func TestRollbackRestoresWhichRegisteredComponentsAnEntityHas(t *testing.T) {
	ref, refEntity := newStunGame(t)
	g, e := newStunGame(t)
	st, err := gw.NewSyncTest(g.sched, g.world, 3)
	require.NoError(t, err)
	for i := 1; i <= 40; i++ {
		ref.ticks(1)
		require.NoError(t, st.Tick(), "tick %d", i)
		require.Equal(t, ref.counter.Get(refEntity).N, g.counter.Get(e).N, "tick %d", i)
	}
	assert.Positive(t, g.history.Stats().Reshaped)
}

// Stopped is a registered mark the prediction adds to a counter: a
// stopped one no longer counts (a projectile marked despawned).
type Stopped struct{}

// A spawn born after the restored tick that the prediction marked later
// is held as it was born: without the mark, which the replay adds again
// on the same tick, so it counts as far as in the first run. Before, it
// was held with the mark and never counted again.
func TestDormantSpawnIsHeldWithTheComponentsItWasBornWith(t *testing.T) {
	g := newCounterGame(t)
	require.NoError(t, gw.Register[Stopped](g.history))
	stoppedID := ecs.ComponentID[Stopped](g.world.Arche())
	var spawned ecs.Entity
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		if w.Tick() == 8 {
			w.Commands().Add(spawned, ecs.Component{ID: stoppedID, Comp: &Stopped{}})
		}
	}))
	filter := generic.NewFilter1[Counter]().With(generic.T[components.Predicted]()).Without(generic.T[Stopped]())
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := filter.Query(w.Arche())
		for q.Next() {
			q.Get().N += 10 // the stopped ones count by 1 only
		}
	}))
	g.ticks(5)
	spawned = g.spawn(0)
	g.ticks(5)
	first := g.counter.Get(spawned).N
	require.NoError(t, g.sched.Rollback(g.world, 3, nil))
	assert.Equal(t, first, g.counter.Get(spawned).N, "the replay counts as the first run did")
	assert.True(t, g.world.Arche().Has(spawned, stoppedID))
}
