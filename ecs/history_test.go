package ecs_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestRollbackReplayIsBitIdentical(t *testing.T) {
	const entities, ticks = 1000, 100
	ref := newGame(t, entities, 128)
	sums := make(map[gw.Tick]uint64)
	for i := 0; i < ticks; i++ {
		ref.sched.Tick(ref.world)
		sum, err := ref.history.Checksum(ref.world.Tick())
		require.NoError(t, err)
		sums[ref.world.Tick()] = sum
	}
	wantP, wantV, wantB := ref.state()

	for _, back := range []int{1, 8, 60} {
		t.Run(fmt.Sprintf("rollback %d", back), func(t *testing.T) {
			g := newGame(t, entities, 128)
			pos := generic.NewMap[Position](g.world.Arche())
			for i := 0; i < ticks; i++ {
				g.sched.Tick(g.world)
				now := g.world.Tick()
				if now <= gw.Tick(back) {
					continue
				}
				// Scribble over the present so only restore can make it right.
				for _, e := range g.entities {
					pos.Get(e).X = float32(math.NaN())
				}
				require.NoError(t, g.sched.Rollback(g.world, now.Add(-back), nil))
				require.Equal(t, now, g.world.Tick(), "rollback must put the tick back")
				for tick := now.Add(-back); tick <= now; tick++ {
					sum, err := g.history.Checksum(tick)
					require.NoError(t, err)
					require.Equalf(t, sums[tick], sum, "checksum of tick %d after rollback to %d", tick, now.Add(-back))
				}
			}
			gotP, gotV, gotB := g.state()
			requireBitEqual(t, wantP, gotP)
			requireBitEqual(t, wantV, gotV)
			requireBitEqual(t, wantB, gotB)
			st := g.sched.Stats()
			assert.Equal(t, uint64(ticks-back), st.Rollbacks)
			assert.Equal(t, uint64(ticks-back)*uint64(back), st.ReplayedTicks)
		})
	}
}

// requireBitEqual compares slices of plain structs byte for byte (NaN-safe,
// -0 distinct from 0).
func requireBitEqual[T any](t *testing.T, want, got []T) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	size := int(unsafe.Sizeof(*new(T)))
	if len(want) == 0 {
		return
	}
	wb := unsafe.Slice((*byte)(unsafe.Pointer(&want[0])), size*len(want))
	gb := unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), size*len(got))
	for i := range want {
		require.Equal(t, wb[i*size:(i+1)*size], gb[i*size:(i+1)*size], "%T: entity %d differs: want %+v, got %+v", want[0], i, want[i], got[i])
	}

}

func TestRestoreOverwrittenTickIsAnError(t *testing.T) {
	g := newGame(t, 10, 16)
	for i := 0; i < 40; i++ {
		g.sched.Tick(g.world)
	}
	err := g.history.Restore(10)
	var te *gw.TickRangeError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, gw.Tick(10), te.Tick)
	assert.Equal(t, gw.Tick(25), te.Oldest)
	assert.Equal(t, gw.Tick(40), te.Newest)
	assert.EqualError(t, err, "ecs: tick 10 is not in the history (it holds ticks 25..40)")

	require.Error(t, g.history.Restore(41), "a tick never recorded")
	require.Error(t, g.sched.Rollback(g.world, 24, nil))
	require.NoError(t, g.history.Restore(25))

	_, ok := gw.ValueAt[Position](g.history, 10, g.entities[0])
	assert.False(t, ok, "an overwritten tick must not return another tick's data")
}

func TestHistoryValueIsTheRecordedValue(t *testing.T) {
	g := newGame(t, 5, 32)
	pos := generic.NewMap[Position](g.world.Arche())
	want := map[gw.Tick]Position{}
	for i := 0; i < 20; i++ {
		g.sched.Tick(g.world)
		want[g.world.Tick()] = *pos.Get(g.entities[3])
	}
	for tick := gw.Tick(1); tick <= 20; tick++ {
		got, ok := gw.ValueAt[Position](g.history, tick, g.entities[3])
		require.True(t, ok)
		assert.Equal(t, want[tick], got)
	}
	_, ok := gw.ValueAt[components.Predicted](g.history, 5, g.entities[3])
	assert.False(t, ok, "an unregistered component has no history")
}

type withPointer struct {
	X   float32
	Ref *int
}

type nested struct {
	A   int32
	Sub struct {
		Names []string
	}
}

func TestRegisterRefusesNonPlainData(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	h, err := gw.EnableHistory[components.Predicted](w, 0)
	require.NoError(t, err)

	err = gw.Register[withPointer](h)
	var pe *gw.PlainDataError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Ref", pe.Field)
	assert.Contains(t, err.Error(), "field Ref is a ptr")

	err = gw.Register[nested](h)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Sub.Names", pe.Field)

	for _, err := range []error{
		gw.Register[string](h),
		gw.Register[map[int]int](h),
		gw.Register[struct{ F func() }](h),
		gw.Register[struct{ C chan int }](h),
		gw.Register[struct{ I any }](h),
		gw.Register[struct{ P unsafe.Pointer }](h),
	} {
		require.ErrorAs(t, err, &pe)
	}
	require.NoError(t, gw.Register[Position](h))
	require.Error(t, gw.Register[Position](h), "registered twice")
}

func TestEnableHistoryValidatesCapacity(t *testing.T) {
	for _, c := range []int{-1, 1, 65537} {
		_, err := gw.EnableHistory[components.Predicted](gw.NewWorld(gw.WorldOptions{}), c)
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprint(c))
	}
	w := gw.NewWorld(gw.WorldOptions{})
	h, err := gw.EnableHistory[components.Predicted](w, 0)
	require.NoError(t, err)
	assert.Equal(t, 128, h.Capacity())
	_, err = gw.EnableHistory[components.Predicted](w, 0)
	require.Error(t, err)
}

func TestRegisterAfterRecordIsAnError(t *testing.T) {
	g := newGame(t, 1, 8)
	g.sched.Tick(g.world)
	require.Error(t, gw.Register[struct{ A int32 }](g.history))
}

func TestHistoryStaysBoundedOver100000Ticks(t *testing.T) {
	g := newGame(t, 50, 64)
	// Structural churn every 100 ticks exercises layout capture too.
	var ms runtime.MemStats
	heapAt := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var early uint64
	for i := 1; i <= 100_000; i++ {
		g.sched.Tick(g.world)
		if i%100 == 0 {
			g.world.Arche().RemoveEntity(g.entities[0])
			g.entities = g.entities[1:]
			g.spawn(1)
		}
		if i == 10_000 {
			early = heapAt()
		}
	}
	held := 0
	for tick := gw.Tick(1); tick <= 100_000; tick++ {
		if g.history.Has(tick) {
			held++
		}
	}
	assert.Equal(t, g.history.Capacity(), held)
	oldest, _ := g.history.Oldest()
	newest, _ := g.history.Newest()
	assert.Equal(t, gw.Tick(100_000-64+1), oldest)
	assert.Equal(t, gw.Tick(100_000), newest)
	late := heapAt()
	assert.Less(t, late, early+256<<10, "heap grew from %d to %d bytes between tick 10,000 and 100,000", early, late)
}

func TestRestoreSkipsDeadEntitiesAndHoldsNewborns(t *testing.T) {
	g := newGame(t, 4, 32)
	a := g.world.Arche()
	for i := 0; i < 5; i++ {
		g.sched.Tick(g.world)
	}
	// Tick 6: entity 0 dies, entity 4 is spawned (first recorded at 6).
	g.world.Arche().RemoveEntity(g.entities[0])
	g.spawn(1)
	g.sched.Tick(g.world)
	for i := 0; i < 3; i++ {
		g.sched.Tick(g.world)
	}
	newborn := g.entities[4]
	bornAt, ok := gw.ValueAt[Body](g.history, 6, newborn)
	require.True(t, ok)
	now, _ := gw.ValueAt[Body](g.history, 9, newborn)
	require.Equal(t, bornAt.Steps+3, now.Steps)

	bodies := generic.NewMap[Body](a)
	steps := map[gw.Tick]uint32{}
	var seen []gw.Tick
	spy := gw.SystemFunc(func(w *gw.World) {
		seen = append(seen, w.Tick())
		if a.Has(newborn, ecs.ComponentID[components.Predicted](a)) {
			steps[w.Tick()] = bodies.Get(newborn).Steps
		}
	})
	g.sched.Add(gw.StagePrediction, spy)
	require.NoError(t, g.sched.Rollback(g.world, 3, nil))
	assert.Equal(t, []gw.Tick{4, 5, 6, 7, 8, 9}, seen)
	// Dormant through tick 6 (its birth tick), predicted again from 7 on.
	_, during := steps[6]
	assert.False(t, during, "a predicted spawn must not be simulated before its birth tick is replayed")
	assert.Equal(t, bornAt.Steps+1, steps[7])
	after, _ := gw.ValueAt[Body](g.history, 9, newborn)
	assert.Equal(t, now, after, "the newborn ends where it was before the rollback")
	assert.True(t, a.Has(newborn, ecs.ComponentID[components.Predicted](a)), "woken after replay")
	hs := g.history.Stats()
	assert.Equal(t, uint64(1), hs.SkippedEntities)
	assert.Equal(t, uint64(1), hs.Dormant)
	assert.Equal(t, uint64(1), hs.SlowRestores)
}

func TestEntityCreatedAfterNewestRecordWaitsForReplayEnd(t *testing.T) {
	g := newGame(t, 2, 32)
	for i := 0; i < 5; i++ {
		g.sched.Tick(g.world)
	}
	g.spawn(1) // not yet recorded: as a ghost spawned while receiving
	e := g.entities[2]
	bodies := generic.NewMap[Body](g.world.Arche())
	before := *bodies.Get(e)
	require.NoError(t, g.sched.Rollback(g.world, 2, nil))
	after := *bodies.Get(e)
	assert.Equal(t, before, after, "not simulated by the replay")
	assert.True(t, g.world.Arche().Has(e, ecs.ComponentID[components.Predicted](g.world.Arche())))
}

// Bulk copies rely on arche storing one archetype's rows contiguously, in
// query order (true in v0.15.3, not documented). This test fails first if
// an arche upgrade changes that.
func TestArcheStoresArchetypeRowsContiguously(t *testing.T) {
	w := ecs.NewWorld()
	m := generic.NewMap2[Position, Body](&w)
	for i := 0; i < 1000; i++ {
		m.NewWith(&Position{X: float32(i)}, &Body{Index: uint32(i)})
		if i%3 == 0 {
			e := m.NewWith(&Position{}, &Body{})
			w.RemoveEntity(e)
		}
	}
	posID := ecs.ComponentID[Position](&w)
	q := w.Query(ecs.All(posID))
	var base uintptr
	for i := 0; q.Next(); i++ {
		p := uintptr(q.Get(posID))
		if i == 0 {
			base = p
			continue
		}
		require.Equal(t, base+uintptr(i)*unsafe.Sizeof(Position{}), p, "row %d", i)
	}
}

type rel struct{ ecs.Relation }

// Archetypes with a relation component share one mask across targets; the
// history copies them row by row and still restores exactly.
func TestRelationArchetypesUsePerRowCopies(t *testing.T) {
	g := newGame(t, 0, 16)
	a := g.world.Arche()
	parents := []ecs.Entity{a.NewEntity(), a.NewEntity()}
	m := generic.NewMap5[Position, Velocity, Body, components.Predicted, rel](a, generic.T[rel]())
	for i := 0; i < 10; i++ {
		e := m.NewWith(&Position{X: float32(i)}, &Velocity{}, &Body{Index: uint32(i)}, &components.Predicted{}, &rel{}, parents[i%2])
		g.entities = append(g.entities, e)
	}
	for i := 0; i < 5; i++ {
		g.sched.Tick(g.world)
	}
	want, _, _ := g.state()
	for i := 0; i < 3; i++ {
		g.sched.Tick(g.world)
	}
	require.NoError(t, g.history.Restore(5))
	got, _, _ := g.state()
	requireBitEqual(t, want, got)
	assert.Zero(t, g.history.Stats().SlowRestores)
}

func TestTickErrorForEmptyHistory(t *testing.T) {
	g := newGame(t, 1, 8)
	err := g.history.Restore(1)
	var te *gw.TickRangeError
	require.True(t, errors.As(err, &te))
	assert.Contains(t, err.Error(), "empty")
	_, err = gw.NewSyncTest(gw.NewSchedule(), gw.NewWorld(gw.WorldOptions{}), 0)
	assert.ErrorIs(t, err, gw.ErrNoHistory)
	assert.ErrorIs(t, gw.NewSchedule().Rollback(gw.NewWorld(gw.WorldOptions{}), 1, nil), gw.ErrNoHistory)
}

// Stunned is a tag: plain data of size zero, which registration accepts.
type Stunned struct{}

func TestHistoryOfAZeroSizeComponent(t *testing.T) {
	g := newGame(t, 0, 16)
	require.NoError(t, gw.Register[Stunned](g.history))
	g.spawn(2)
	a := g.world.Arche()
	stunned := g.entities[0]
	a.Add(stunned, ecs.ComponentID[Stunned](a))
	g.sched.Tick(g.world)

	_, ok := gw.ValueAt[Stunned](g.history, 1, stunned)
	assert.True(t, ok, "the tag was recorded at tick 1")
	_, ok = gw.ValueAt[Stunned](g.history, 1, g.entities[1])
	assert.False(t, ok, "the other entity had no tag")

	v, err := g.history.View(1)
	require.NoError(t, err)
	c := v.Component(ecs.ComponentID[Stunned](a))
	row, ok := v.Row(stunned)
	require.True(t, ok)
	assert.NotNil(t, v.Value(row, c))
	require.NoError(t, g.history.Restore(1))
}
