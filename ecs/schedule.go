package ecs

import (
	"fmt"
)

// Stage is one of the fixed phases of a tick or a frame, run in the order
// of their values. A tick runs, in order: receiving from the network and
// sampling or buffering inputs (the endpoints' own stages), then
// [StagePrePrediction], [StagePrediction], [StagePostPrediction],
// [StageSimulation], [StageHistory], and sending to the network (the
// endpoints' own stage). A frame runs the interpolation of remote ghosts
// (the client's own stage), then [StagePresentation].
type Stage uint8

const (
	// StageReceive reads the network: inputs on a server; snapshots,
	// spawns and reconciliation (rollback and replay) on a client. The
	// endpoints install their systems here; a game rarely adds any.
	StageReceive Stage = iota
	// StageInput samples (client) or buffers (server) the input commands
	// of the tick. Not replayed. The endpoints' stage, like StageReceive.
	StageInput
	// StagePrePrediction prepares a predicted tick, such as writing the
	// tick's input commands onto the entities. Replayed.
	StagePrePrediction
	// StagePrediction is the deterministic simulation shared by client and
	// server: the game's prediction systems. Replayed.
	StagePrediction
	// StagePostPrediction closes a predicted tick, such as quantizing the
	// predicted state the way the wire will. Replayed. After it, the
	// history (if enabled) records the tick.
	StagePostPrediction
	// StageSimulation holds server-only simulation (damage, scoring,
	// respawn): never predicted, never replayed.
	StageSimulation
	// StageHistory records lag-compensation history on the server.
	StageHistory
	// StageSend writes the network: snapshots on a server, inputs on a
	// client. The endpoints' stage, like StageReceive.
	StageSend
	// StageInterpolation runs once per frame: remote ghosts are blended
	// between received states. The client endpoint's stage; a game's
	// systems that read interpolated ghosts belong in StagePresentation.
	StageInterpolation
	// StagePresentation runs once per frame: smoothing of corrections and
	// rendering.
	StagePresentation

	numStages
)

var stageNames = [numStages]string{"receive", "input", "pre-prediction", "prediction", "post-prediction",
	"simulation", "history", "send", "interpolation", "presentation"}

// String returns the stage's name ("prediction"), or Stage(n) for a
// value that names no stage.
func (s Stage) String() string { return s.name() }

// name returns the stage's name, for diagnostics.
func (s Stage) name() string {
	if s < numStages {
		return stageNames[s]
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// ScheduleStats counts what a [Schedule] ran since it was made.
type ScheduleStats struct {
	Ticks         uint64 // calls of Tick
	Frames        uint64 // calls of Frame
	Rollbacks     uint64 // rollbacks that restored a tick and replayed
	ReplayedTicks uint64 // ticks re-run by those rollbacks
}

// Schedule runs the stages of a tick and of a frame in their fixed order
// (see [Stage]). The three prediction stages ([StagePrePrediction],
// [StagePrediction], [StagePostPrediction]) are the ones a rollback
// replays.
type Schedule struct {
	groups [numStages]*group
	stats  ScheduleStats
	// recorded, if set, runs right after the history records a tick (a
	// SyncTest checks there, before the later stages build on the state).
	recorded func()
}

// NewSchedule returns a schedule with no systems in any stage.
func NewSchedule() *Schedule {
	s := &Schedule{}
	for i := range s.groups {
		s.groups[i] = newGroup(Stage(i).name())
	}
	return s
}

// Stats returns the schedule's counters: ticks, frames, rollbacks and
// replayed ticks.
func (s *Schedule) Stats() ScheduleStats { return s.stats }

// group returns the group of a stage. It panics on an unknown stage.
func (s *Schedule) group(st Stage) *group {
	if st >= numStages {
		panic(fmt.Sprintf("ecs: unknown stage %d (0..%d)", st, numStages-1))
	}
	return s.groups[st]
}

// Add appends a system to a stage; it runs every time the stage runs,
// replay included. After each system the schedule applies the world's
// queued [Commands]. It panics on a nil system or an unknown stage.
func (s *Schedule) Add(st Stage, sys System) *Schedule {
	s.group(st).add(sys, false)
	return s
}

// AddSideEffect appends a side-effect system to a stage (sound, particles,
// one-shot events, spawning, sending): it runs only the first time a tick
// is simulated and is skipped during replay. It panics on a nil system or
// an unknown stage.
func (s *Schedule) AddSideEffect(st Stage, sys System) *Schedule {
	s.group(st).add(sys, true)
	return s
}

// Tick advances the world by one tick: the tick number increments, then
// the tick stages run in order, and the history (if enabled) records the
// tick right after the prediction stages. It panics while replaying.
//
// A structural change made while a query holds the arche world locked
// panics in arche with only "attempt to modify a locked world"; Tick
// panics instead with an error naming the system, its stage and the cure,
// [World.Commands]. A system that returns with a query still open (left
// with break, never closed) would leave the world locked for everything
// after it: Tick panics then too, naming the system. Other panics pass
// through unchanged. Frame and Rollback do the same.
func (s *Schedule) Tick(w *World) {
	if w.replaying {
		panic("ecs: Tick called while replaying")
	}
	w.tick++
	s.stats.Ticks++
	s.run(StageReceive, w)
	s.run(StageInput, w)
	s.predict(w)
	if w.history != nil {
		w.history.Record(w.tick)
		if s.recorded != nil {
			s.recorded()
		}
	}
	s.run(StageSimulation, w)
	s.run(StageHistory, w)
	s.run(StageSend, w)
}

// run updates the group of a stage; a locked-world panic of one of its
// systems gets the stage's name (see [Schedule.Tick]).
func (s *Schedule) run(st Stage, w *World) {
	defer func() {
		if r := recover(); r != nil {
			if p, ok := r.(*lockedWorldPanic); ok && p.stage == "" {
				p.stage = st.name()
				p.groups = p.groups[:len(p.groups)-1] // the stage's own group
			}
			panic(r)
		}
	}()
	s.groups[st].Update(w)
}

// Frame runs the per-frame stages (interpolation, presentation).
func (s *Schedule) Frame(w *World) {
	s.stats.Frames++
	s.run(StageInterpolation, w)
	s.run(StagePresentation, w)
}

// Rollback restores tick `to` from the world's history, calls fix (if not
// nil) so the caller can overwrite the restored state with the server's,
// records `to` again, then replays to+1 … the newest recorded tick through
// the prediction stages only: the world's tick is set to each replayed tick,
// IsReplaying is true and side-effect systems are skipped; every replayed
// tick is recorded again. The world's tick is put back afterwards.
//
// The fix writes the state of tick `to`. A predicted spawn created after
// `to` is unborn during the fix. If the fix changes its registered values
// or components, the spawn is born at `to` with what the fix wrote, like an
// entity the fix spawns: recorded at `to`, replayed from to+1; it ends
// where the replay from that birth puts it. A spawn the fix leaves alone stays dormant until the replay reaches
// its own birth tick and ends where the replay from there puts it.
//
// Structural changes keep their usual timing: commands queued before the
// call (by the system calling Rollback) stay queued until that system
// returns; those the fix queues are applied before tick `to` is recorded
// again; those of a replayed system after it returns, as in a normal tick.
// The restore puts back which registered components each entity had at
// `to` (see [History]), so replayed systems repeat the first run's
// structural changes from the same start.
//
// It returns an error without a history ([EnableHistory]), when `to` is
// not held (naming the range held), and when called during a replay.
func (s *Schedule) Rollback(w *World, to Tick, fix func(w *World)) error {
	return s.rollback(w, to, fix, nil)
}

func (s *Schedule) rollback(w *World, to Tick, fix func(w *World), verify func(t Tick) error) error {
	h := w.history
	if h == nil {
		return errNoHistory
	}
	if w.replaying {
		return fmt.Errorf("ecs: rollback to tick %d during a replay", to)
	}
	newest, _ := h.Newest()
	if err := h.restore(to); err != nil {
		return err
	}
	s.stats.Rollbacks++
	saved := w.tick
	w.commands.hold()
	defer w.commands.release()
	if fix != nil {
		// The fix writes the state of tick `to`: the world says so.
		w.tick = to
		unborn := len(h.dormant) > 0
		if unborn {
			h.saveUnborn()
		}
		fix(w)
		w.commands.apply()
		if unborn {
			h.bornByFix()
		}
		h.Record(to)
	}
	w.replaying = true
	var err error
	for t := to + 1; !t.After(newest); t++ {
		w.tick = t
		s.predict(w)
		s.stats.ReplayedTicks++
		if verify != nil && err == nil {
			err = verify(t)
		}
		h.Record(t)
	}
	w.replaying = false
	w.tick = saved
	h.wake(0, true)
	return err
}

// predict runs the stages a replay repeats.
func (s *Schedule) predict(w *World) {
	if w.probe != nil {
		w.probe.before(w)
	}
	s.run(StagePrePrediction, w)
	s.run(StagePrediction, w)
	s.run(StagePostPrediction, w)
	if w.probe != nil {
		w.probe.after(w)
	}
}
