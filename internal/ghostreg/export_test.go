package ghostreg

import "github.com/ghostwire/ghostwire/components"

// FillSlots makes s's views' state arrays read as full: every index below
// maxGhostSlots taken, so the next spawn that finds no free index is
// refused. Only the count changes; spawns reusing a dead ghost's index
// still work.
func FillSlots(s *ServerRegister) { s.slots = maxGhostSlots }

// LogEveryRecord makes v log every record, as a view whose
// acknowledgements come back late does, rather than note plain ones as
// bits of its ghosts' state.
func LogEveryRecord(v *View) { v.window = 2 * logTicks }

// Logged returns how many records v has logged.
func Logged(v *View) uint64 { return v.logged }

// PendingIDs returns the IDs of v's pending set, in its order.
func PendingIDs(v *View) []components.GhostID {
	ids := make([]components.GhostID, len(v.pending))
	for i, g := range v.pending {
		ids[i] = g.id
	}
	return ids
}

// SharedStates returns how many of ghost id's buffered states share the
// values of the state before them instead of holding a copy.
func SharedStates(ip *Interpolator, id components.GhostID) int {
	i, ok := ip.find(id)
	if !ok {
		return 0
	}
	ig := ip.ghosts[i]
	shared := 0
	for k, i := 0, ig.head; k < ig.n-1; k, i = k+1, (i-1+statesPerGhost)%statesPerGhost {
		if ig.st[i].slot == ig.st[(i-1+statesPerGhost)%statesPerGhost].slot {
			shared++
		}
	}
	return shared
}
