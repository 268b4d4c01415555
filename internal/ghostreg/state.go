package ghostreg

import (
	"encoding/binary"

	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// StateWriter writes the replicated state of a server's ghosts in one
// canonical form: what a replay compares and keeps (keyframes). Its
// buffers are reused, so steady state it allocates nothing.
type StateWriter struct {
	w  bitstream.Writer
	st codec.Stream
}

// AppendState appends the state of every live ghost of s to dst, in ID
// order: its ID, type and owner (uvarints), then the length (uvarint) and
// bytes of its replicated components as the wire codes them in full. Two
// worlds whose ghosts agree on every replicated value give the same bytes,
// whatever their entities or storage order.
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
		sw.w.Reset(sw.w.Bytes())
		for i, id := range s.b.types[g.typ] {
			schema.Encode(&sw.st, gt.Components[i], &sw.w, a.Get(g.e, id))
		}
		b := sw.w.Bytes()
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		dst = append(dst, b...)
	}
	return dst
}
