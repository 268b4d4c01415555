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

// Cooldown is predicted state the game forgot to register for rollback.
type Cooldown struct {
	Shots int32
	Left  int32
}

// Derived is rewritten from registered state every tick: not registering
// it is right.
type Derived struct{ Speed float32 }

// Received is written outside the prediction (by the receive stage).
type Received struct{ Tick uint32 }

// withExtras gives every predicted entity of g the unregistered components.
func withExtras(t *testing.T, g *game) {
	a := g.world.Arche()
	for _, e := range g.entities {
		a.Add(e, ecs.ComponentID[Cooldown](a), ecs.ComponentID[Derived](a), ecs.ComponentID[Received](a))
	}
	q := generic.NewFilter1[Cooldown]().With(generic.T[components.Predicted]()).Query(a)
	require.Equal(t, len(g.entities), q.Count())
	q.Close()
}

func runSyncTest(t *testing.T, g *game, ticks int) error {
	st, err := gw.NewSyncTest(g.sched, g.world, 3)
	require.NoError(t, err)
	for i := 0; i < ticks; i++ {
		if err := st.Tick(); err != nil {
			return err
		}
	}
	return nil
}

func TestSyncTestNamesAnUnregisteredComponentThePredictionWrites(t *testing.T) {
	cooldownFilter := generic.NewFilter2[Cooldown, Position]().With(generic.T[components.Predicted]())
	// Every shot, counted in the unregistered component, pushes the
	// registered position back by the number of shots so far.
	fire := gw.SystemFunc(func(w *gw.World) {
		q := cooldownFilter.Query(w.Arche())
		for q.Next() {
			c, p := q.Get()
			c.Shots++
			p.X -= float32(c.Shots) / 100
		}
	})
	// Counting only: nothing registered depends on the component.
	count := gw.SystemFunc(func(w *gw.World) {
		q := cooldownFilter.Query(w.Arche())
		for q.Next() {
			c, _ := q.Get()
			c.Left--
		}
	})
	for name, sys := range map[string]gw.System{"feeding registered state": fire, "alone": count} {
		t.Run(name, func(t *testing.T) {
			g := newGame(t, 4, 32)
			withExtras(t, g)
			g.sched.Add(gw.StagePrediction, sys)
			err := runSyncTest(t, g, 20)
			var d *gw.DesyncError
			require.ErrorAs(t, err, &d)
			assert.Equal(t, reflect.TypeFor[Cooldown](), d.Component, "blames the unregistered component, not %v", d.Component)
			assert.True(t, d.Unregistered)
			assert.Equal(t, g.entities[0], d.Entity)
			assert.Equal(t, gw.Tick(2), d.Tick, "the first replayed tick")
			assert.Contains(t, err.Error(), "component ecs_test.Cooldown is written by the prediction but not registered for history (Register)")
		})
	}
}

func TestSyncTestAcceptsUnregisteredComponentsItNeedNotRestore(t *testing.T) {
	g := newGame(t, 4, 32)
	withExtras(t, g)
	derived := generic.NewFilter2[Derived, Velocity]().With(generic.T[components.Predicted]())
	received := generic.NewFilter1[Received]()
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := derived.Query(w.Arche())
		for q.Next() {
			d, v := q.Get()
			d.Speed = v.X*v.X + v.Y*v.Y
		}
	}))
	for _, st := range []gw.Stage{gw.StageReceive, gw.StageSimulation} {
		g.sched.Add(st, gw.SystemFunc(func(w *gw.World) {
			q := received.Query(w.Arche())
			for q.Next() {
				q.Get().Tick = uint32(w.Tick())
			}
		}))
	}
	require.NoError(t, runSyncTest(t, g, 40))
}

// hiddenPush is state outside components, the sync test's classic find.
var hiddenPush float32

// When hidden state corrupts registered state, an unregistered component
// derived from it differs too, and rollback did not restore it either: the
// sync test must still blame the registered component, because restoring
// the unregistered one does not make the replay match.
func TestSyncTestBlamesHiddenStateNotADerivedComponent(t *testing.T) {
	hiddenPush = 0
	g := newGame(t, 4, 32)
	withExtras(t, g)
	vel := generic.NewFilter2[Velocity, Derived]().With(generic.T[components.Predicted]())
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		hiddenPush++
		q := vel.Query(w.Arche())
		for q.Next() {
			v, d := q.Get()
			v.Z += hiddenPush
			d.Speed = v.X*v.X + v.Y*v.Y + v.Z*v.Z
		}
	}))
	err := runSyncTest(t, g, 20)
	var d *gw.DesyncError
	require.ErrorAs(t, err, &d)
	assert.Equal(t, reflect.TypeFor[Velocity](), d.Component)
	assert.Equal(t, "Z", d.Field)
	assert.False(t, d.Unregistered)
	assert.NotContains(t, err.Error(), "not registered")
}
