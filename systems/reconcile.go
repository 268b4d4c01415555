package systems

import gw "github.com/ghostwire/ghostwire/ecs"

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
	policy    RollbackPolicy
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
	case in.mismatch || in.spawning || in.policy == RollbackAlways:
		return actRollback
	}
	return actNone
}
