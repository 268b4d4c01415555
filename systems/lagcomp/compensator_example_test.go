package lagcomp_test

import (
	"fmt"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// A target runs up the y axis at 0.1 per tick. The shooter saw it at tick
// 20.5 and aimed there; the server judges the shot at tick 30 against the
// pose the shooter saw, without touching the live world.
func ExampleCompensator_Judge() {
	w := gw.NewWorld(gw.WorldOptions{})
	pose := func(r *lagcomp.Rewound) ([3]float32, float32) {
		p := lagcomp.Get[Position](r)
		return [3]float32{p.X, p.Y, 0}, 0
	}
	lc, _ := lagcomp.New(w, lagcomp.Options{Pose: pose})
	_ = lagcomp.Register[Position](lc) // what is rewound is declared

	hb := components.Hitboxes{N: 1}
	hb.Boxes[0] = components.Hitbox{Shape: components.ShapeSphere, Radius: 0.3}
	spawn := generic.NewMap2[Position, components.Hitboxes](w.Arche())
	shooter := spawn.NewWith(&Position{}, &hb)
	target := spawn.NewWith(&Position{X: 10}, &hb)
	pos := generic.NewMap[Position](w.Arche())

	sched := gw.NewSchedule()
	sched.Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
		pos.Get(target).Y = float32(w.Tick()) / 10
	}))
	sched.Add(gw.StageHistory, lc) // records every tick
	for range 30 {
		sched.Tick(w)
	}

	shot := lagcomp.Shot{Shooter: shooter, Tick: 30, ViewTick: 20, ViewFraction: 0.5, Dir: [3]float32{10, 2.05, 0}}
	v := lc.Judge(shot)
	fmt.Printf("hit %v (%v) at tick %.1f, %.2f away\n", v.Hit, v.Reason, v.Tick, v.Distance)
	fmt.Println("the live target is still at y =", pos.Get(target).Y)
	// Output:
	// hit true (hit) at tick 20.5, 9.91 away
	// the live target is still at y = 3
}
