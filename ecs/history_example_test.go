package ecs_test

import (
	"fmt"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// A client world predicts one entity, rolls back to tick 3 with a
// correction from the server and replays ticks 4 and 5.
func ExampleSchedule_Rollback() {
	type Pos struct{ X float32 }

	w := gw.NewWorld(gw.WorldOptions{})
	h, _ := gw.EnableHistory[components.Predicted](w, 32)
	if err := gw.Register[Pos](h); err != nil {
		panic(err)
	}
	spawn := generic.NewMap2[Pos, components.Predicted](w.Arche())
	e := spawn.NewWith(&Pos{}, &components.Predicted{})

	filter := generic.NewFilter1[Pos]().With(generic.T[components.Predicted]())
	sched := gw.NewSchedule()
	sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := filter.Query(w.Arche())
		for q.Next() {
			q.Get().X++ // move one unit per tick
		}
	}))
	sched.AddSideEffect(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		fmt.Println("footstep at tick", w.Tick())
	}))

	for i := 0; i < 5; i++ {
		sched.Tick(w)
	}
	pos := generic.NewMap[Pos](w.Arche())
	fmt.Println("predicted:", pos.Get(e).X)

	// The server says the entity was at 10 at tick 3.
	err := sched.Rollback(w, 3, func(w *gw.World) { pos.Get(e).X = 10 })
	fmt.Println("corrected:", pos.Get(e).X, err)
	// Output:
	// footstep at tick 1
	// footstep at tick 2
	// footstep at tick 3
	// footstep at tick 4
	// footstep at tick 5
	// predicted: 5
	// corrected: 12 <nil>
}

// The sync test finds state that lives outside registered components.
func ExampleSyncTest() {
	type Pos struct{ X float32 }
	var hidden float32 // the bug: a variable the rollback cannot restore

	w := gw.NewWorld(gw.WorldOptions{})
	h, _ := gw.EnableHistory[components.Predicted](w, 16)
	_ = gw.Register[Pos](h)
	spawn := generic.NewMap2[Pos, components.Predicted](w.Arche())
	spawn.NewWith(&Pos{}, &components.Predicted{})
	filter := generic.NewFilter1[Pos]()
	sched := gw.NewSchedule()
	sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		hidden++
		q := filter.Query(w.Arche())
		for q.Next() {
			q.Get().X += hidden
		}
	}))

	st, _ := gw.NewSyncTest(sched, w, 2)
	for i := 0; i < 10; i++ {
		if err := st.Tick(); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// ecs: desync at tick 2: entity {1 0} component ecs_test.Pos field X is 5 after replay, was 3 in the first run
}

// The sync test names a component the prediction writes but the history
// does not restore, instead of blaming the position it feeds.
func ExampleSyncTest_unregistered() {
	type Pos struct{ X float32 }
	type Ammo struct{ Shots int32 } // forgotten: not registered

	w := gw.NewWorld(gw.WorldOptions{})
	h, _ := gw.EnableHistory[components.Predicted](w, 16)
	_ = gw.Register[Pos](h)
	spawn := generic.NewMap3[Pos, Ammo, components.Predicted](w.Arche())
	spawn.NewWith(&Pos{}, &Ammo{}, &components.Predicted{})
	filter := generic.NewFilter2[Pos, Ammo]()
	sched := gw.NewSchedule()
	sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := filter.Query(w.Arche())
		for q.Next() {
			p, a := q.Get()
			a.Shots++
			p.X -= float32(a.Shots) // recoil
		}
	}))

	st, _ := gw.NewSyncTest(sched, w, 2)
	for i := 0; i < 10; i++ {
		if err := st.Tick(); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// ecs: desync at tick 2: component ecs_test.Ammo is written by the prediction but not registered for history (Register): entity {1 0} field Shots is 4 after replay, was 2 in the first run
}

// A game reads its own history: where an entity was at a tick still held,
// and what a whole tick holds, without touching the live world (a
// kill-cam, a hit review, a replay's scrubber).
func ExampleValueAt() {
	type Pos struct{ X float32 }

	w := gw.NewWorld(gw.WorldOptions{})
	h, _ := gw.EnableHistory[components.Predicted](w, 8)
	if err := gw.Register[Pos](h); err != nil {
		panic(err)
	}
	spawn := generic.NewMap2[Pos, components.Predicted](w.Arche())
	e := spawn.NewWith(&Pos{}, &components.Predicted{})
	filter := generic.NewFilter1[Pos]().With(generic.T[components.Predicted]())
	sched := gw.NewSchedule()
	sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := filter.Query(w.Arche())
		for q.Next() {
			q.Get().X += 2
		}
	}))
	for range 12 {
		sched.Tick(w)
	}

	oldest, _ := h.Oldest()
	newest, _ := h.Newest()
	fmt.Println("holds ticks", oldest, "to", newest, "of", h.Capacity())
	p, ok := gw.ValueAt[Pos](h, 7, e)
	fmt.Println("x at tick 7:", p.X, ok)
	_, ok = gw.ValueAt[Pos](h, 2, e)
	fmt.Println("tick 2 held:", ok, h.Has(2))

	view, err := h.View(10)
	if err != nil {
		panic(err)
	}
	c := view.Component(ecs.ComponentID[Pos](w.Arche()))
	for i := range view.Len() {
		fmt.Println("tick 10:", view.Entity(i) == e, (*Pos)(view.Value(i, c)).X)
	}
	_, err = h.View(2)
	fmt.Println(err)
	// Output:
	// holds ticks 5 to 12 of 8
	// x at tick 7: 14 true
	// tick 2 held: false false
	// tick 10: true 20
	// ecs: tick 2 is not in the history (it holds ticks 5..12)
}
