package systems

import "github.com/ghostwire/ghostwire/components"

// Conns returns the open connection IDs of s in order.
func Conns(s *Server) []components.ConnID {
	ids := make([]components.ConnID, len(s.conns))
	for i, c := range s.conns {
		ids[i] = c.id
	}
	return ids
}
