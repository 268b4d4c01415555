package codec

import (
	"encoding/binary"
	"unsafe"
)

// AppendValue appends the value of component id at p in a canonical form
// to dst: the bytes of each field its description codes, in the order
// described, each little endian whatever the machine. Padding and the
// fields the description leaves out are not in it, so two values the wire
// cannot tell apart by their described fields' bits give the same bytes.
// It allocates only to grow dst.
func (s *Schema) AppendValue(dst []byte, id ComponentID, p unsafe.Pointer) []byte {
	for _, f := range s.comps[id].fields {
		q := unsafe.Add(p, f.off)
		switch f.size {
		case 1:
			dst = append(dst, *(*uint8)(q))
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, *(*uint16)(q))
		case 4:
			dst = binary.LittleEndian.AppendUint32(dst, *(*uint32)(q))
		case 8:
			dst = binary.LittleEndian.AppendUint64(dst, *(*uint64)(q))
		default:
			dst = append(dst, unsafe.Slice((*byte)(q), f.size)...)
		}
	}
	return dst
}
