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
