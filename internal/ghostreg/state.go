package ghostreg

import "encoding/binary"

// StateWriter writes the replicated state of a server's ghosts in one
// canonical form: what a replay compares and keeps (keyframes). It holds
// no buffer of its own; AppendState allocates only to grow dst.
type StateWriter struct{}

// AppendState appends the state of every live ghost of s to dst, in ID
// order: its ID, type and owner (uvarints), then each replicated
// component's value in the schema's canonical form (codec.AppendValue:
// the described fields' bytes, little endian). Two worlds whose ghosts
// agree bit for bit on every replicated field give the same bytes,
// whatever their entities, storage order or machine.
func (sw *StateWriter) AppendState(dst []byte, s *ServerRegister) []byte {
	a := s.b.world.Arche()
	schema := s.b.schema
	for _, g := range s.ghosts {
		if !s.live(g) {
			continue
		}
		dst = binary.AppendUvarint(dst, uint64(g.id))
		dst = binary.AppendUvarint(dst, uint64(g.typ))
		dst = binary.AppendUvarint(dst, uint64(g.owner))
		gt, _ := schema.GhostType(g.typ)
		for i, id := range s.b.types[g.typ] {
			dst = schema.AppendValue(dst, gt.Components[i], a.Get(g.e, id))
		}
	}
	return dst
}
