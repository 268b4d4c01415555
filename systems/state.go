package systems

// AppendState appends the replicated state of every ghost of the server
// to dst and returns it: per ghost in ID order its ID, type, owner and
// replicated components as the wire codes them in full. Two servers
// whose ghosts agree on every replicated value append the same bytes, so
// it is what a replay compares and keeps for seeking (package replay).
// It allocates only to grow dst; its cost is an encoding of every ghost.
func (s *Server) AppendState(dst []byte) []byte {
	return s.state.AppendState(dst, s.ghosts)
}

// StateHash returns a 64-bit FNV-1a hash of [Server.AppendState]'s bytes:
// the replicated state of the world at its current tick. Steady state it
// allocates nothing.
func (s *Server) StateHash() uint64 {
	s.stateBuf = s.AppendState(s.stateBuf[:0])
	return fnv1a(s.stateBuf)
}

// fnv1a returns the 64-bit FNV-1a hash of b.
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
