package ecs

import (
	"sort"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
)

// TickView reads one recorded tick of a [History] without copying:
// entities by row, values by row and component. It is valid until that
// ring slot is recorded again. Lag compensation rewinds through it.
type TickView struct {
	h   *History
	rec *record
	ep  *epoch
}

// View returns a view of tick, or a [*TickError] if the tick is not held.
func (h *History) View(tick Tick) (TickView, error) {
	if !h.has(tick) {
		return TickView{}, h.tickError(tick)
	}
	rec := h.record(tick)
	return TickView{h: h, rec: rec, ep: h.epochOf(rec)}, nil
}

// Len returns the number of entities recorded at the tick.
func (v TickView) Len() int { return len(v.ep.entities) }

// Entity returns the entity of row i.
func (v TickView) Entity(i int) ecs.Entity { return v.ep.entities[i] }

// Row returns the row of entity e, and false if e was not recorded. The
// first call on a tick builds an index (O(entities)); later calls are one
// map lookup.
func (v TickView) Row(e ecs.Entity) (int, bool) {
	v.ep.buildIndex()
	i, ok := v.ep.index[e]
	return int(i), ok
}

// Component returns the history's index of component id, or -1 if it is
// not recorded; pass it to Value.
func (v TickView) Component(id ecs.ID) int { return v.h.compIndex(id) }

// Value returns a pointer to the recorded value of component c (from
// Component) of row i, or nil if that entity did not have it.
func (v TickView) Value(i, c int) unsafe.Pointer {
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
