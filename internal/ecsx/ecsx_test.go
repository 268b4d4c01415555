package ecsx_test

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/ecsx"
)

type Pos struct{ X float32 }

func TestEndpointStagesRunInTheirPlace(t *testing.T) {
	var order []string
	mark := func(name string) gw.System { return gw.SystemFunc(func(*gw.World) { order = append(order, name) }) }
	s := gw.NewSchedule()
	s.Add(gw.StagePresentation, mark("presentation"))
	s.Add(ecsx.StageInterpolation, mark("interpolation"))
	s.Add(ecsx.StageSend, mark("send"))
	s.Add(gw.StageHistory, mark("history"))
	s.Add(gw.StageSimulation, mark("simulation"))
	s.Add(gw.StagePostPrediction, mark("post-prediction"))
	s.Add(gw.StagePrediction, mark("prediction"))
	s.Add(gw.StagePrePrediction, mark("pre-prediction"))
	s.Add(ecsx.StageInput, mark("input"))
	s.Add(ecsx.StageReceive, mark("receive"))
	w := gw.NewWorld(gw.WorldOptions{})
	s.Tick(w)
	s.Frame(w)
	assert.Equal(t, []string{"receive", "input", "pre-prediction", "prediction", "post-prediction",
		"simulation", "history", "send", "interpolation", "presentation"}, order)
	assert.Equal(t, ecsx.ScheduleStats{Ticks: 1, Frames: 1}, ecsx.Stats(s))
}

// predicted returns a client world with a history of Pos over one
// predicted entity that moves +1 per tick, run for ticks ticks.
func predicted(t *testing.T, ticks int) (*gw.World, *gw.Schedule, *gw.History, ecs.Entity) {
	w := gw.NewWorld(gw.WorldOptions{})
	h, err := gw.EnableHistory[components.Predicted](w, 8)
	require.NoError(t, err)
	require.NoError(t, gw.Register[Pos](h))
	spawn := generic.NewMap2[Pos, components.Predicted](w.Arche())
	e := spawn.NewWith(&Pos{}, &components.Predicted{})
	pos := generic.NewMap[Pos](w.Arche())
	s := gw.NewSchedule()
	s.Add(gw.StagePrediction, gw.SystemFunc(func(*gw.World) { pos.Get(e).X++ }))
	for range ticks {
		s.Tick(w)
	}
	return w, s, h, e
}

func TestHistoryReads(t *testing.T) {
	w, _, h, e := predicted(t, 10)
	assert.Same(t, h, ecsx.History(w))
	assert.Equal(t, 8, ecsx.Capacity(h))
	newest, ok := ecsx.Newest(h)
	require.True(t, ok)
	assert.Equal(t, gw.Tick(10), newest)
	assert.True(t, ecsx.Has(h, 3))
	assert.False(t, ecsx.Has(h, 2), "older than the capacity")

	v, ok := ecsx.Value[Pos](h, 5, e)
	require.True(t, ok)
	assert.Equal(t, Pos{X: 5}, v)
	_, ok = ecsx.Value[Pos](h, 2, e)
	assert.False(t, ok)

	p, err := ecsx.Lookup(h, 4, e, ecs.ComponentID[Pos](w.Arche()))
	require.NoError(t, err)
	assert.Equal(t, Pos{X: 4}, *(*Pos)(p))
	p, err = ecsx.Lookup(h, 4, e, ecs.ComponentID[components.Predicted](w.Arche()))
	assert.NoError(t, err)
	assert.Nil(t, p, "an unregistered component is not recorded")
	_, err = ecsx.Lookup(h, 11, e, ecs.ComponentID[Pos](w.Arche()))
	assert.EqualError(t, err, "ecs: tick 11 is not in the history (it holds ticks 3..10)")
}

func TestSetTickAndLayoutVersion(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	v := ecsx.LayoutVersion(w)
	w.Arche().NewEntity()
	assert.Greater(t, ecsx.LayoutVersion(w), v, "a structural change moves the version")
	ecsx.SetTick(w, 41)
	s := gw.NewSchedule()
	s.Tick(w)
	assert.Equal(t, gw.Tick(42), w.Tick())
}

func TestViewReadsARecordWithoutAllocating(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	marker := ecs.ComponentID[components.Hitboxes](w.Arche())
	h, err := ecsx.NewHistory(w, marker, 4)
	require.NoError(t, err)
	require.NoError(t, ecsx.RegisterType(h, typeOf[Pos]()))
	spawn := generic.NewMap2[Pos, components.Hitboxes](w.Arche())
	a := spawn.NewWith(&Pos{X: 1}, &components.Hitboxes{})
	b := spawn.NewWith(&Pos{X: 2}, &components.Hitboxes{})
	plain := generic.NewMap1[Pos](w.Arche())
	plain.NewWith(&Pos{X: 3}) // no marker: not recorded
	ecsx.Record(h, 7)

	v, err := ecsx.View(h, 7)
	require.NoError(t, err)
	require.Equal(t, 2, v.Len())
	c := v.Component(ecs.ComponentID[Pos](w.Arche()))
	row, ok := v.Row(b)
	require.True(t, ok)
	assert.Equal(t, b, v.Entity(row))
	assert.Equal(t, Pos{X: 2}, *(*Pos)(v.Value(row, c)))
	row, _ = v.Row(a)
	assert.Equal(t, Pos{X: 1}, *(*Pos)(v.Value(row, c)))
	assert.Equal(t, -1, v.Component(ecs.ComponentID[components.Predicted](w.Arche())))

	_, err = ecsx.View(h, 8)
	assert.Error(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		v, _ := ecsx.View(h, 7)
		_ = v.Value(0, c)
	})
	assert.Zero(t, allocs)
}

func TestDesyncAndChecks(t *testing.T) {
	hidden := float32(0) // state the rollback cannot restore
	w := gw.NewWorld(gw.WorldOptions{})
	h, err := gw.EnableHistory[components.Predicted](w, 8)
	require.NoError(t, err)
	require.NoError(t, gw.Register[Pos](h))
	spawn := generic.NewMap2[Pos, components.Predicted](w.Arche())
	spawn.NewWith(&Pos{}, &components.Predicted{})
	pos := generic.NewFilter1[Pos]()
	s := gw.NewSchedule()
	s.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		hidden++
		q := pos.Query(w.Arche())
		for q.Next() {
			q.Get().X += hidden
		}
	}))
	st, err := gw.NewSyncTest(s, w, 2)
	require.NoError(t, err)
	var found error
	for i := 0; i < 5 && found == nil; i++ {
		found = st.Tick()
	}
	require.Error(t, found)
	d, ok := ecsx.DesyncOf(found)
	require.True(t, ok)
	assert.Equal(t, ecsx.Desync{Tick: 2, Component: typeOf[Pos](), Field: "X"}, d)
	assert.Equal(t, uint64(1), ecsx.Checks(st), "the first replayed tick differed")

	_, ok = ecsx.DesyncOf(errors.New("not a desync"))
	assert.False(t, ok)
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func TestUnwrapIsContinuousAcrossTheWraps(t *testing.T) {
	for _, tc := range []struct {
		tick gw.Tick
		near float64
		want float64
	}{
		{5, 5.5, 5},
		{2, math.MaxUint32 + 0.5, 1<<32 + 2},      // just past 2³²
		{math.MaxUint32, 1<<32 + 1.25, 1<<32 - 1}, // just before it
		{1<<31 + 1, 1<<31 - 0.5, 1<<31 + 1},       // across 2³¹
		{math.MaxUint32, 0.5, -1},                 // before a server's first tick
		{7, 3*(1<<32) + 5, 3*(1<<32) + 7},         // three wraps on
	} {
		assert.Equal(t, tc.want, ecsx.Unwrap(tc.tick, tc.near), "tick %d near %v", tc.tick, tc.near)
		tick, _ := gw.TickAt(tc.want + 0.25)
		assert.Equal(t, tc.tick, tick, "TickAt inverts it")
	}
}
