package ghostreg

// FillSlots makes s's views' state arrays read as full: every index below
// maxGhostSlots taken, so the next spawn that finds no free index is
// refused. Only the count changes; spawns reusing a dead ghost's index
// still work.
func FillSlots(s *ServerRegister) { s.slots = maxGhostSlots }
