package ecs_test

import (
	"reflect"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestSyncTestPassesOnADeterministicGame(t *testing.T) {
	g := newGame(t, 200, 64)
	st, err := gw.NewSyncTest(g.sched, g.world, 8)
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		require.NoError(t, st.Tick())
	}
	assert.Equal(t, uint64((300-8)*8), st.Checks())
}

// hiddenCounter is state living outside components: the bug the sync test
// exists to find.
var hiddenCounter float32

func TestSyncTestFindsHiddenState(t *testing.T) {
	hiddenCounter = 0
	g := newGame(t, 50, 64)
	target := g.entities[7]
	body := generic.NewMap[Body](g.world.Arche())
	pos := generic.NewMap[Position](g.world.Arche())
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		hiddenCounter++
		if body.Get(target).Index == 7 {
			pos.Get(target).Y += hiddenCounter
		}
	}))
	st, err := gw.NewSyncTest(g.sched, g.world, 4)
	require.NoError(t, err)
	var derr error
	for i := 0; i < 20 && derr == nil; i++ {
		derr = st.Tick()
	}
	var d *gw.DesyncError
	require.ErrorAs(t, derr, &d)
	// Ticks 1..5 run once; tick 5 rolls back to 1 and replays 2 first.
	assert.Equal(t, gw.Tick(2), d.Tick)
	assert.Equal(t, target, d.Entity)
	assert.Equal(t, reflect.TypeFor[Position](), d.Component)
	assert.Equal(t, "Y", d.Field)
	assert.Contains(t, derr.Error(), "desync at tick 2")
}

// keyboard stands for a device a system must not read.
var keyboard float32

func TestSyncTestFindsInputReadInsideASystem(t *testing.T) {
	g := newGame(t, 10, 64)
	vel := generic.NewFilter1[Velocity]().With(generic.T[components.Predicted]())
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := vel.Query(w.Arche())
		for q.Next() {
			q.Get().Z += keyboard
		}
	}))
	st, err := gw.NewSyncTest(g.sched, g.world, 3)
	require.NoError(t, err)
	var derr error
	for i := 1; i <= 20 && derr == nil; i++ {
		keyboard = float32(i % 4) // the key the player holds this tick
		derr = st.Tick()
	}
	var d *gw.DesyncError
	require.ErrorAs(t, derr, &d)
	// Tick 4 rolls back to 1 and replays tick 2 with key 0 instead of 2.
	assert.Equal(t, gw.Tick(2), d.Tick)
	assert.Equal(t, g.entities[0], d.Entity)
	assert.Equal(t, reflect.TypeFor[Velocity](), d.Component)
	assert.Equal(t, "Z", d.Field)
}

func TestSyncTestValidatesRollback(t *testing.T) {
	g := newGame(t, 1, 16)
	_, err := gw.NewSyncTest(g.sched, g.world, 16)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "16")
}

func TestSyncTestReportsAMissingEntity(t *testing.T) {
	g := newGame(t, 3, 16)
	doomed := g.entities[2]
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		if w.IsReplaying() && w.Arche().Alive(doomed) {
			w.Commands().Destroy(doomed)
		}
	}))
	st, err := gw.NewSyncTest(g.sched, g.world, 2)
	require.NoError(t, err)
	var derr error
	for i := 0; i < 10 && derr == nil; i++ {
		derr = st.Tick()
	}
	var d *gw.DesyncError
	require.ErrorAs(t, derr, &d)
	assert.Equal(t, doomed, d.Entity)
	assert.Nil(t, d.First)
	assert.Contains(t, derr.Error(), "only one of")
}

// A predicted spawn made by a side-effect system (the pattern the History
// documentation prescribes) is held dormant by the rollback until its birth
// tick is replayed; the sync test must compare that tick with the spawn in
// place, not report a desync the game does not have.
func TestSyncTestAcceptsPredictedSpawnsFromSideEffects(t *testing.T) {
	g := newGame(t, 3, 64)
	a := g.world.Arche()
	posID := ecs.ComponentID[Position](a)
	velID := ecs.ComponentID[Velocity](a)
	bodyID := ecs.ComponentID[Body](a)
	predID := ecs.ComponentID[components.Predicted](a)
	g.sched.AddSideEffect(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		if w.Tick()%5 == 0 { // a projectile every fifth tick
			w.Commands().Spawn(nil,
				ecs.Component{ID: posID, Comp: &Position{X: float32(w.Tick())}},
				ecs.Component{ID: velID, Comp: &Velocity{}},
				ecs.Component{ID: bodyID, Comp: &Body{Index: uint32(w.Tick())}},
				ecs.Component{ID: predID, Comp: &components.Predicted{}})
		}
	}))
	st, err := gw.NewSyncTest(g.sched, g.world, 3)
	require.NoError(t, err)
	for i := 0; i < 40; i++ {
		require.NoError(t, st.Tick(), "tick %d", g.world.Tick())
	}
	assert.Equal(t, uint64((40-3)*3), st.Checks())
	assert.Positive(t, g.history.Stats().Dormant)
}

// Marked is a registered component a prediction system adds once.
type Marked struct{ Tick gw.Tick }

// A prediction system that adds a registered component moves its entity
// to another archetype; a replay from before removes it (the entity goes
// to the end of its old archetype) and adds it again, so the replay's
// storage order differs from the first run's while every value is the
// same: no desync.
func TestSyncTestAcceptsAnotherStorageOrder(t *testing.T) {
	g := newGame(t, 4, 64)
	require.NoError(t, gw.Register[Marked](g.history))
	first := g.entities[0]
	markedID := ecs.ComponentID[Marked](g.world.Arche())
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		if w.Tick() == 6 {
			w.Commands().Add(first, ecs.Component{ID: markedID, Comp: &Marked{Tick: w.Tick()}})
		}
	}))
	st, err := gw.NewSyncTest(g.sched, g.world, 3)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		require.NoError(t, st.Tick(), "tick %d", g.world.Tick())
	}
	assert.Equal(t, uint64((20-3)*3), st.Checks())
	assert.True(t, g.world.Arche().Has(first, markedID), "marked, as the first run left it")
}
