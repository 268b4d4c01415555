package lagcomp_test

import (
	"fmt"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// A kill-cam: every judged shot's scene is kept as it is judged (OnJudge),
// and shown later, long after the history has moved on: where the target
// stood in the shooter's view, the ray, and the verdict the scene casts
// again.
func ExampleCompensator_Capture() {
	w := gw.NewWorld(gw.WorldOptions{})
	pose := func(r *lagcomp.Rewound) ([3]float32, float32) {
		p := lagcomp.Get[Position](r)
		return [3]float32{p.X, p.Y, 0}, 0
	}
	var kept []lagcomp.Scene
	lc, _ := lagcomp.New(w, lagcomp.Options{Pose: pose, OnJudge: func(c *lagcomp.Compensator, s lagcomp.Shot, v lagcomp.Verdict) {
		var sc lagcomp.Scene
		c.Capture(s, v, &sc)
		kept = append(kept, sc)
	}})
	_ = lagcomp.Register[Position](lc)

	hb := components.Hitboxes{N: 1}
	hb.Boxes[0] = components.Hitbox{Shape: components.ShapeSphere, Radius: 0.3}
	spawn := generic.NewMap2[Position, components.Hitboxes](w.Arche())
	shooter := spawn.NewWith(&Position{}, &hb)
	target := spawn.NewWith(&Position{X: 10}, &hb)
	pos := generic.NewMap[Position](w.Arche())
	sched := gw.NewSchedule()
	sched.Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) { pos.Get(target).Y = float32(w.Tick()) / 10 }))
	sched.Add(gw.StageHistory, lc)
	for range 30 {
		sched.Tick(w)
	}
	lc.Judge(lagcomp.Shot{Shooter: shooter, Tick: 30, ViewTick: 20, ViewFraction: 0.5, Dir: [3]float32{10, 2.05, 0}, MaxViewAge: 12})
	for range 300 { // five seconds later, the replay of the kill
		sched.Tick(w)
	}

	sc := kept[0]
	for _, p := range sc.Posed {
		if !p.Shooter {
			fmt.Printf("in the shooter's view (tick %.1f) the target stood at (%.2f, %.2f)\n", sc.View, p.Position[0], p.Position[1])
		}
	}
	again := sc.Cast()
	fmt.Printf("verdict %v, cast again: %v, %.2f away\n", sc.Verdict.Reason, again.Reason, again.Distance)
	// Output:
	// in the shooter's view (tick 20.5) the target stood at (10.00, 2.05)
	// verdict hit, cast again: hit, 9.91 away
}
