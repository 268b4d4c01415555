package ecs

import (
	"reflect"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
)

// unregisteredProbe is the part of a [SyncTest] that watches the components
// of predicted entities the history does not record. Rollback leaves them
// as the newest tick left them, so a prediction that writes one replays from
// the wrong value and the first registered component it feeds would be
// blamed. The probe keeps their values before and after the prediction
// stages of each first-run tick, and compares the replay with them.
type unregisteredProbe struct {
	h          *History
	slotExtras [][]ecs.ID // per history slot: its unregistered components
	types      map[ecs.ID]*extraType
	first      []firstRun // ring by tick: the first run's values
	mask       uint32
	replayPre  extraRecord // before the prediction stages of the replayed tick
	cur        extraRecord // after them
	// onStart, if set, runs ahead of the prediction stages of each
	// first-run tick (a server's SyncTest watches for outside changes).
	onStart func(w *World)
}

type extraType struct {
	typ    reflect.Type
	size   uintptr
	fields []byteRange // leaf fields, or one range of the whole value
}

type firstRun struct {
	tick      Tick
	valid     bool
	pre, post extraRecord
}

// extraRecord holds the unregistered values of the predicted entities at
// one moment: per entity its slot and where its values start in data, in
// the order of the slot's extras.
type extraRecord struct {
	entities []ecs.Entity
	slots    []int32
	offs     []int32
	data     []byte
	index    map[ecs.Entity]int32
	indexed  bool
}

func newUnregisteredProbe(h *History, rollback int) *unregisteredProbe {
	n := ringSize(rollback + 1)
	return &unregisteredProbe{h: h, types: map[ecs.ID]*extraType{}, first: make([]firstRun, n), mask: uint32(n - 1)}
}

// before runs ahead of the prediction stages of tick.
func (p *unregisteredProbe) before(w *World) {
	if w.replaying {
		p.capture(&p.replayPre)
		return
	}
	f := &p.first[uint32(w.tick)&p.mask]
	f.tick, f.valid = w.tick, false
	p.capture(&f.pre)
	if p.onStart != nil {
		p.onStart(w)
	}
}

// after runs behind the prediction stages of a first-run tick.
func (p *unregisteredProbe) after(w *World) {
	if w.replaying {
		return
	}
	f := &p.first[uint32(w.tick)&p.mask]
	p.capture(&f.post)
	f.valid = true
}

// check compares the values after the replay of tick t with the first
// run's. It returns the first difference in a component the prediction
// writes (it changed in the first run or in the replay), preferring one
// whose value already differed when the replayed tick began: that is state
// the rollback did not restore. fromStart says which kind d is.
func (p *unregisteredProbe) check(t Tick) (d *DesyncError, fromStart bool) {
	f := &p.first[uint32(t)&p.mask]
	if !f.valid || f.tick != t {
		return nil, false
	}
	p.capture(&p.cur)
	for i, e := range p.cur.entities {
		slot := p.cur.slots[i]
		j, ok := f.post.locate(e)
		if !ok || f.post.slots[j] != slot {
			continue // structural differences are the registered diff's
		}
		fi, firstPre := f.pre.locate(e)
		ri, replayPre := p.replayPre.locate(e)
		firstPre = firstPre && f.pre.slots[fi] == slot
		replayPre = replayPre && p.replayPre.slots[ri] == slot
		offCur, offFirst := int(p.cur.offs[i]), int(f.post.offs[j])
		offFirstPre, offReplayPre := 0, 0
		if firstPre {
			offFirstPre = int(f.pre.offs[fi])
		}
		if replayPre {
			offReplayPre = int(p.replayPre.offs[ri])
		}
		for _, id := range p.slotExtras[slot] {
			et := p.types[id]
			size := int(et.size)
			now, was := p.cur.data[offCur:offCur+size], f.post.data[offFirst:offFirst+size]
			offCur, offFirst = offCur+size, offFirst+size
			var wasPre, nowPre []byte
			if firstPre {
				wasPre = f.pre.data[offFirstPre : offFirstPre+size]
				offFirstPre += size
			}
			if replayPre {
				nowPre = p.replayPre.data[offReplayPre : offReplayPre+size]
				offReplayPre += size
			}
			field := et.differs(was, now)
			if field < 0 {
				continue
			}
			written := wasPre != nil && et.differs(wasPre, was) >= 0 || nowPre != nil && et.differs(nowPre, now) >= 0
			if !written {
				continue // changed outside the prediction stages
			}
			start := wasPre != nil && nowPre != nil && et.differs(wasPre, nowPre) >= 0
			if d != nil && (fromStart || !start) {
				continue
			}
			r := et.fields[field]
			d = &DesyncError{Tick: t, Entity: e, Component: et.typ, Field: r.field, kind: r.kind, Unregistered: true,
				First: append([]byte(nil), was[r.off:r.off+r.len]...), Replay: append([]byte(nil), now[r.off:r.off+r.len]...)}
			fromStart = start
		}
	}
	return d, fromStart
}

// put writes the first run's unregistered values from before the
// prediction stages of tick t back into the entities that still have them.
func (p *unregisteredProbe) put(t Tick) {
	f := &p.first[uint32(t)&p.mask]
	if !f.valid || f.tick != t {
		return
	}
	a := p.h.world.Arche()
	for i, e := range f.pre.entities {
		if !a.Alive(e) {
			continue
		}
		off := int(f.pre.offs[i])
		for _, id := range p.slotExtras[f.pre.slots[i]] {
			size := int(p.types[id].size)
			if a.Has(e, id) {
				copy(unsafe.Slice((*byte)(a.Get(e, id)), size), f.pre.data[off:off+size])
			}
			off += size
		}
	}
}

// differs returns the index of the first field whose bytes differ, or -1.
func (et *extraType) differs(a, b []byte) int {
	for k, r := range et.fields {
		if string(a[r.off:r.off+r.len]) != string(b[r.off:r.off+r.len]) {
			return k
		}
	}
	return -1
}

// capture copies the unregistered values of every predicted entity into r.
func (p *unregisteredProbe) capture(r *extraRecord) {
	h := p.h
	a := h.world.Arche()
	h.discover()
	for len(p.slotExtras) < len(h.slots) {
		p.slotExtras = append(p.slotExtras, p.extras(&h.slots[len(p.slotExtras)].mask))
	}
	r.entities, r.slots, r.offs, r.data, r.indexed = r.entities[:0], r.slots[:0], r.offs[:0], r.data[:0], false
	for si := range h.slots {
		extras := p.slotExtras[si]
		if len(extras) == 0 {
			continue
		}
		q := a.Query(&h.slots[si].filter)
		for q.Next() {
			r.entities = append(r.entities, q.Entity())
			r.slots = append(r.slots, int32(si))
			r.offs = append(r.offs, int32(len(r.data)))
			for _, id := range extras {
				r.data = append(r.data, unsafe.Slice((*byte)(q.Get(id)), p.types[id].size)...)
			}
		}
	}
}

// extras lists the components of an archetype that hold data and are
// neither the marker nor registered.
func (p *unregisteredProbe) extras(m *ecs.Mask) []ecs.ID {
	h := p.h
	a := h.world.Arche()
	var ids []ecs.ID
	for _, id := range ecs.ComponentIDs(a) {
		if !m.Get(id) || id == h.marker || h.compIndex(id) >= 0 {
			continue
		}
		info, ok := ecs.ComponentInfo(a, id)
		if !ok || info.Type.Size() == 0 {
			continue
		}
		if _, known := p.types[id]; !known {
			et := &extraType{typ: info.Type, size: info.Type.Size()}
			fields, _, err := plainLayout(info.Type)
			if err != nil || len(fields) == 0 {
				// Not plain data: compare the whole value, shown in hex.
				fields = []byteRange{{off: 0, len: et.size, kind: reflect.Invalid}}
			}
			et.fields = fields
			p.types[id] = et
		}
		ids = append(ids, id)
	}
	return ids
}

func (r *extraRecord) locate(e ecs.Entity) (int, bool) {
	if !r.indexed {
		if r.index == nil {
			r.index = make(map[ecs.Entity]int32, len(r.entities))
		}
		clear(r.index)
		for i, e := range r.entities {
			r.index[e] = int32(i)
		}
		r.indexed = true
	}
	i, ok := r.index[e]
	return int(i), ok
}
