package ecs

import (
	"sort"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/internal/access"
)

// tickView reads one recorded tick of a [History] without copying (see
// access.TickView). Each ring slot has its own, made with the history, so
// handing one out as an interface allocates nothing.
type tickView struct {
	h   *History
	rec *record
	ep  *epoch // set by view
}

// view returns the view of tick, or a [*tickRangeError] if the tick is not
// held. It is valid until that ring slot is recorded again.
func (h *History) view(tick Tick) (access.TickView, error) {
	if !h.has(tick) {
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
