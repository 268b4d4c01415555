package ecs

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
)

// HistoryStats counts what a [History] has done since it was made.
type HistoryStats struct {
	Records  uint64 // ticks recorded (normal and replayed)
	Restores uint64 // ticks restored
	// SlowRestores counts restores that found the layout changed since the
	// tick and fell back to per-entity copies.
	SlowRestores uint64
	// SkippedEntities counts entities of a restored tick that no longer
	// exist or are no longer predicted: they are not resurrected.
	SkippedEntities uint64
	// Dormant counts predicted entities created after a restored tick that
	// were held at their spawn state during replay.
	Dormant uint64
	// Layouts counts the distinct entity layouts (epochs) captured.
	Layouts uint64
	// Reshaped counts entities of restored ticks that had gained or lost
	// registered components since the tick: a restore gives them back the
	// registered components they had then.
	Reshaped uint64
	// UnbornWrites counts predicted spawns not yet born at a rollback's
	// restored tick whose registered values or components the rollback's
	// fix changed: each was born at the restored tick (see the History
	// rule).
	UnbornWrites uint64
}

// TickRangeError is returned for a tick a [History] does not hold: never
// recorded, or overwritten because it is older than the capacity.
type TickRangeError struct {
	Tick           Tick
	Oldest, Newest Tick // the range held; Oldest > Newest when empty
}

// Error names the tick and the range the history holds.
func (e *TickRangeError) Error() string {
	if e.Oldest > e.Newest {
		return fmt.Sprintf("ecs: tick %d is not in the history (it is empty)", e.Tick)
	}
	return fmt.Sprintf("ecs: tick %d is not in the history (it holds ticks %d..%d)", e.Tick, e.Oldest, e.Newest)
}

// errNoHistory is returned by rollback operations on a world without
// EnableHistory.
var errNoHistory = errors.New("ecs: the world has no history (call EnableHistory)")

// History records, for every tick, the values of the registered components
// (see [Register]) of all entities carrying its marker component
// (components.Predicted for the rollback history of [EnableHistory]), in a
// ring of fixed capacity whose slots carry their tick number. The
// [Schedule] records it after the prediction stages and
// [Schedule.Rollback] restores a tick in place; the endpoints' lag
// compensation reads it without restoring.
//
// Record and restore copy each component of each archetype as one block
// (entities of one archetype are contiguous in arche's storage), so their
// cost is close to a plain copy of the same bytes. Entity layouts are
// captured only when the world's structure changed since the previous
// record.
//
// Restoring a tick T restores the values of the registered components and
// which registered components each entity has: one added since T (by a
// prediction system's [Commands], say) is removed, one removed since T is
// added back with its value of T. A replay thus repeats the structural
// changes of the first run instead of starting from the newest structure.
// Unregistered components stay as they are.
//
// Rule for entities whose life does not span the restored tick T:
//   - an entity that existed at T but has died is skipped (and counted);
//     it is not resurrected;
//   - a predicted entity created after T (a predicted spawn) is set to the
//     state recorded at its first tick B (the registered components it had
//     then, with their values) and held dormant (its Predicted
//     marker removed) until the replay has re-run tick B; one created after
//     the newest record stays dormant until the replay ends. Replay thus
//     neither steps a spawn twice nor loses it. Spawning itself belongs in a
//     side-effect system (first-time prediction), so replay does not spawn
//     it again;
//   - such a spawn is unborn at T. The fix of [Schedule.Rollback] writes the state of T: when it
//     changes an unborn spawn's registered values or components (the
//     server says the entity existed at T, and how), the spawn is born at
//     T with what the fix wrote, exactly as an entity the fix spawns: it
//     is recorded at T and predicted from T+1 on, so it ends where the
//     replay from its new birth puts it (and is counted). A spawn the fix leaves alone stays
//     dormant and ends where the replay from its own birth puts it. A
//     write to an unborn spawn thus never becomes its state at a later
//     tick than the one it was meant for.
type History struct {
	world        *World
	marker       ecs.ID // the component whose entities are recorded
	markerFilter ecs.CachedFilter
	comps        []compType
	slots        []archSlot
	records      []record   // a power of two long, so slots stay in order across the tick wrap
	views        []tickView // one per record
	mask         uint32     // len(records) - 1
	capacity     int        // ticks held, at most len(records)
	scratch      record
	epochs       []epoch
	nEpochs      uint64
	newest       Tick
	count        uint64 // records ever made, to tell an empty ring
	checksums    bool
	dormant      []dormantEntity
	newborn      []ecs.Entity
	add, remove  []ecs.ID // scratch of restoreEntities
	unbornValues []byte   // registered values of dormant entities before a fix
	base         []uintptr
	stats        HistoryStats
}

type compType struct {
	id     ecs.ID
	typ    reflect.Type
	size   uintptr
	fields []byteRange // leaf fields, for reports
	ranges []byteRange // fields merged, for hashing
}

// archSlot is one archetype (an exact component mask) holding predicted
// entities.
type archSlot struct {
	mask   ecs.Mask
	filter ecs.CachedFilter
	comps  []int // indexes into History.comps present in the archetype
	perRow bool  // copy row by row: relation archetypes, non-contiguous storage
}

// epoch is one captured entity layout: which archetypes, in which order,
// with which entities.
type epoch struct {
	seq      uint64
	layout   uint64
	runs     []run
	entities []ecs.Entity
	rows     []int32 // rows[r*len(comps)+c]: first row of run r in comp c's block, -1 if absent
	compRows []int   // rows per component
	index    map[ecs.Entity]int32
	indexed  bool
}

type run struct{ slot, start, count int }

type record struct {
	tick  Tick
	valid bool
	epoch uint64
	data  [][]byte
	sum   uint64
}

type dormantEntity struct {
	entity ecs.Entity
	birth  Tick
	// had and off locate the values saved before a rollback's fix: the
	// registered components the entity had, from off in unbornValues.
	had ecs.Mask
	off int
}

// EnableHistory creates the world's rollback history: it records the
// entities carrying the marker component M (ghostwire's endpoints use
// components.Predicted), and [Schedule] records it after the prediction
// stages and restores it on rollback. capacity is the number of ticks kept,
// 128 when zero (about 2 s at 60 Hz); memory is capacity times the bytes of
// the registered components of all predicted entities, never more. It
// returns an error naming the value when capacity is outside 2..65536, or
// when the world already has a history.
func EnableHistory[M any](w *World, capacity int) (*History, error) {
	if w.history != nil {
		return nil, errors.New("ecs: the world already has a history")
	}
	h, err := newHistory(w, ecs.ComponentID[M](w.Arche()), capacity)
	if err != nil {
		return nil, err
	}
	w.history = h
	return h, nil
}

// NewHistory creates a history of the entities carrying the marker
// component M that is not the world's rollback history: nothing records or
// restores it but the caller, who calls [History.Record] once per tick and
// reads it with [ValueAt], [History.Lookup] and [History.View]. Lag
// compensation keeps one of the entities with hitboxes; a game may keep
// one for its own replays or analytics. capacity is the number of ticks
// kept, 128 when zero. It returns an error naming the value when capacity
// is outside 2..65536.
func NewHistory[M any](w *World, capacity int) (*History, error) {
	return newHistory(w, ecs.ComponentID[M](w.Arche()), capacity)
}

// newHistory creates a history of the entities carrying the marker
// component. Errors as EnableHistory.
func newHistory(w *World, marker ecs.ID, capacity int) (*History, error) {
	if capacity == 0 {
		capacity = 128
	}
	if capacity < 2 || capacity > 65536 {
		return nil, fmt.Errorf("ecs: history capacity %d outside 2..65536", capacity)
	}
	a := w.Arche()
	h := &History{
		world:    w,
		marker:   marker,
		records:  make([]record, ringSize(capacity)),
		mask:     uint32(ringSize(capacity) - 1),
		capacity: capacity,
		epochs:   make([]epoch, capacity+2),
	}
	h.views = make([]tickView, len(h.records))
	for i := range h.views {
		h.views[i] = tickView{h: h, rec: &h.records[i]}
	}
	var f ecs.Filter = ecs.All(marker)
	h.markerFilter = a.Cache().Register(f)
	return h, nil
}

// Capacity returns the number of ticks the history holds.
func (h *History) Capacity() int { return h.capacity }

// Stats returns what the history has done since it was made.
func (h *History) Stats() HistoryStats { return h.stats }

// ValueAt returns entity e's component T as recorded at tick. ok is false
// when the tick is not held, T is not registered, or e had no T then. It
// costs what [History.Lookup] costs.
func ValueAt[T any](h *History, tick Tick, e ecs.Entity) (v T, ok bool) {
	p, err := h.Lookup(tick, e, ecs.ComponentID[T](h.world.Arche()))
	if err != nil || p == nil {
		return v, false
	}
	return *(*T)(p), true
}

// Register adds component type T to the components the history
// records and restores. T must be plain data: a type holding a pointer,
// slice, map, string, interface, channel, function or unsafe pointer is
// refused with an error naming the field and its kind. Registering must
// happen before the first record; registering T twice is an error.
func Register[T any](h *History) error {
	return h.RegisterType(reflect.TypeFor[T]())
}

// RegisterType is [Register] for a type known only at run time (the
// replicated components of a schema). The type is registered with the
// arche world if it is not yet. It errors like Register.
func (h *History) RegisterType(t reflect.Type) error {
	fields, ranges, err := plainLayout(t)
	if err != nil {
		return err
	}
	if h.count > 0 {
		return fmt.Errorf("ecs: cannot register %v after the first record", t)
	}
	id := ecs.TypeID(h.world.Arche(), t)
	for _, c := range h.comps {
		if c.id == id {
			return fmt.Errorf("ecs: component %v is already registered for rollback", t)
		}
	}
	h.comps = append(h.comps, compType{id: id, typ: t, size: t.Size(), fields: fields, ranges: ranges})
	for i := range h.records {
		h.records[i].data = append(h.records[i].data, nil)
	}
	h.scratch.data = append(h.scratch.data, nil)
	// Known archetypes may hold the new type.
	for i := range h.slots {
		h.slots[i].comps = h.slotComps(&h.slots[i].mask)
	}
	return nil
}

// record returns the slot of tick.
func (h *History) record(tick Tick) *record { return &h.records[uint32(tick)&h.mask] }

// ringSize is the least power of two holding n slots: tick mod a power of
// two stays continuous when ticks wrap from 2³²−1 to 0, so the ticks
// just before the wrap never share a slot with those just after.
func ringSize(n int) int {
	s := 1
	for s < n {
		s <<= 1
	}
	return s
}

// Newest returns the newest recorded tick; ok is false when nothing was
// recorded yet.
func (h *History) Newest() (tick Tick, ok bool) { return h.newest, h.count > 0 }

// Oldest returns the oldest tick still held; ok is false when empty.
func (h *History) Oldest() (tick Tick, ok bool) {
	if h.count == 0 {
		return 0, false
	}
	span := min(uint64(h.capacity), h.count)
	oldest := h.newest.Add(1 - int(span))
	for !h.Has(oldest) && oldest != h.newest {
		oldest++
	}
	return oldest, true
}

// Has reports whether tick is held: recorded, and not yet overwritten by
// a tick Capacity or more later.
func (h *History) Has(tick Tick) bool {
	r := h.record(tick)
	return r.valid && r.tick == tick && h.newest.Sub(tick) < int32(h.capacity) && h.epochOf(r) != nil
}

func (h *History) tickError(tick Tick) error {
	o, ok := h.Oldest()
	if !ok {
		return &TickRangeError{Tick: tick, Oldest: 1, Newest: 0}
	}
	return &TickRangeError{Tick: tick, Oldest: o, Newest: h.newest}
}

func (h *History) epochOf(r *record) *epoch {
	ep := &h.epochs[int(r.epoch%uint64(len(h.epochs)))]
	if ep.seq != r.epoch || h.nEpochs == 0 {
		return nil
	}
	return ep
}

// Record stores the registered components of all entities carrying the
// marker as the state at tick, replacing whatever the ring held in that
// slot. Dormant predicted spawns whose first tick is at or before tick are
// woken first. A world's rollback history is recorded by its [Schedule];
// call Record on a history made with [NewHistory]. It panics if the arche
// world is locked and the layout changed (capturing a layout iterates
// queries; so does waking, which adds components). Steady state (no
// structural change since the previous record) it copies one block per
// archetype and component and allocates nothing.
func (h *History) Record(tick Tick) {
	h.wake(tick, false)
	ep := h.currentEpoch()
	rec := h.record(tick)
	h.capture(rec, ep)
	rec.tick, rec.valid, rec.epoch = tick, true, ep.seq
	if h.checksums {
		rec.sum = h.checksum(rec, ep)
	}
	if h.count == 0 || tick.After(h.newest) {
		h.newest = tick
	}
	h.count++
	h.stats.Records++
}

// capture copies the world's current values into rec following ep.
func (h *History) capture(rec *record, ep *epoch) {
	for c := range h.comps {
		need := ep.compRows[c] * int(h.comps[c].size)
		if cap(rec.data[c]) < need {
			rec.data[c] = make([]byte, need)
		}
		rec.data[c] = rec.data[c][:need]
	}
	h.blocks(rec, ep, true)
}

// blocks copies the values of ep's entities between the world and rec:
// into rec when save, back into the world otherwise. Each component of
// each archetype moves as one block (rows of an archetype are contiguous);
// relation archetypes and non-contiguous ones move row by row.
func (h *History) blocks(rec *record, ep *epoch, save bool) {
	a := h.world.Arche()
	move := func(live unsafe.Pointer, stored []byte) {
		w := unsafe.Slice((*byte)(live), len(stored))
		if save {
			copy(stored, w)
		} else {
			copy(w, stored)
		}
	}
	nc := len(h.comps)
	for ri, r := range ep.runs {
		slot := &h.slots[r.slot]
		q := a.Query(&slot.filter)
		if n := q.Count(); n != r.count {
			q.Close()
			panic(fmt.Sprintf("ecs: archetype holds %d entities, layout says %d: the world changed without a structural event (was arche's SetListener called directly?)", n, r.count))
		}
		if slot.perRow {
			for i := 0; q.Next(); i++ {
				for _, c := range slot.comps {
					ct := &h.comps[c]
					off := (int(ep.rows[ri*nc+c]) + i) * int(ct.size)
					move(q.Get(ct.id), rec.data[c][off:off+int(ct.size)])
				}
			}
			continue
		}
		q.Next()
		for _, c := range slot.comps {
			ct := &h.comps[c]
			n := r.count * int(ct.size)
			off := int(ep.rows[ri*nc+c]) * int(ct.size)
			move(q.Get(ct.id), rec.data[c][off:off+n])
		}
		q.Close()
	}
}

// currentEpoch returns the epoch describing the world's layout now,
// capturing a new one if the structure changed since the last capture.
func (h *History) currentEpoch() *epoch {
	if h.nEpochs > 0 {
		ep := &h.epochs[int((h.nEpochs-1)%uint64(len(h.epochs)))]
		if ep.layout == h.world.layout {
			return ep
		}
	}
	h.discover()
	a := h.world.Arche()
	ep := &h.epochs[int(h.nEpochs%uint64(len(h.epochs)))]
	ep.seq = h.nEpochs
	h.nEpochs++
	h.stats.Layouts++
	ep.layout = h.world.layout
	ep.runs, ep.entities, ep.indexed = ep.runs[:0], ep.entities[:0], false
	for si := range h.slots {
		slot := &h.slots[si]
		q := a.Query(&slot.filter)
		n := q.Count()
		if n == 0 {
			q.Close()
			continue
		}
		start := len(ep.entities)
		contiguous := true
		base := h.base[:0]
		for i := 0; q.Next(); i++ {
			ep.entities = append(ep.entities, q.Entity())
			for k, c := range slot.comps {
				p := uintptr(q.Get(h.comps[c].id))
				if i == 0 {
					base = append(base, p)
				} else if p != base[k]+uintptr(i)*h.comps[c].size {
					contiguous = false
				}
			}
		}
		h.base = base
		if !contiguous {
			slot.perRow = true
		}
		ep.runs = append(ep.runs, run{slot: si, start: start, count: n})
	}
	nc := len(h.comps)
	ep.rows = ep.rows[:0]
	if cap(ep.compRows) < nc {
		ep.compRows = make([]int, nc)
	}
	ep.compRows = ep.compRows[:nc]
	clear(ep.compRows)
	for _, r := range ep.runs {
		slot := &h.slots[r.slot]
		for c := 0; c < nc; c++ {
			ep.rows = append(ep.rows, -1)
		}
		row := ep.rows[len(ep.rows)-nc:]
		for _, c := range slot.comps {
			row[c] = int32(ep.compRows[c])
			ep.compRows[c] += r.count
		}
	}
	return ep
}

// discover adds slots for archetypes of predicted entities not seen before.
// It costs one count per known archetype, and one pass over the predicted
// entities only when an unknown archetype exists.
func (h *History) discover() {
	a := h.world.Arche()
	q := a.Query(&h.markerFilter)
	total := q.Count()
	known := 0
	for i := range h.slots {
		sq := a.Query(&h.slots[i].filter)
		known += sq.Count()
		sq.Close()
	}
	if known == total {
		q.Close()
		return
	}
	var masks []ecs.Mask
	for q.Next() {
		m := q.Mask()
		if h.slotIndex(&m) < 0 && !containsMask(masks, &m) {
			masks = append(masks, m)
		}
	}
	for _, m := range masks {
		f := m.Exclusive()
		slot := archSlot{mask: m, filter: a.Cache().Register(&f)}
		slot.comps = h.slotComps(&slot.mask)
		slot.perRow = hasRelation(a, &slot.mask)
		h.slots = append(h.slots, slot)
	}
}

func containsMask(ms []ecs.Mask, m *ecs.Mask) bool {
	for i := range ms {
		if ms[i] == *m {
			return true
		}
	}
	return false
}

func (h *History) slotIndex(m *ecs.Mask) int {
	for i := range h.slots {
		if h.slots[i].mask == *m {
			return i
		}
	}
	return -1
}

func (h *History) slotComps(m *ecs.Mask) []int {
	var cs []int
	for c := range h.comps {
		if m.Get(h.comps[c].id) {
			cs = append(cs, c)
		}
	}
	return cs
}

// hasRelation reports whether an archetype mask holds a relation
// component: one mask then spans several archetypes (one per target), which
// are not contiguous with each other.
func hasRelation(a *ecs.World, m *ecs.Mask) bool {
	for _, id := range ecs.ComponentIDs(a) {
		if !m.Get(id) {
			continue
		}
		if info, ok := ecs.ComponentInfo(a, id); ok && info.IsRelation {
			return true
		}
	}
	return false
}

// restore writes the state recorded at tick back into the world's
// predicted entities. It returns a [*TickRangeError] if the tick is not
// held (never recorded or overwritten). Entities whose life does not span the tick
// follow the rule in the [History] documentation. It panics if the arche
// world is locked.
//
// When the world's structure has not changed since tick was recorded, the
// restore is one block copy per component and archetype; otherwise it
// copies entity by entity (World.Get, ~7 ns per component).
//
// Most games call [Schedule.Rollback], which restores, applies the server's
// state and replays.
func (h *History) restore(tick Tick) error {
	if !h.Has(tick) {
		return h.tickError(tick)
	}
	rec := h.record(tick)
	ep := h.epochOf(rec)
	h.stats.Restores++
	if ep.layout == h.world.layout {
		h.blocks(rec, ep, false)
		return nil
	}
	h.stats.SlowRestores++
	h.restoreEntities(rec, ep)
	h.holdNewborns(tick, ep)
	return nil
}

func (h *History) restoreEntities(rec *record, ep *epoch) {
	a := h.world.Arche()
	nc := len(h.comps)
	for ri, r := range ep.runs {
		slot := &h.slots[r.slot]
		for i := 0; i < r.count; i++ {
			e := ep.entities[r.start+i]
			if !a.Alive(e) || !a.Has(e, h.marker) {
				h.stats.SkippedEntities++
				continue
			}
			h.reshape(e, &slot.mask)
			for _, c := range slot.comps {
				ct := &h.comps[c]
				if !a.Has(e, ct.id) {
					continue
				}
				off := (int(ep.rows[ri*nc+c]) + i) * int(ct.size)
				copy(unsafe.Slice((*byte)(a.Get(e, ct.id)), ct.size), rec.data[c][off:off+int(ct.size)])
			}
		}
	}
}

// reshape adds and removes registered components of e so that it has those
// of the archetype mask it was recorded in.
func (h *History) reshape(e ecs.Entity, recorded *ecs.Mask) {
	a := h.world.Arche()
	h.add, h.remove = h.add[:0], h.remove[:0]
	for c := range h.comps {
		id := h.comps[c].id
		switch want, has := recorded.Get(id), a.Has(e, id); {
		case want && !has:
			h.add = append(h.add, id)
		case has && !want:
			h.remove = append(h.remove, id)
		}
	}
	if len(h.add) > 0 || len(h.remove) > 0 {
		a.Exchange(e, h.add, h.remove)
		h.stats.Reshaped++
	}
}

// holdNewborns applies the predicted-spawn rule to entities that are
// predicted now but were not at tick.
func (h *History) holdNewborns(tick Tick, ep *epoch) {
	a := h.world.Arche()
	ep.buildIndex()
	h.newborn = h.newborn[:0]
	q := a.Query(&h.markerFilter)
	for q.Next() {
		e := q.Entity()
		if _, ok := ep.index[e]; !ok {
			h.newborn = append(h.newborn, e)
		}
	}
	for _, e := range h.newborn {
		birth := h.newest + 1
		for t := tick + 1; !t.After(h.newest); t++ {
			if !h.Has(t) {
				continue
			}
			r := h.record(t)
			if h.writeEntity(r, h.epochOf(r), e) {
				birth = t
				break
			}
		}
		a.Remove(e, h.marker)
		h.dormant = append(h.dormant, dormantEntity{entity: e, birth: birth})
		h.stats.Dormant++
	}
}

// saveUnborn keeps the registered values of the dormant entities, before a
// rollback's fix may write them.
func (h *History) saveUnborn() {
	a := h.world.Arche()
	h.unbornValues = h.unbornValues[:0]
	for i := range h.dormant {
		d := &h.dormant[i]
		d.had, d.off = ecs.Mask{}, len(h.unbornValues)
		if !a.Alive(d.entity) {
			continue
		}
		for c := range h.comps {
			ct := &h.comps[c]
			if !a.Has(d.entity, ct.id) {
				continue
			}
			d.had.Set(ct.id, true)
			h.unbornValues = append(h.unbornValues, unsafe.Slice((*byte)(a.Get(d.entity, ct.id)), ct.size)...)
		}
	}
}

// bornByFix ends the dormancy of the entities whose registered values or
// components the fix changed since saveUnborn: they are born at the
// restored tick, which Record then records.
func (h *History) bornByFix() {
	a := h.world.Arche()
	kept := h.dormant[:0]
	for _, d := range h.dormant {
		if !a.Alive(d.entity) || !h.changedSince(&d) {
			kept = append(kept, d)
			continue
		}
		if !a.Has(d.entity, h.marker) {
			a.Add(d.entity, h.marker)
		}
		h.stats.UnbornWrites++
	}
	h.dormant = kept
}

// changedSince reports whether d's registered components or their values
// differ from those saveUnborn kept.
func (h *History) changedSince(d *dormantEntity) bool {
	a := h.world.Arche()
	off := d.off
	for c := range h.comps {
		ct := &h.comps[c]
		had, has := d.had.Get(ct.id), a.Has(d.entity, ct.id)
		if had != has {
			return true
		}
		if !had || ct.size == 0 {
			continue
		}
		saved := h.unbornValues[off : off+int(ct.size)]
		off += int(ct.size)
		live := unsafe.Slice((*byte)(a.Get(d.entity, ct.id)), ct.size)
		for _, r := range ct.ranges {
			if string(live[r.off:r.off+r.len]) != string(saved[r.off:r.off+r.len]) {
				return true
			}
		}
	}
	return false
}

// writeEntity gives e the registered components it had in rec (a
// predicted spawn that gained one later, such as its despawn mark, is
// held as it was born) and copies their values from rec into the world;
// false if e is not in rec.
func (h *History) writeEntity(rec *record, ep *epoch, e ecs.Entity) bool {
	ri, i, ok := ep.locate(e)
	if !ok {
		return false
	}
	h.reshape(e, &h.slots[ep.runs[ri].slot].mask)
	a := h.world.Arche()
	nc := len(h.comps)
	for _, c := range h.slots[ep.runs[ri].slot].comps {
		ct := &h.comps[c]
		if !a.Has(e, ct.id) {
			continue
		}
		off := (int(ep.rows[ri*nc+c]) + i) * int(ct.size)
		copy(unsafe.Slice((*byte)(a.Get(e, ct.id)), ct.size), rec.data[c][off:off+int(ct.size)])
	}
	return true
}

// wake gives dormant entities born at or before tick (all of them when all
// is set) their Predicted marker back.
func (h *History) wake(tick Tick, all bool) {
	if len(h.dormant) == 0 {
		return
	}
	a := h.world.Arche()
	kept := h.dormant[:0]
	for _, d := range h.dormant {
		if !all && d.birth.After(tick) {
			kept = append(kept, d)
			continue
		}
		if a.Alive(d.entity) && !a.Has(d.entity, h.marker) {
			a.Add(d.entity, h.marker)
		}
	}
	h.dormant = kept
}

func (ep *epoch) buildIndex() {
	if ep.indexed {
		return
	}
	if ep.index == nil {
		ep.index = make(map[ecs.Entity]int32, len(ep.entities))
	}
	clear(ep.index)
	for i, e := range ep.entities {
		ep.index[e] = int32(i)
	}
	ep.indexed = true
}

// locate returns the run of e and its row within the run.
func (ep *epoch) locate(e ecs.Entity) (runIdx, row int, ok bool) {
	ep.buildIndex()
	g, ok := ep.index[e]
	if !ok {
		return 0, 0, false
	}
	ri := sort.Search(len(ep.runs), func(i int) bool { return ep.runs[i].start+ep.runs[i].count > int(g) })
	return ri, int(g) - ep.runs[ri].start, true
}

// Lookup returns a pointer to the value of component id of entity e
// recorded at tick, valid until that ring slot is recorded again; the
// pointer is to a copy, and writing through it changes the record, never
// the world. It returns a [*TickRangeError] if the tick is not held, and a
// nil pointer with a nil error if e or the component was not recorded at
// that tick. The first lookup of a tick's layout builds an index of its
// entities (O(entities)); later ones cost a map lookup. [ValueAt] is the
// typed form.
func (h *History) Lookup(tick Tick, e ecs.Entity, id ecs.ID) (unsafe.Pointer, error) {
	if !h.Has(tick) {
		return nil, h.tickError(tick)
	}
	rec := h.record(tick)
	ep := h.epochOf(rec)
	c := h.compIndex(id)
	if c < 0 {
		return nil, nil
	}
	ri, i, ok := ep.locate(e)
	if !ok {
		return nil, nil
	}
	first := ep.rows[ri*len(h.comps)+c]
	if first < 0 {
		return nil, nil
	}
	return h.valueAt(rec, c, int(first)+i), nil
}

// zeroSize is what a pointer to a recorded value of a zero-size component
// (a tag) points to: such a record holds no bytes to point into.
var zeroSize struct{}

// valueAt returns a pointer to the value of component c in row of rec.
func (h *History) valueAt(rec *record, c, row int) unsafe.Pointer {
	size := int(h.comps[c].size)
	if size == 0 {
		return unsafe.Pointer(&zeroSize)
	}
	return unsafe.Pointer(&rec.data[c][row*size])
}

func (h *History) compIndex(id ecs.ID) int {
	for c := range h.comps {
		if h.comps[c].id == id {
			return c
		}
	}
	return -1
}
