package ecs

import (
	"sort"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
)

// TickView reads one recorded tick of a [History] without copying:
// entities by row, values by row and component. It is valid until that
// tick's ring slot is recorded again. Lag compensation rewinds through it;
// [ValueAt] serves a single read.
type TickView interface {
	// Len returns the number of entities recorded at the tick.
	Len() int
	// Entity returns the entity of row i (0 <= i < Len).
	Entity(i int) ecs.Entity
	// Row returns the row of entity e, and false if e was not recorded.
	// The first call on a tick's layout builds an index (O(entities));
	// later calls are one map lookup.
	Row(e ecs.Entity) (int, bool)
	// Component returns the history's index of component id, or -1 if it
	// is not registered; pass it to Value.
	Component(id ecs.ID) int
	// Value returns a pointer to the recorded value of component c (from
	// Component) of row i, or nil if that entity did not have it (or c is
	// -1). It points into the record: read it, never keep it past the
	// next Record of the tick's slot.
	Value(i, c int) unsafe.Pointer
}

// tickView implements [TickView]. Each ring slot has its own, made with
// the history, so handing one out as an interface allocates nothing.
type tickView struct {
	h   *History
	rec *record
	ep  *epoch // set by view
}

// View returns the view of tick, or a [*TickRangeError] if the tick is not
// held. It is valid until that ring slot is recorded again. It allocates
// nothing.
func (h *History) View(tick Tick) (TickView, error) {
	if !h.Has(tick) {
		return nil, h.tickError(tick)
	}
	v := &h.views[uint32(tick)&h.mask]
	v.ep = h.epochOf(v.rec)
	return v, nil
}

func (v *tickView) Len() int { return len(v.ep.entities) }

func (v *tickView) Entity(i int) ecs.Entity { return v.ep.entities[i] }

func (v *tickView) Row(e ecs.Entity) (int, bool) {
	v.ep.buildIndex()
	i, ok := v.ep.index[e]
	return int(i), ok
}

func (v *tickView) Component(id ecs.ID) int { return v.h.compIndex(id) }

func (v *tickView) Value(i, c int) unsafe.Pointer {
	if c < 0 {
		return nil
	}
	ep := v.ep
	ri := sort.Search(len(ep.runs), func(k int) bool { return ep.runs[k].start+ep.runs[k].count > i })
	first := ep.rows[ri*len(v.h.comps)+c]
	if first < 0 {
		return nil
	}
	return v.h.valueAt(v.rec, c, int(first)+i-ep.runs[ri].start)
}
