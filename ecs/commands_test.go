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

func TestCommandsDeferStructuralChangesUntilTheSystemReturns(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	a := w.Arche()
	posID := ecs.ComponentID[Position](a)
	velID := ecs.ComponentID[Velocity](a)
	pm := generic.NewMap[Position](a)
	pm1 := generic.NewMap1[Position](a)
	for i := 0; i < 5; i++ {
		pm1.NewWith(&Position{X: float32(i)})
	}
	filter := generic.NewFilter1[Position]()
	var spawned []ecs.Entity
	s := gw.NewSchedule()
	s.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := filter.Query(a)
		for q.Next() {
			p := q.Get()
			switch {
			case p.X == 0:
				w.Commands().Destroy(q.Entity())
			case p.X == 1:
				w.Commands().Add(q.Entity(), ecs.Component{ID: velID, Comp: &Velocity{X: 7}})
			case p.X == 2:
				w.Commands().Remove(q.Entity(), posID)
			case p.X == 3:
				w.Commands().Add(q.Entity(), ecs.Component{ID: posID, Comp: &Position{X: 33}})
			}
		}
		// arche would panic on any of these with the query open.
		w.Commands().Spawn(func(w *gw.World, e ecs.Entity) { spawned = append(spawned, e) },
			ecs.Component{ID: posID, Comp: &Position{X: 99}})
		assert.Equal(t, 5, w.Commands().Len())
	}))
	s.Tick(w)
	assert.Equal(t, 0, w.Commands().Len())
	require.Len(t, spawned, 1)
	assert.Equal(t, float32(99), pm.Get(spawned[0]).X)

	xs := map[float32]bool{}
	q := filter.Query(a)
	for q.Next() {
		xs[q.Get().X] = true
	}
	assert.Equal(t, map[float32]bool{1: true, 33: true, 4: true, 99: true}, xs)
	vq := generic.NewFilter1[Velocity]().Query(a)
	require.Equal(t, 1, vq.Count())
	vq.Next()
	assert.Equal(t, float32(7), vq.Get().X)
	vq.Close()
}

func TestCommandsOnDeadEntitiesAreSkippedAndCounted(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	a := w.Arche()
	posID := ecs.ComponentID[Position](a)
	e := a.NewEntity(posID)
	c := w.Commands()
	c.Destroy(e)
	c.Destroy(e)
	c.Add(e, ecs.Component{ID: posID, Comp: &Position{}})
	c.Remove(e, posID)
	c.Apply()
	assert.False(t, a.Alive(e))
	assert.Equal(t, uint64(3), c.Skipped())

	// A recycled entity ID must not receive commands meant for the dead one.
	e2 := a.NewEntity(posID)
	require.Equal(t, e.ID(), e2.ID())
	c.Remove(e, posID)
	c.Apply()
	assert.True(t, a.Has(e2, posID))
	assert.Equal(t, uint64(4), c.Skipped())
}

// Commands queued by a system before it calls Rollback (a receive system
// spawning the ghost of a confirmed spawn, then reconciling) belong to that
// system: they are applied after it returns, as for any system, never
// inside the rollback's fix or replay, where the spawn would be simulated
// through ticks it did not exist in.
func TestCommandsQueuedBeforeARollbackWaitForTheSystem(t *testing.T) {
	for _, withFix := range []bool{false, true} {
		g := newCounterGame(t)
		g.spawn(0)
		g.ticks(10)
		counterID := ecs.ComponentID[Counter](g.world.Arche())
		predID := ecs.ComponentID[components.Predicted](g.world.Arche())
		var spawned ecs.Entity
		var spawnedWhileReplaying bool
		receive := gw.SystemFunc(func(w *gw.World) {
			w.Commands().Spawn(func(w *gw.World, e ecs.Entity) {
				spawned, spawnedWhileReplaying = e, w.IsReplaying()
			}, ecs.Component{ID: counterID, Comp: &Counter{}}, ecs.Component{ID: predID, Comp: &components.Predicted{}})
			var fix func(*gw.World)
			if withFix {
				fix = func(*gw.World) {}
			}
			require.NoError(t, g.sched.Rollback(w, 8, fix))
			assert.True(t, spawned.IsZero(), "applied inside the rollback (fix: %v)", withFix)
		})
		g.sched.Add(gw.StageReceive, receive)
		g.ticks(1) // tick 11: receive spawns and rolls back, then predicts
		require.False(t, spawned.IsZero())
		assert.False(t, spawnedWhileReplaying)
		assert.Equal(t, int32(1), g.counter.Get(spawned).N, "stepped by tick 11 only (fix: %v)", withFix)
		assert.Equal(t, 0, g.world.Commands().Len())
	}
}
