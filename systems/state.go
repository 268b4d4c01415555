package systems

import "encoding/binary"

// AppendState appends the replicated state of every ghost of the server
// to dst and returns it: per ghost in ID order its ID, type, owner and
// replicated components' described fields (little endian). Two servers
// whose ghosts agree bit for bit on every replicated value append the
// same bytes, so it is what a replay compares and keeps (keyframes,
// package replay).
// It allocates only to grow dst; its cost is a read of every ghost's
// replicated components.
func (s *Server) AppendState(dst []byte) []byte {
	return s.state.AppendState(dst, s.ghosts)
}

// StateHash returns a 64-bit hash of [Server.AppendState]'s bytes: the
// replicated state of the world at its current tick (FNV-1a's
// multiply-and-xor over little-endian 64-bit words, then the last bytes
// one by one; the same on every machine). Steady state it allocates
// nothing.
func (s *Server) StateHash() uint64 {
	s.stateBuf = s.AppendState(s.stateBuf[:0])
	return stateHash(s.stateBuf)
}

// stateHash hashes b a word at a time.
func stateHash(b []byte) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for ; len(b) >= 8; b = b[8:] {
		h ^= binary.LittleEndian.Uint64(b)
		h *= prime
	}
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	return h
}
