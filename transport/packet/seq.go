package packet

// Seq is a packet sequence number. It wraps from 65535 to 0, so compare two
// of them with Before, never with <.
type Seq uint16

// Before reports whether s was sent before t, assuming the two are less than
// 32768 packets apart: s is before t when t is up to 32767 steps ahead of s
// on the wrapping circle. It costs a subtraction.
func (s Seq) Before(t Seq) bool { return int16(s-t) < 0 }

// idBefore is Before for reliable message ids, which wrap the same way.
func idBefore(a, b uint16) bool { return int16(a-b) < 0 }
