package ecs_test

import (
	"fmt"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// spawner makes a structural change inside a query: the mistake arche
// reports only as "attempt to modify a locked world".
type spawner struct{ name string }

func (s *spawner) Name() string { return s.name }

func (s *spawner) Update(w *gw.World) { spawnInsideQuery(w) }

func spawnInsideQuery(w *gw.World) {
	q := generic.NewFilter1[Position]().Query(w.Arche())
	for q.Next() {
		pm := generic.NewMap1[Position](w.Arche())
		pm.New()
	}
}

type anonymousSpawner struct{}

func (anonymousSpawner) Update(w *gw.World) { spawnInsideQuery(w) }

// panicMessage runs f and returns what it panicked with, as text.
func panicMessage(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "no panic")
		msg = fmt.Sprint(r)
	}()
	f()
	return ""
}

func TestStructuralChangeInAQueryNamesTheSystemAndStage(t *testing.T) {
	newWorld := func() *gw.World {
		w := gw.NewWorld(gw.WorldOptions{})
		pm := generic.NewMap1[Position](w.Arche())
		pm.New()
		return w
	}
	t.Run("named system", func(t *testing.T) {
		s := gw.NewSchedule().Add(gw.StagePrediction, &spawner{name: "projectile spawner"})
		msg := panicMessage(t, func() { s.Tick(newWorld()) })
		assert.Contains(t, msg, `system "projectile spawner"`)
		assert.Contains(t, msg, `stage "prediction"`)
		assert.Contains(t, msg, "World.Commands()")
		assert.Contains(t, msg, "attempt to modify a locked world", "arche's own words stay")
	})
	t.Run("system without a name in a nested group", func(t *testing.T) {
		s := gw.NewSchedule().Add(gw.StageSimulation, gw.NewGroup("weapons").Add(anonymousSpawner{}))
		msg := panicMessage(t, func() { s.Tick(newWorld()) })
		assert.Contains(t, msg, "ecs_test.anonymousSpawner")
		assert.Contains(t, msg, `stage "simulation"`)
		assert.Contains(t, msg, `group "weapons"`)
		assert.Contains(t, msg, "Commands")
	})
	t.Run("function system", func(t *testing.T) {
		s := gw.NewSchedule().Add(gw.StagePresentation, gw.SystemFunc(spawnInsideQuery))
		msg := panicMessage(t, func() { s.Frame(newWorld()) })
		assert.Contains(t, msg, "ecs_test.spawnInsideQuery")
		assert.Contains(t, msg, `stage "presentation"`)
		assert.Contains(t, msg, "Commands")
	})
	t.Run("group run by hand", func(t *testing.T) {
		g := gw.NewGroup("ai").Add(&spawner{name: "brain"})
		msg := panicMessage(t, func() { g.Update(newWorld()) })
		assert.Contains(t, msg, `system "brain"`)
		assert.Contains(t, msg, `group "ai"`)
		assert.Contains(t, msg, "Commands")
	})
	t.Run("query left open", func(t *testing.T) {
		leaky := gw.SystemFunc(func(w *gw.World) {
			q := generic.NewFilter1[Position]().Query(w.Arche())
			for q.Next() {
				break // without q.Close(): the world stays locked
			}
		})
		s := gw.NewSchedule().Add(gw.StagePostPrediction, gw.NewGroup("cleanup").Add(leaky))
		msg := panicMessage(t, func() { s.Tick(newWorld()) })
		assert.Contains(t, msg, "ecs_test.TestStructuralChangeInAQueryNamesTheSystemAndStage")
		assert.Contains(t, msg, `group "cleanup" in stage "post-prediction"`)
		assert.Contains(t, msg, "query still open")
		assert.Contains(t, msg, "Close")
	})
	t.Run("component type registered inside a query", func(t *testing.T) {
		type lateType struct{ V int32 }
		late := gw.SystemFunc(func(w *gw.World) {
			q := generic.NewFilter1[Position]().Query(w.Arche())
			for q.Next() {
				_ = ecs.ComponentID[lateType](w.Arche())
			}
		})
		s := gw.NewSchedule().Add(gw.StageInput, late)
		msg := panicMessage(t, func() { s.Tick(newWorld()) })
		assert.Contains(t, msg, `stage "input"`)
		assert.Contains(t, msg, "register component types before running")
		assert.Contains(t, msg, "World.Commands()")
	})
	t.Run("other panics pass unchanged", func(t *testing.T) {
		s := gw.NewSchedule().Add(gw.StagePrediction, gw.SystemFunc(func(*gw.World) { panic("boom") }))
		assert.PanicsWithValue(t, "boom", func() { s.Tick(newWorld()) })
	})
}
