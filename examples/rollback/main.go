// Command rollback shows ghostwire's ECS core on its own: a client world
// predicts a few entities from recorded inputs, a pretend server corrects
// one of them for a past tick, and the world rolls back and replays. A
// footstep side effect fires once per tick however often ticks replay, and
// a sync test proves the prediction deterministic.
//
//	go run ./examples/rollback
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// Position and Velocity are the predicted state of a walker.
type Position struct{ X, Y float32 }

// Velocity is in units per tick.
type Velocity struct{ X, Y float32 }

// Walker identifies whose recorded input an entity follows.
type Walker struct{ Index uint32 }

// inputs are what each walker "pressed" on each tick: data recorded per
// tick, never read from a device inside a system. A replay reads the rows
// of past ticks, at most 60 back, so 128 rows indexed by tick modulo 128
// hold every tick a replay can ask for.
type inputs struct{ rows [128][4]float32 }

func (in *inputs) sample(tick gw.Tick) {
	var row [4]float32
	for i := range row {
		row[i] = float32(int((uint32(tick)*7+uint32(i)*13)%5) - 2)
	}
	in.rows[tick%128] = row
}

type moveSystem struct {
	in     *inputs
	filter *generic.Filter3[Position, Velocity, Walker]
}

func (s *moveSystem) Update(w *gw.World) {
	row := s.in.rows[w.Tick()%128]
	q := s.filter.Query(w.Arche())
	for q.Next() {
		p, v, wk := q.Get()
		v.X = v.X*0.5 + row[wk.Index]*0.1
		v.Y = v.Y*0.5 + 0.05
		p.X += v.X
		p.Y += v.Y
	}
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rollback:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("rollback", flag.ContinueOnError)
	ticks := fs.Int("ticks", 120, "ticks to simulate (1..100000)")
	every := fs.Int("correct-every", 20, "ticks between server corrections (1..ticks)")
	back := fs.Int("rollback", 6, "how many ticks each correction rolls back (1..60)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *ticks < 1 || *ticks > 100000:
		return fmt.Errorf("-ticks %d: allowed range is 1..100000", *ticks)
	case *every < 1 || *every > *ticks:
		return fmt.Errorf("-correct-every %d: allowed range is 1..%d", *every, *ticks)
	case *back < 1 || *back > 60:
		return fmt.Errorf("-rollback %d: allowed range is 1..60", *back)
	}

	w := gw.NewWorld(gw.WorldOptions{})
	h, err := gw.EnableHistory[components.Predicted](w, gw.HistoryOptions{Capacity: 64})
	if err != nil {
		return err
	}
	if err := register(h); err != nil {
		return err
	}

	in := &inputs{}
	sched := gw.NewSchedule()
	// Sampling is a side effect: a replay reads the recorded rows instead.
	sched.AddSideEffect(gw.StagePrePrediction, gw.SystemFunc(func(w *gw.World) { in.sample(w.Tick()) }))
	sched.Add(gw.StagePrediction, &moveSystem{in: in,
		filter: generic.NewFilter3[Position, Velocity, Walker]().With(generic.T[components.Predicted]())})
	footsteps := 0
	sched.AddSideEffect(gw.StagePrediction, gw.SystemFunc(func(*gw.World) { footsteps++ }))

	spawn := generic.NewMap4[Position, Velocity, Walker, components.Predicted](w.Arche())
	var walkers []ecs.Entity
	for i := 0; i < 4; i++ {
		walkers = append(walkers, spawn.NewWith(&Position{X: float32(i)}, &Velocity{}, &Walker{Index: uint32(i)}, &components.Predicted{}))
	}
	pos := generic.NewMap[Position](w.Arche())
	// What the client predicted for walker 0 at each tick, rewritten by
	// every replay like the history: the pretend server corrects it.
	var predicted [128]Position
	trail := generic.NewFilter2[Position, Walker]()
	sched.Add(gw.StagePostPrediction, gw.SystemFunc(func(w *gw.World) {
		q := trail.Query(w.Arche())
		for q.Next() {
			if p, wk := q.Get(); wk.Index == 0 {
				predicted[w.Tick()%128] = *p
			}
		}
	}))

	rollbacks, replayed := 0, 0
	for i := 1; i <= *ticks; i++ {
		sched.Tick(w)
		if i%*every != 0 || i <= *back {
			continue
		}
		at := w.Tick().Add(-*back)
		before := *pos.Get(walkers[0])
		// The "server" had walker 0 a little to the right at tick `at`.
		if err := sched.Rollback(w, at, func(*gw.World) {
			pos.Get(walkers[0]).X = predicted[at%128].X + 0.25
		}); err != nil {
			return err
		}
		rollbacks++
		replayed += int(w.Tick().Sub(at))
		after := *pos.Get(walkers[0])
		fmt.Fprintf(out, "tick %3d: corrected tick %3d by +0.25, replayed %d ticks: x %.3f -> %.3f\n",
			w.Tick(), at, *back, before.X, after.X)
	}
	fmt.Fprintf(out, "ticks %d, rollbacks %d, replayed ticks %d, footsteps %d (one per tick)\n",
		*ticks, rollbacks, replayed, footsteps)

	// The determinism check on a fresh copy of the same game.
	w2 := gw.NewWorld(gw.WorldOptions{})
	h2, err := gw.EnableHistory[components.Predicted](w2, gw.HistoryOptions{Capacity: 64})
	if err != nil {
		return err
	}
	if err := register(h2); err != nil {
		return err
	}
	spawn2 := generic.NewMap4[Position, Velocity, Walker, components.Predicted](w2.Arche())
	for i := 0; i < 4; i++ {
		spawn2.NewWith(&Position{X: float32(i)}, &Velocity{}, &Walker{Index: uint32(i)}, &components.Predicted{})
	}
	st2, err := gw.NewSyncTest(sched, w2, gw.SyncTestOptions{Rollback: 8})
	if err != nil {
		return err
	}
	for i := 0; i < *ticks; i++ {
		if err := st2.Tick(); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "sync test: %d ticks with 8-tick rollbacks and replays, no desync\n", *ticks)
	return nil
}

// register declares what rolls back.
func register(h *gw.History) error {
	if err := gw.Register[Position](h); err != nil {
		return err
	}
	return gw.Register[Velocity](h)
}
