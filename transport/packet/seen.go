package packet

// seenWindow is the reliable unordered channel's receiving end: it remembers
// which message ids arrived, so a resent or duplicated message is delivered
// once. It holds no message: an unordered message is returned from the
// datagram it arrived in.
//
// A sender keeps its messages within reliableWindow ids of its oldest
// unacknowledged one, and acknowledges a packet only after it arrived, so
// when id n has arrived every id up to n−reliableWindow arrived before
// (it was acknowledged, or n could not have been sent). Ids that far
// behind the newest are duplicates without a look; the others are
// remembered in a slot per id modulo reliableWindow.
type seenWindow struct {
	slots  [reliableWindow]uint32 // id | seenMark for the id last seen in each slot, 0 when none
	newest uint16                 // the newest id seen, when any
	any    bool
}

const seenMark = 1 << 16

// first reports whether id arrives for the first time, and remembers it.
func (w *seenWindow) first(id uint16) bool {
	d := int16(id - w.newest)
	if w.any && d <= -reliableWindow {
		return false
	}
	s := &w.slots[id%reliableWindow]
	if *s == uint32(id)|seenMark {
		return false
	}
	*s = uint32(id) | seenMark
	if !w.any || d > 0 {
		w.newest, w.any = id, true
	}
	return true
}
