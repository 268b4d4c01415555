package ecs_test

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
