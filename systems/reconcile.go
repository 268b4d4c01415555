package systems

import (
	"context"
	"log/slog"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/netsync"
)

// reconcileAction is what a client does with a snapshot of its own ghosts.
type reconcileAction uint8

const (
	// actNone: the prediction at the snapshot's tick was right.
	actNone reconcileAction = iota
	// actRollback: restore the snapshot's tick, write the server's state,
	// replay to the present.
	actRollback
	// actAdopt: the snapshot is newer than anything predicted (or nothing
	// was): write the server's state as is, a hard correction.
	actAdopt
	// actTooOld: the snapshot is older than the history; nothing can be
	// corrected (counted in SnapshotsTooOld).
	actTooOld
	// actSpawnOnly: too old, but it brings new ghosts: spawn them as they
	// are and leave the others alone (a hard correction).
	actSpawnOnly
)

func (a reconcileAction) String() string {
	return [...]string{"none", "rollback", "adopt", "too old", "spawn only"}[a]
}

// reconcileInput is everything the reconciliation decision depends on.
type reconcileInput struct {
	held      bool    // the history holds the snapshot's tick
	hasNewest bool    // the history holds any tick
	newest    gw.Tick // the newest tick the history holds
	tick      gw.Tick // the snapshot's tick
	mismatch  bool    // a predicted ghost differs from the server's at tick
	spawning  bool    // the snapshot brings an own ghost the client lacks
	always    bool    // ClientOptions.RollbackAlways
}

// decide is the reconciliation decision, a pure function so that every
// branch is tested on its own. The tick comparisons are wrap-safe.
func decide(in reconcileInput) reconcileAction {
	switch {
	case !in.held && (!in.hasNewest || in.tick.After(in.newest)):
		return actAdopt // the client is behind the server
	case !in.held && in.spawning:
		return actSpawnOnly
	case !in.held:
		return actTooOld
	case in.mismatch || in.spawning || in.always:
		return actRollback
	}
	return actNone
}

// reconcile applies the newest snapshot: clock feedback, spawns and
// despawns, interpolated state, and for predicted ghosts a comparison with
// the prediction at the snapshot's tick and, when needed, a rollback.
func (c *Client) reconcile(w *gw.World) {
	if !c.fresh {
		return
	}
	c.fresh = false
	s := c.latest
	tick := s.Tick
	c.stats.Lead = float64(s.Lead)
	c.stats.Ahead = float64(w.Tick().Sub(tick)) - float64(c.rtt.Smoothed())/2/float64(c.clock.Interval())
	if s.HasConfirmed {
		c.inputs.Confirm(s.Confirmed)
		if c.opts.FixedScale == 0 {
			// The lead is the inputs': they run the input delay ahead.
			scale, jump := c.sync.Feedback(float64(s.Lead), s.Confirmed, w.Tick().Add(c.delay))
			c.clock.SetScale(scale)
			if jump > 0 {
				c.catchUp += min(jump, 60)
			} else if jump < 0 {
				c.hold += min(-jump, 60)
			}
		}
	}

	mismatch, spawning := false, false
	held := c.history.Has(tick)
	layout := w.LayoutVersion()
	for gi := range s.Ghosts {
		g := &s.Ghosts[gi]
		if !c.ghosts.Predicts(&g.Ghost) {
			continue
		}
		e, ok := c.ghosts.Entity(g.ID)
		if !ok {
			// A ghost this client predicted the spawn of takes the
			// predicted entity over; any other is spawned by the fix.
			if e, ok = c.adoptSpawn(w, g.Ghost); !ok {
				spawning = true
				continue
			}
		}
		if c.switchedIn[g.ID] {
			// Switched to predicted: its state at tick is the server's,
			// written by the rollback, not a prediction to judge (a
			// snapshot older than the history waits for the next).
			if held {
				spawning = true
				delete(c.switchedIn, g.ID)
			}
			continue
		}
		// A ghost the history does not hold at this tick was spawned later
		// on this client: the snapshot says nothing new about it.
		diff, equal, recorded := c.ghosts.Compare(c.history, tick, e, s, gi)
		if recorded && !equal {
			mismatch = true
			c.mispredicted(tick, g.ID, publicDiff(diff))
		} else if at, gone := c.despawnedAt(tick, e); recorded && gone {
			mismatch = true // despawned by the prediction, still there on the server
			c.mispredicted(tick, g.ID, despawnDiff(at))
		}
	}
	c.expireSpawns(w, tick)
	c.ghosts.Despawn(s)
	if w.LayoutVersion() != layout {
		c.check.restart() // a ghost removed outside the prediction
	}
	if mismatch {
		c.stats.Mispredictions++
	}
	newest, hasNewest := c.history.Newest()
	act := decide(reconcileInput{held: held, hasNewest: hasNewest, newest: newest, tick: tick,
		mismatch: mismatch, spawning: spawning, always: c.opts.RollbackAlways})
	switch act {
	case actNone:
		return
	case actTooOld:
		c.stats.SnapshotsTooOld++
		return
	}
	// fix writes the snapshot's state into the predicted ghosts (spawning
	// new ones); spawnOnly leaves existing ghosts alone, for a snapshot too
	// old to correct them.
	spawnOnly := act == actSpawnOnly
	fix := func(w *gw.World) {
		for gi := range s.Ghosts {
			g := &s.Ghosts[gi]
			if !c.ghosts.Predicts(&g.Ghost) {
				continue
			}
			if e, ok := c.ghosts.Entity(g.ID); !ok {
				c.ghosts.Spawn(s, gi)
			} else if !spawnOnly {
				c.ghosts.Write(e, s, gi)
				if a := w.Arche(); a.Has(e, c.spawnQ.despawnID) {
					a.Remove(e, c.spawnQ.despawnID) // the server still has it
				}
			}
		}
	}
	for _, h := range c.hooks {
		if h.before != nil {
			h.before(w)
		}
	}
	switch act {
	case actRollback:
		c.correcting = true
		err := c.schedule.Rollback(w, tick, fix)
		c.correcting = false
		if err != nil {
			c.stats.RollbackErrors++
			c.log.Error("ghostwire: rollback failed", "tick", tick, "err", err)
		} else {
			c.stats.Rollbacks++
			c.check.rolledBack(w.Tick(), tick)
		}
	case actAdopt:
		fix(w)
		c.stats.HardCorrections++
	case actSpawnOnly:
		c.stats.SnapshotsTooOld++
		fix(w)
		c.stats.HardCorrections++
	}
	for _, h := range c.hooks {
		if h.after != nil {
			h.after(w)
		}
	}
	if act != actRollback || w.LayoutVersion() != layout {
		c.check.restart() // state written without replay, or a spawn
	}
}

// publicDiff converts a comparison's result for the game.
func publicDiff(d codec.FieldDiff) netsync.FieldDiff {
	kind, a, b := d.Numbers()
	return netsync.FieldDiff{Component: d.Component, Field: d.Field, Kind: kind, Predicted: a, Server: b}
}

// mispredicted reports one predicted ghost whose state at tick differs
// from the server's: counted per component, logged at Debug (formatted
// only when Debug is on) and given to OnMisprediction.
func (c *Client) mispredicted(tick gw.Tick, id components.GhostID, d netsync.FieldDiff) {
	c.mispredictedBy[d.Component]++
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		predicted, server := d.Values()
		c.log.Debug("ghostwire: misprediction", "ghost", id, "tick", tick, "component", d.Component, "field", d.Field,
			"predicted", predicted, "server", server)
	}
	if c.opts.OnMisprediction != nil {
		c.opts.OnMisprediction(tick, id, d)
	}
}
