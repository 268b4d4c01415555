package play

import (
	"time"

	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// Timeline is the debug panel's data: where the client is, what it
// corrected and why, and what its link carries.
type Timeline struct {
	// Tick is the client's current (predicted) tick, Confirmed the newest
	// input tick the server confirmed applying and Snapshot the newest
	// snapshot's tick; Ahead is how many ticks the client runs ahead of the
	// server's estimated tick.
	Tick, Confirmed, Snapshot uint32
	Ahead                     float64
	// RollbacksPerS and ReplayedPerS are measured over the last second.
	RollbacksPerS, ReplayedPerS float64
	Rollbacks, Replayed         uint64
	// Mispredictions is the client's count (ClientStats.Mispredictions):
	// every snapshot the prediction got wrong, respawns included.
	Mispredictions uint64
	// Corrections counts the corrections of the own player's
	// mispredictions; Respawns the corrections that were respawns, not
	// counted there nor plotted: a respawn is a teleport the server
	// decides alone, not a misprediction.
	Corrections, Respawns uint64
	// LastMispredicted names the component and field of the newest
	// corrected misprediction ("game.Position.X"), with the predicted and
	// the server's value; "" before the first.
	LastMispredicted string
	// Errors is the largest correction of the own player per sample
	// interval (100 ms), in arena units, oldest first: the plot.
	Errors []float64
	// MaxError is the largest correction so far.
	MaxError float64
	RTTms    float64
	JitterMS float64
	// UpBps and DownBps are bytes per second sent and received over the
	// last second.
	UpBps, DownBps float64
	// InterpDelayMS is the interpolation delay in force; SnapshotLoss the
	// estimated share of snapshots lost.
	InterpDelayMS float64
	SnapshotLoss  float64
	// ShotsFired counts the trigger pulls this client sent; Judged the
	// verdicts the server confirmed, Hits the hits among them.
	ShotsFired, Judged, Hits uint64
	// RocketsPredicted counts the rockets this client predicted,
	// RocketsMatched those the server's ghost took over and
	// RocketsRemoved those the server refused (an empty magazine), gone
	// about a round trip after they were fired (ClientStats.Spawns*).
	RocketsPredicted, RocketsMatched, RocketsRemoved uint64
	// BallSwitches counts the switches of the ball to predicted
	// (ClientStats.SwitchedToPredicted): the player came near it.
	BallSwitches uint64
}

// Timeline sampling: rates over one second, an error sample per
// errorStep, errorSamples of them kept.
const (
	rateWindow   = time.Second
	errorStep    = 100 * time.Millisecond
	errorSamples = 100
)

// timeline accumulates a Timeline; the Player's lock guards it.
type timeline struct {
	t        Timeline
	shots    uint64
	rateAt   time.Duration
	rateBase systems.ClientStats
	errAt    time.Duration
	errNow   float64
	started  bool
	// pending is the diagnosis of the misprediction the next correction
	// corrects, when hasPending.
	pending    netsync.FieldDiff
	hasPending bool
}

// mispredicted records a misprediction's diagnosis, until its correction
// says whether it was a respawn.
func (tl *timeline) mispredicted(d netsync.FieldDiff) {
	tl.pending, tl.hasPending = d, true
}

// corrected records a correction of the own player that moved it by d,
// or a respawn.
func (tl *timeline) corrected(d float64, respawn bool) {
	had := tl.hasPending
	tl.hasPending = false
	if respawn {
		tl.t.Respawns++
		return
	}
	if had {
		a, b := tl.pending.Values()
		tl.t.LastMispredicted = tl.pending.Component + "." + tl.pending.Field + " predicted " + a + ", server " + b
		tl.t.Corrections++
	}
	tl.errNow = max(tl.errNow, d)
	tl.t.MaxError = max(tl.t.MaxError, d)
}

// confirmed counts a verdict of the own player's shot.
func (tl *timeline) confirmed(hit bool) {
	tl.t.Judged++
	if hit {
		tl.t.Hits++
	}
}

// sample folds the client's counters in at time now.
func (tl *timeline) sample(now time.Duration, st systems.ClientStats) {
	if !tl.started {
		tl.started, tl.rateAt, tl.errAt, tl.rateBase = true, now, now, st
	}
	t := &tl.t
	t.Confirmed, t.Snapshot = uint32(st.Confirmed), uint32(st.NewestSnapshot)
	t.Ahead = st.Ahead
	t.Rollbacks, t.Replayed, t.Mispredictions = st.Rollbacks, st.ReplayedTicks, st.Mispredictions
	t.RTTms = float64(st.RTT) / float64(time.Millisecond)
	t.JitterMS = float64(st.Jitter) / float64(time.Millisecond)
	t.InterpDelayMS = float64(st.InterpolationDelay) / float64(time.Millisecond)
	t.SnapshotLoss = st.SnapshotLoss
	t.ShotsFired = tl.shots
	t.RocketsPredicted, t.RocketsMatched, t.RocketsRemoved = st.SpawnsPredicted, st.SpawnsMatched, st.SpawnsUnmatched
	t.BallSwitches = st.SwitchedToPredicted
	if d := now - tl.rateAt; d >= rateWindow {
		s := d.Seconds()
		b := tl.rateBase
		t.RollbacksPerS = float64(st.Rollbacks-b.Rollbacks) / s
		t.ReplayedPerS = float64(st.ReplayedTicks-b.ReplayedTicks) / s
		t.UpBps = float64(st.BytesSent-b.BytesSent) / s
		t.DownBps = float64(st.BytesReceived-b.BytesReceived) / s
		tl.rateAt, tl.rateBase = now, st
	}
	// After a long pause (a hidden page) the plot restarts from empty
	// samples instead of looping over every missed step.
	if now-tl.errAt > errorSamples*errorStep {
		tl.errAt = now - errorSamples*errorStep
	}
	for now-tl.errAt >= errorStep {
		tl.errAt += errorStep
		if len(t.Errors) == errorSamples {
			t.Errors = append(t.Errors[:0], t.Errors[1:]...)
		}
		t.Errors = append(t.Errors, tl.errNow)
		tl.errNow = 0
	}
}
