package ghostreg

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// ServerRegister keeps the server's ghosts: which entities replicate, with which
// network ID, type and owner. IDs are assigned in increasing order and not
// reused within a match, so a late packet can never name the wrong ghost.
//
// It also detects which ghosts changed: each tick every component is
// compared with its last quantized bytes, and only a changed one is
// quantized and encoded again, once for every connection. Per connection
// only the ghosts that changed since the client's acknowledged state, or
// that it predicts, are considered (see [View]).
type ServerRegister struct {
	b      *Binding
	next   components.GhostID
	ghosts []*serverGhost // sorted by ID
	lost   uint64
	views  []*View // by slot; nil for a free one
	nviews int     // the views open: with one, record bodies are not kept (nothing to share them with)
	// slots is the length of every View.state, free the indexes in it no
	// live ghost has (their ghosts died), reused before it grows.
	slots int
	free  []int32
	// bySlot is the ghost at each index of the state arrays; nil while
	// the index is free. ticks are its ticks an acknowledgement reads.
	bySlot []*serverGhost
	ticks  []slotTicks
	// recRuns are the record runs of runTick (see runFor), nrecRuns of
	// them in use.
	recRuns  []recordRun
	nrecRuns int
	runTick  gw.Tick
	runOK    bool
	copied   uint64 // records copied from runs
	runless  uint64 // snapshot parts with no run: maxRuns in use
	// layout is the world's layout version the ghosts' component pointers
	// were taken at: while it holds, they point at the live values.
	layout  uint64
	hasPtrs bool
	// hot lays every ghost's components out for the per-tick comparison,
	// one after the other (spareHot is the other buffer refresh
	// alternates with, oldRaw its scratch); raw holds their quantized
	// bytes as last encoded, laid out in runs (see refresh; spare is the
	// other buffer). runHot lists the hot entries of each run, open the
	// run each component continues while refresh builds them, and diff
	// the entries the last scan found changed. unencoded are the ghosts
	// spawned since the last encode, dirty the ghosts (indexes) whose
	// bytes changed.
	hot       []hotComp
	spareHot  []hotComp
	oldRaw    []int32
	runs      []hotRun
	runHot    []int32
	open      []int32
	diff      []int32
	raw       []byte
	spare     []byte
	unencoded []*serverGhost
	dirty     []int32
	changed   []*serverGhost // the ghosts encode found changed, for the views
	changedAt []int32        // and their indexes, which most views read alone
	spill     []candidate    // scratch of pendingOrder and selectTop
	keys      []uint64       // selectTop's scratch
	// owned lists each connection's ghosts in ID order.
	owned   map[components.ConnID][]*serverGhost
	encTick gw.Tick
	agedAt  int // the ghost ageBorn checked last
	encOK   bool
	scratch bitstream.Writer
	sbuf    []byte
	st      codec.Stream
	sizes   [][]int // per ghost type, each component's size in bytes
	// encSlabs are, per ghost type, the rings of its ghosts' past
	// encodings (see encodings), made at the type's first change.
	encSlabs []*slab
	predAll  []bool // per ghost type: every client predicts it
}

// hotComp is one replicated component of one ghost, as the per-tick
// comparison reads it: every ghost's in one contiguous slice.
type hotComp struct {
	ptr  unsafe.Pointer // the live value, while the register's layout holds
	raw  int32          // where its quantized bytes are in ServerRegister.raw
	size int32
	gi   int32 // its ghost's index in ServerRegister.ghosts
	run  int32 // its run in ServerRegister.runs; -1 for a zero-size value
	cid  codec.ComponentID
}

// hotRun is a stretch of values of one component that follow one another
// both in the world's storage and in ServerRegister.raw.
type hotRun struct {
	ptr  unsafe.Pointer // the first value
	raw  int32          // the first value's bytes in ServerRegister.raw
	size int32          // bytes per value
	n    int32          // values
	at   int32          // the first value's entry in ServerRegister.runHot
}

type serverGhost struct {
	id    components.GhostID
	e     ecs.Entity
	typ   codec.GhostTypeID
	owner components.ConnID
	spawn gw.Tick
	dead  bool // no longer replicated: views drop it
	// idx is its state's index in every View.state, in the first cache
	// line with the fields above: a view's walk of its pending set reads
	// only those and its own state array, in order. A dead ghost's index
	// is reused by a later spawn, so every read of a ghost's view state
	// checks dead first.
	idx int32
	// hot is the index of its first component in ServerRegister.hot
	// (each says where its quantized bytes are in ServerRegister.raw:
	// aligned, so quantized in place); enc holds their encodings (each
	// byte-aligned: the i-th is bits[2i+1] bits from bit bits[2i]), chg
	// the tick each last changed (the newest of them in
	// ServerRegister.ticks, by idx).
	hot  int
	enc  []byte
	bits []int32
	chg  []gw.Tick
	// past holds its encodings before enc, for records coded relative to
	// a baseline.
	past encodings
	// body holds its record's body with no baseline (0) and against
	// baselines (1..): while its encoding holds, each is the body of
	// every connection's record that carries the same components against
	// a baseline of the same encoding (values relative to it differ by
	// baseline). Connections' baselines of a moving ghost spread over a
	// few ticks, so a few bodies serve them; the next one written
	// replaces the oldest (bodyNext).
	body     [1 + baseBodies]protocol.RecordBody
	bodyNext uint8
	// eg is its record as writeCandidates passes it to the writer.
	eg protocol.EncodedGhost
}

// slotTicks are the ticks of the ghost at an index that View.Ack reads
// for every record: kept apart from the ghosts, in one array by index,
// so an ack's walk reads a few cache lines, not two of every ghost.
type slotTicks struct {
	// born is the tick of its first encoding, or bornHorizon ticks back
	// once it is older (see ServerRegister.ageBorn): no snapshot before it
	// holds the ghost, so an acknowledgement of one tells a record of
	// the dead ghost that had its index before (see View.Ack).
	born gw.Tick
	last gw.Tick // the newest tick one of its components changed
	// fresh: encoded at least once, first at tick born; false while the
	// index is free.
	fresh bool
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// NewServerRegister returns an empty ghost register for the binding's world.
func NewServerRegister(b *Binding) *ServerRegister {
	s := &ServerRegister{b: b, owned: map[components.ConnID][]*serverGhost{}}
	for t := range b.types {
		gt, _ := b.schema.GhostType(codec.GhostTypeID(t))
		sz := make([]int, len(gt.Components))
		for i, c := range gt.Components {
			sz[i] = int(b.sizes[c])
		}
		s.sizes = append(s.sizes, sz)
		s.predAll = append(s.predAll, gt.Mode == codec.PredictAll)
	}
	return s
}

// Binding returns the binding the register was made with.
func (s *ServerRegister) Binding() *Binding { return s.b }

// Spawn makes e a ghost of type t owned by owner (0: the server) and
// returns its ID. It adds the [components.Ghost] identity and the
// [components.Predicted] marker (the server simulates every ghost in the
// prediction stages) and, for an owned ghost, a [components.InputHeader]
// and the schema's input type, which the server rewrites every tick. It
// errors when e is dead, already a ghost, or lacks a replicated component
// of t (the error names it), and when 2²⁸ ghosts are alive at once. It
// panics if the arche world is locked, like any structural change.
func (s *ServerRegister) Spawn(e ecs.Entity, t codec.GhostTypeID, owner components.ConnID) (components.GhostID, error) {
	a := s.b.world.Arche()
	if !a.Alive(e) {
		return 0, fmt.Errorf("ghosts: cannot spawn dead entity %v", e)
	}
	if a.Has(e, s.b.Ghost) {
		return 0, fmt.Errorf("ghosts: entity %v is already a ghost", e)
	}
	if err := s.b.checkComponents(e, t); err != nil {
		return 0, err
	}
	if len(s.free) == 0 && s.slots >= maxGhostSlots {
		return 0, fmt.Errorf("ghosts: cannot spawn entity %v: %d ghosts hold every index, at most %d (2^28) at once", e, s.slots, maxGhostSlots)
	}
	s.next++
	g := components.Ghost{ID: s.next, Type: uint16(t), Owner: owner, Spawned: s.b.world.Tick()}
	add := []ecs.Component{{ID: s.b.Ghost, Comp: &g}}
	if !a.Has(e, s.b.Predicted) {
		add = append(add, ecs.Component{ID: s.b.Predicted, Comp: &components.Predicted{}})
	}
	if owner != 0 && !a.Has(e, s.b.Header) {
		add = append(add, ecs.Component{ID: s.b.Header, Comp: &components.InputHeader{}})
	}
	if owner != 0 && s.b.HasInput && !a.Has(e, s.b.Input) {
		add = append(add, ecs.Component{ID: s.b.Input, Comp: reflect.New(s.b.schema.InputType()).Interface()})
	}
	a.Assign(e, add...)
	n := len(s.sizes[t])
	sg := &serverGhost{id: g.ID, e: e, typ: t, owner: owner, spawn: g.Spawned,
		bits: make([]int32, 2*n), chg: make([]gw.Tick, n), idx: s.alloc()}
	s.ghosts = append(s.ghosts, sg)
	s.bySlot[sg.idx] = sg
	s.unencoded = append(s.unencoded, sg)
	s.owned[owner] = append(s.owned[owner], sg)
	s.hasPtrs = false // the Assign moved e: take every pointer again
	for _, v := range s.views {
		if v != nil {
			v.spawned(sg)
		}
	}
	return g.ID, nil
}

// Despawn stops replicating the ghost of entity e (clients that were told
// about it get a despawn record until they acknowledge one) and removes its Ghost component if e is
// alive. It reports whether e was a ghost. Destroying the entity without
// Despawn works too: dead ghosts are dropped at the next snapshot.
func (s *ServerRegister) Despawn(e ecs.Entity) bool {
	for i, g := range s.ghosts {
		if g.e == e {
			s.gone(g)
			s.ghosts = append(s.ghosts[:i], s.ghosts[i+1:]...)
			s.hasPtrs = false // the ghosts after it moved: lay them out again
			if a := s.b.world.Arche(); a.Alive(e) && a.Has(e, s.b.Ghost) {
				a.Remove(e, s.b.Ghost)
			}
			return true
		}
	}
	return false
}

// Len returns the number of live ghosts.
func (s *ServerRegister) Len() int { return len(s.ghosts) }

// Lost returns how many ghosts were dropped because their entity died (or
// lost its Ghost or a replicated component) without Despawn.
func (s *ServerRegister) Lost() uint64 { return s.lost }

// Entity returns the entity of ghost id. A ghost whose entity died (or
// lost a replicated component) is not found, even before it is dropped.
func (s *ServerRegister) Entity(id components.GhostID) (ecs.Entity, bool) {
	i := sort.Search(len(s.ghosts), func(i int) bool { return s.ghosts[i].id >= id })
	if i < len(s.ghosts) && s.ghosts[i].id == id && s.live(s.ghosts[i]) {
		return s.ghosts[i].e, true
	}
	return ecs.Entity{}, false
}

// Owned appends the live entities owned by conn to dst, in ID order: a
// ghost destroyed without Despawn is left out even before it is dropped,
// so callers can use every entity returned.
//
// Its cost is that of the ghosts conn owns, not of every ghost: the
// server writes each connection's inputs every tick.
func (s *ServerRegister) Owned(dst []ecs.Entity, conn components.ConnID) []ecs.Entity {
	for _, g := range s.owned[conn] {
		if s.live(g) {
			dst = append(dst, g.e)
		}
	}
	return dst
}

// live reports whether g's entity is alive and still a ghost of its type.
func (s *ServerRegister) live(g *serverGhost) bool {
	a := s.b.world.Arche()
	return a.Alive(g.e) && a.Has(g.e, s.b.Ghost) && s.b.hasAll(g.e, g.typ)
}

// prune drops ghosts whose entity died or lost a component the ghost
// replicates.
func (s *ServerRegister) prune() {
	kept := s.ghosts[:0]
	for _, g := range s.ghosts {
		if s.live(g) {
			kept = append(kept, g)
		} else {
			s.lost++
			s.gone(g)
		}
	}
	clear(s.ghosts[len(kept):])
	s.ghosts = kept
}

// refresh prunes dead ghosts and lays every component out again when the
// world's layout changed since the last time: while it holds, every
// ghost's entity is alive and its values stay where they are.
//
// raw is laid out in runs, one per stretch of ghosts whose component
// values follow one another in the world's storage (an archetype's
// column, entities in ghost order): a run's quantized bytes follow one
// another in raw the same way, so the per-tick comparison of a run is one
// block comparison, not one per ghost.
func (s *ServerRegister) refresh() {
	layout := s.b.world.LayoutVersion()
	if s.hasPtrs && layout == s.layout {
		return
	}
	s.prune()
	a := s.b.world.Arche()
	old := s.hot
	s.hot, s.oldRaw = s.spareHot[:0], s.oldRaw[:0]
	s.runs = s.runs[:0]
	s.open = s.open[:0]
	for gi, g := range s.ghosts {
		prev := g.hot
		g.hot = len(s.hot)
		gt, _ := s.b.schema.GhostType(g.typ)
		for i, id := range s.b.types[g.typ] {
			h := hotComp{ptr: a.Get(g.e, id), size: int32(s.sizes[g.typ][i]), gi: int32(gi), cid: gt.Components[i], run: -1}
			from := int32(-1)
			if s.ticks[g.idx].fresh {
				from = old[prev+i].raw
			}
			if h.size > 0 {
				h.run, h.raw = s.extend(h.cid, h.ptr, h.size)
			}
			s.hot = append(s.hot, h)
			s.oldRaw = append(s.oldRaw, from)
		}
	}
	// Each run's values get consecutive bytes in raw, from an 8-aligned
	// start (values are quantized in place there); runHot lists the hot
	// entries of each run in order.
	size := 0
	n := 0
	for r := range s.runs {
		run := &s.runs[r]
		size = (size + 7) &^ 7
		run.raw, run.at = int32(size), int32(n)
		size += int(run.n * run.size)
		n += int(run.n)
	}
	raw := append(s.spare[:0], make([]byte, size)...)
	s.runHot = slices.Grow(s.runHot[:0], n)[:n]
	for i := range s.hot {
		h := &s.hot[i]
		if h.run < 0 {
			continue
		}
		run := &s.runs[h.run]
		k := h.raw // its index in the run, for now
		s.runHot[run.at+k] = int32(i)
		h.raw = run.raw + k*h.size
		if from := s.oldRaw[i]; from >= 0 {
			copy(raw[h.raw:h.raw+h.size], s.raw[from:from+h.size])
		}
	}
	s.raw, s.spare = raw, s.raw
	s.spareHot = old
	s.layout, s.hasPtrs = layout, true
}

// extend adds a value of component cid at ptr to the run it continues
// (the run of cid whose next value would be at ptr), or to a new run,
// and returns the run and the value's index in it.
func (s *ServerRegister) extend(cid codec.ComponentID, ptr unsafe.Pointer, size int32) (run, k int32) {
	for len(s.open) <= int(cid) {
		s.open = append(s.open, -1)
	}
	if r := s.open[cid]; r >= 0 {
		if run := &s.runs[r]; unsafe.Add(run.ptr, int(run.n*size)) == ptr {
			run.n++
			return r, run.n - 1
		}
	}
	s.runs = append(s.runs, hotRun{ptr: ptr, size: size, n: 1})
	s.open[cid] = int32(len(s.runs) - 1)
	return s.open[cid], 0
}

// scan appends to s.diff the hot entries whose live bytes differ from
// their bytes in raw, in run order. An unchanged run costs one block
// comparison; a changed one is narrowed down by blocks of scanBlock
// values, then value by value.
func (s *ServerRegister) scan() {
	s.diff = s.diff[:0]
	for r := range s.runs {
		run := &s.runs[r]
		n := int(run.n * run.size)
		live := unsafe.Slice((*byte)(run.ptr), n)
		if string(live) == string(s.raw[run.raw:int(run.raw)+n]) {
			continue
		}
		size := int(run.size)
		for k := 0; k < int(run.n); k += scanBlock {
			m := min(scanBlock, int(run.n)-k) * size
			at := k * size
			if string(live[at:at+m]) == string(s.raw[int(run.raw)+at:int(run.raw)+at+m]) {
				continue
			}
			for j := k; j < k+m/size; j++ {
				off := j * size
				if string(live[off:off+size]) != string(s.raw[int(run.raw)+off:int(run.raw)+off+size]) {
					s.diff = append(s.diff, s.runHot[int(run.at)+j])
				}
			}
		}
	}
}

// scanBlock is how many values of a changed run are compared as one
// block before comparing them one by one.
const scanBlock = 32

// gone tells every view that ghost g stopped replicating and frees its
// index in their state arrays.
func (s *ServerRegister) gone(g *serverGhost) {
	g.dead = true
	if own := slices.DeleteFunc(s.owned[g.owner], func(o *serverGhost) bool { return o == g }); len(own) > 0 {
		s.owned[g.owner] = own
	} else {
		delete(s.owned, g.owner) // connection IDs are not reused: do not keep one entry per connection ever made
	}
	for _, v := range s.views {
		if v != nil {
			v.removed(g)
		}
	}
	if g.past.buf != nil {
		g.past.release(s.encSlabs[g.typ])
	}
	s.free = append(s.free, g.idx) // for a later spawn, once the views are told
	s.bySlot[g.idx], s.ticks[g.idx] = nil, slotTicks{}
}

// alloc returns a free index in the views' state arrays, cleared in
// every view: a dead ghost's, or a new one at the end.
func (s *ServerRegister) alloc() int32 {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		for _, v := range s.views {
			if v != nil {
				v.state[i] = viewGhost{}
			}
		}
		return i
	}
	s.slots++
	s.bySlot, s.ticks = append(s.bySlot, nil), append(s.ticks, slotTicks{})
	for _, v := range s.views {
		if v != nil {
			v.state = append(v.state, viewGhost{})
		}
	}
	return int32(s.slots - 1)
}

// find returns the index of ghost id in s.ghosts.
func (s *ServerRegister) find(id components.GhostID) (int, bool) {
	i := sort.Search(len(s.ghosts), func(i int) bool { return s.ghosts[i].id >= id })
	return i, i < len(s.ghosts) && s.ghosts[i].id == id
}

// Quantize rounds every ghost's replicated components to what the wire
// carries. The server runs it at the end of each tick's prediction so a
// client that predicts with the same inputs gets bit-identical state. A
// component whose bytes equal those last encoded is already quantized
// and skipped: per unchanged ghost the cost is a comparison of its bytes.
func (s *ServerRegister) Quantize() {
	s.refresh()
	for _, g := range s.unencoded { // nothing to compare with yet: quantize, and keep what to compare with
		if !g.dead {
			for _, h := range s.hot[g.hot : g.hot+len(g.chg)] {
				s.b.rt.Quantize(s.b.schema, h.cid, h.ptr)
				copy(s.raw[h.raw:h.raw+h.size], unsafe.Slice((*byte)(h.ptr), h.size))
			}
		}
	}
	s.scan()
	for _, i := range s.diff {
		h := &s.hot[i]
		s.b.rt.Quantize(s.b.schema, h.cid, h.ptr)
	}
}

// Encode brings every ghost's encoding up to date for tick, as the first
// snapshot part of tick does. The server calls it every send tick, with
// connections or without: a ghost's change tick is then when it changed,
// not when the first client came, so a client that joins a long-resting
// scene gets spawn records that say the ghosts rest (see spawnRestTicks)
// and needs no second record of each. It costs a comparison of every
// ghost's bytes and an encoding of each changed one.
func (s *ServerRegister) Encode(tick gw.Tick) { s.encode(tick) }

// encode brings every ghost's encoding up to date for tick, once per tick
// however many connections the server sends to: a ghost whose bytes
// changed is encoded again, and each component whose encoding differs
// gets tick as its change tick, which puts the ghost in the pending set
// of every view it is relevant to. (Nothing runs between the
// connections' snapshots of a tick that could change a ghost.)
func (s *ServerRegister) encode(tick gw.Tick) {
	s.refresh()
	if s.encOK && s.encTick == tick {
		return
	}
	for _, g := range s.unencoded {
		if !g.dead {
			s.reencode(g, tick)
		}
	}
	clear(s.unencoded)
	s.unencoded = s.unencoded[:0]
	s.dirty = s.dirty[:0]
	s.scan()
	for _, i := range s.diff {
		s.dirty = append(s.dirty, s.hot[i].gi)
	}
	slices.Sort(s.dirty)
	s.dirty = slices.Compact(s.dirty)
	for _, gi := range s.dirty {
		s.reencode(s.ghosts[gi], tick)
	}
	// Each view hears of the changed ghosts in turn, walking its own
	// state in order, rather than each ghost telling every view. Most
	// are in its pending set already (they changed the tick before too),
	// and unless it counts idle ghosts (see View.idles), all that
	// changes for them is here, without a call per view and ghost.
	s.changedAt = s.changedAt[:0]
	for _, g := range s.changed {
		s.changedAt = append(s.changedAt, g.idx)
	}
	for _, v := range s.views {
		switch {
		case v == nil:
		case v.canResume:
			for _, g := range s.changed {
				v.changed(g, tick)
			}
		default:
			state := v.state
			for i, idx := range s.changedAt {
				if vg := &state[idx]; vg.pending && vg.relevant {
					vg.change(tick)
				} else {
					v.changed(s.changed[i], tick)
				}
			}
		}
	}
	clear(s.changed)
	s.changed = s.changed[:0]
	s.encTick, s.encOK = tick, true
	s.ageBorn(tick)
}

// bornHorizon is how far back a ghost's born tick is kept: an older one
// is moved up to it (see ageBorn), so that born, a wrapping tick, never reads
// as recent again however long the ghost lives.
const bornHorizon = 1 << 30

// ageBorn checks one ghost a tick, in turn, and moves its born tick up to
// bornHorizon ticks back when it is older: View.Ack compares born with
// ticks at most sentRing back, which it still precedes, and a ghost older
// than 2³² ticks would otherwise read as born recently for that many
// ticks, its acknowledgements skipped. Each ghost is checked every
// len(ghosts) ticks, well within the 2³² − 2³⁰ ticks left.
func (s *ServerRegister) ageBorn(tick gw.Tick) {
	if n := len(s.ghosts); n > 0 {
		s.agedAt = (s.agedAt + 1) % n
		if t := &s.ticks[s.ghosts[s.agedAt].idx]; t.fresh && age(t.born, tick) > bornHorizon {
			t.born = tick.Add(-bornHorizon)
		}
	}
}

// reencode encodes g's components again and marks those whose encoding
// changed with tick. raw gets the values quantized, as the client holds
// them: a value written after the tick's Quantize differs from it, so
// the next Quantize rounds it in the world too.
func (s *ServerRegister) reencode(g *serverGhost, tick gw.Tick) {
	gt, _ := s.b.schema.GhostType(g.typ)
	w := &s.scratch
	w.Reset(s.sbuf[:0])
	ticks := &s.ticks[g.idx]
	first := !ticks.fresh
	if first {
		ticks.born = tick
	}
	ticks.fresh = true
	var changed bool
	for i, size := range s.sizes[g.typ] {
		h := &s.hot[g.hot+i]
		ptr := h.ptr
		raw := ptr // a zero-size value has no bytes in raw
		if size > 0 {
			at := int(h.raw)
			raw = unsafe.Pointer(&s.raw[at])
			copy(s.raw[at:at+size], unsafe.Slice((*byte)(ptr), size))
			s.b.rt.Quantize(s.b.schema, gt.Components[i], raw)
		}
		start := w.BitLen()
		protocol.EncodeComponent(s.b.schema, &s.st, w, gt.Components[i], raw)
		n := w.BitLen() - start
		if pad := -w.BitLen() & 7; pad > 0 { // byte-align each component: compared and copied by bytes
			w.WriteBits(0, pad)
		}
		enc := w.Bytes()
		if first || int(g.bits[2*i+1]) != n || string(enc[start/8:(start+n+7)/8]) != string(g.enc[g.bits[2*i]/8:(int(g.bits[2*i])+n+7)/8]) {
			g.chg[i], changed = tick, true
		}
		g.bits[2*i], g.bits[2*i+1] = int32(start), int32(n)
	}
	s.sbuf = w.Bytes()
	if changed && !first {
		g.past.push(g.enc, ticks.last, s.encodingSlab(g.typ, len(g.enc)))
	}
	g.enc = append(g.enc[:0], s.sbuf...)
	g.eg = protocol.EncodedGhost{Ghost: components.Ghost{ID: g.id, Type: uint16(g.typ), Owner: g.owner, Spawned: g.spawn}, Src: g.enc, Bits: g.bits}
	s.sbuf = s.sbuf[:0]
	if changed {
		for i := range g.body {
			g.body[i].Reset()
		}
		ticks.last = tick
		s.changed = append(s.changed, g)
	}
}

// WriteSnapshot fills sw, begun for tick, for v's connection: first the
// despawn records v has not acknowledged, then the ghosts of v's pending
// set (see [View]) by priority within the writer's budget. Every pending
// ghost's priority grows by its importance each call until it is sent;
// the ghosts the connection owns come first, then those whose identity it
// has not acknowledged (spawns), then the rest by priority, highest first
// (ties by ID). A ghost the client holds at an acknowledged tick is
// delta-encoded against it: only the components changed since follow. It
// returns how many ghosts were deferred to a later snapshot for lack of
// room. Changed ghosts are encoded once per tick (the first call of a
// tick) and spliced into each connection's snapshot; per call the cost is
// a look at each pending ghost and a copy of the bits sent, and when not
// every pending ghost fits, an importance call per pending ghost and a
// sort of them: a ghost the client holds at rest costs nothing.
func (s *ServerRegister) WriteSnapshot(sw *protocol.SnapshotWriter, v *View, tick gw.Tick) (deferred int) {
	return s.WritePart(sw, v, tick, 0)
}

// WritePart writes part part of v's snapshot of tick into sw: part 0 is
// WriteSnapshot; a later part, written right after the part before it,
// continues with the ghosts that part had no room for (no despawns, no
// second growth of priorities). It returns how many ghosts are still
// deferred. It panics when part does not follow the part last written
// for v at tick, or is not below protocol.MaxSnapshotParts (bugs).
func (s *ServerRegister) WritePart(sw *protocol.SnapshotWriter, v *View, tick gw.Tick, part int) (deferred int) {
	if part < 0 || part >= protocol.MaxSnapshotParts || part > 0 && (v.partTick != tick || part != v.part+1) {
		panic(fmt.Sprintf("ghosts: snapshot part %d of tick %d after part %d of tick %d", part, tick, v.part, v.partTick))
	}
	if d := tick.Sub(v.acked); v.hasAcked && d >= 1 && d <= protocol.MaxBaseDistance {
		sw.DefaultBase(v.acked)
	}
	rec := &v.sent[uint32(tick)%sentRing]
	if part == 0 {
		s.encode(tick)
		v.scope(tick)
		v.expire(tick)
		rec.tick, rec.valid, rec.acked, rec.wrote, rec.from, rec.n, rec.plain = tick, true, 0, 0, v.logged, 0, false
		rec.despawns = rec.despawns[:0]
		for _, id := range v.despawns {
			if !sw.Despawn(id) {
				v.stats.DespawnsDeferred += uint64(len(v.despawns) - len(rec.despawns))
				break
			}
			rec.despawns = append(rec.despawns, id)
		}
		slices.Sort(rec.despawns)
		v.stats.Despawns += uint64(len(rec.despawns))
		v.snapshots++
		if v.resumed = v.resume(); !v.resumed {
			v.collect()
			v.reused, v.ranked = 0, 0
		}
		v.next, v.deferred = 0, 0
	}
	v.partTick, v.part = tick, part
	rec.wrote |= 1 << part
	v.stats.Deferred -= uint64(v.deferred) // the previous part's deferred ghosts get their chance here
	// What is written is chosen before it is written, never written and
	// taken back: when the candidates are expected to fit (at the bits
	// per record the view measured), all of them in the pending order
	// (by ID: short ID deltas, stretches of the tick's record runs);
	// otherwise the ones that go first by priority, about as many as fit,
	// selected without a sort of all of them and written in class then
	// ID order (writeSelected). A view catching up on many spawns ranks
	// them a chunk at a time and goes on down that ranking (resumed).
	var k int
	room := sw.Room()
	switch {
	case part == 0 && v.resumed:
		k = s.writeCandidates(sw, v, tick, 0, len(v.cand))
	case part == 0 && len(v.cand) <= protocol.MaxGhostsPerSnapshot && v.expectFit(room*fitShare/100):
		s.pendingOrder(v)
		if k = s.writeCandidates(sw, v, tick, 0, len(v.cand)); k < len(v.cand) {
			v.rank(v.cand[k:], tick) // the estimate was short: the ones left wait with their priority grown
		}
	case part == 0:
		if v.rank(v.cand, tick) > rankMin {
			k = s.writeByPriority(sw, v, tick, 0)
		} else {
			k = s.writeSelected(sw, v, tick, 0)
		}
	case v.ranked > 0:
		k = s.writeByPriority(sw, v, tick, v.next)
	default:
		k = s.writeSelected(sw, v, tick, v.next)
	}
	v.measure(room-sw.Room(), k-v.next)
	v.logRecords(rec, v.cand[v.next:k], part, tick) // those that wait were ranked: rank noted their wait
	v.next, v.deferred = k, len(v.cand)-k
	if v.resumed { // the candidates a walk would have found: the pending set but the idle ones
		v.deferred = max(0, len(v.pending)-v.idles-k)
	} else {
		v.canResume = len(v.cand) > rankMin && v.ranked > 0 && v.cand[v.ranked-1].class == classSpawn
	}
	v.stats.Deferred += uint64(v.deferred)
	return v.deferred
}

// spawnRestTicks is how long a ghost must have been unchanged for its
// spawn record to say it rests (protocol.EncodedGhost.Rest): a scene
// long at rest is held by a joining client from its first record, with
// no second record to say so, while a ghost that just stopped (a player
// at its spawn point) is sent as it would be to a client that knew it.
const spawnRestTicks = 64

// age is how many ticks before now tick t is, t being at or before now:
// 0..2³²−1 rather than Sub's ±2³¹, so a change further back than 2³¹
// ticks (a ghost at rest for 6 months at 128 Hz) still reads as long
// ago, not as a future one. Change ticks are only compared with ticks
// within protocol.MaxBaseDistance of now, so a change 2³² ticks back
// and more can only read as recent for that many ticks, sending a few
// components or a rest record again.
func age(t, now gw.Tick) uint32 { return now.Since(t) }

// writeByPriority adds v's candidates from index from on, a chunk at a
// time, until one does not fit, and returns that one's index
// (len(v.cand) when all fit): a view catching up on spawns. Each chunk
// is the candidates that go first (see rankKey) among those left, in
// class then ID order (see selectTop): spawns of equal priority go
// first in, first out, with short ID deltas. A part that sends k of n
// candidates costs about n·(1+k/orderChunk) integer comparisons, not a
// sort of all n: a client catching up on 10,000 ghosts gets a packet's
// worth each tick, and goes on down the chunk for a few snapshots (see
// View.resume).
func (s *ServerRegister) writeByPriority(sw *protocol.SnapshotWriter, v *View, tick gw.Tick, from int) int {
	for from < len(v.cand) {
		chunk := orderChunk
		if len(v.cand)-from > rankMin {
			chunk = rankChunk
		}
		end := min(from+chunk, len(v.cand))
		if from >= v.ranked {
			s.keys, s.spill = selectTop(v.cand[from:], end-from, s.keys, s.spill)
			v.ranked = end
		}
		if k := s.writeCandidates(sw, v, tick, from, min(end, v.ranked)); k < min(end, v.ranked) {
			return k
		}
		from = min(end, v.ranked)
	}
	return len(v.cand)
}

// fitShare is the share of a snapshot's room, in percent, that the
// candidates' expected size must stay within for all of them to be
// written in the pending order: records vary in size about the view's
// measured mean.
const fitShare = 85

// spawnHeadBits bounds the head of a record with its identity (an ID
// delta within 2³², the type, the owner and the spawn tick) and the
// flags of a full state.
const spawnHeadBits = 48 + 16 + 1 + 64 + 2

// expectFit reports whether v's candidates are expected to take at most
// room bits: a known ghost's record at the view's mean record size, a
// spawn's at its identity and full state. It stops at the first
// candidate past room, so it costs what fits.
func (v *View) expectFit(room int) bool {
	mean, state := v.recordBits(), v.state
	for _, c := range v.cand {
		if state[c.g.idx].known {
			room -= mean
		} else {
			room -= spawnHeadBits + 8*len(c.g.enc)
		}
		if room < 0 {
			return false
		}
	}
	return true
}

// pendingOrder puts v's candidates, in pending (ID) order, in the order
// writeAll used: first those whose record can come from the tick's
// record run (see shared), then the others, each in ID order. The others
// are mostly ghosts that moved again after a rest, whose baseline (the
// snapshot that said they rest) differs per connection; among the
// shared ones each would end a stretch of the run. s.spill is its
// scratch. A connection alone writes its records in the same order.
func (s *ServerRegister) pendingOrder(v *View) {
	cand, state, acked, ack0 := v.cand, v.state, v.acked, v.ack0()
	n := 0
	s.spill = s.spill[:0]
	for _, c := range cand {
		if shared(&state[c.g.idx], acked, ack0) {
			cand[n] = c
			n++
		} else {
			s.spill = append(s.spill, c)
		}
	}
	copy(cand[n:], s.spill)
	clear(s.spill) // let dead ghosts go
}

// writeSelected adds v's candidates from index from on, ranked (see
// View.rank), and returns the index of the first one not written: those
// before it were. It selects the candidates that go first (see order),
// as many as the writer's room is expected to hold at the view's
// measured bits per record (a little less, so that the selection
// fits), and writes them in class then ID order (short ID deltas,
// stretches of the tick's record runs); then it fills the room left the
// same way. A selection costs about len(v.cand)-from comparisons plus
// log2(k) per candidate that displaces one of the k first, and the
// order k·log2(k): a part that sends k of n candidates costs about n
// comparisons, a few times at most, not a sort of all n.
func (s *ServerRegister) writeSelected(sw *protocol.SnapshotWriter, v *View, tick gw.Tick, from int) int {
	for pass := 0; from < len(v.cand); pass++ {
		m := sw.Room() / v.recordBits()
		if pass == 0 {
			m = m * fitShare / 100
		} else {
			m += m/4 + 1 // the last stretch of room: one left out at its end costs nothing
		}
		end := min(from+max(m, 1), len(v.cand))
		s.keys, s.spill = selectTop(v.cand[from:], end-from, s.keys, s.spill)
		if k := s.writeCandidates(sw, v, tick, from, end); k < end || sw.Full() {
			return k
		}
		from = end
	}
	return len(v.cand)
}

// writeCandidates adds v's candidates v.cand[from:to] in that order until
// one does not fit, and returns that one's index (to when all fit). It
// changes nothing but the writer, the tick's record runs and the
// candidates' notes of what their record was.
func (s *ServerRegister) writeCandidates(sw *protocol.SnapshotWriter, v *View, tick gw.Tick, from, to int) int {
	run, j := s.runFor(v, tick), 0 // j: the run's record expected next
	for k := from; k < to; k++ {
		if run != nil && v.shared(&v.state[v.cand[k].g.idx]) {
			if n, _ := s.copyRun(sw, v, run, k, to, &j, tick); n > 0 {
				k += n - 1
				continue
			}
			if sw.Full() {
				return k
			}
			if j >= 0 { // they did not fit together: one at a time from here
				run = nil
			}
		}
		if !s.writeOne(sw, v, &v.cand[k], tick) {
			return k // the writer is full: every later ghost waits too
		}
	}
	return to
}

// writeOne adds c's record on its own (its body copied when more than
// one connection could use it), noting in c what it said, and reports
// whether it fit.
func (s *ServerRegister) writeOne(sw *protocol.SnapshotWriter, v *View, c *candidate, tick gw.Tick) bool {
	g := c.g
	vg := &v.state[g.idx]
	eg := &g.eg // its identity and encoding set by reencode: only what differs per connection is set here
	eg.Identity, eg.HasBase, eg.Changed, eg.Rest, eg.BaseSrc = !vg.known, false, 0, false, nil
	if base, ok := v.base(vg); ok {
		if d := tick.Sub(base); d >= 1 && d <= protocol.MaxBaseDistance {
			eg.HasBase, eg.Base, eg.Changed = true, base, changedSince(g, tick, d)
			s.relative(g, tick)
		}
	}
	if !eg.HasBase && !vg.known { // a spawn long unchanged: the client holds it, as after a delta saying so
		eg.Rest = age(s.ticks[g.idx].last, tick) >= spawnRestTicks
	}
	c.rest, c.full = eg.HasBase && eg.Changed == 0 || eg.Rest, !eg.HasBase && vg.sent
	if s.nviews > 1 { // the body every such record has: written once, copied (with its baseline's distance when not the default one)
		return sw.AddBody(eg, g.bodyFor(s.b.schema))
	}
	return sw.AddEncoded(eg)
}

// encodingSlab returns the slab of ghost type t's rings of past
// encodings, each of size bytes.
func (s *ServerRegister) encodingSlab(t codec.GhostTypeID, size int) *slab {
	if int(t) >= len(s.encSlabs) {
		s.encSlabs = append(s.encSlabs, make([]*slab, int(t)+1-len(s.encSlabs))...)
	}
	if s.encSlabs[t] == nil {
		s.encSlabs[t] = encodingSlab(size)
	}
	return s.encSlabs[t]
}

// relative sets g's record, its baseline and changed components set for
// a snapshot of tick, to carry its changed values relative to their
// codes at the baseline, when the baseline lies within
// protocol.RelativeWindow and g's encoding there is still kept.
func (s *ServerRegister) relative(g *serverGhost, tick gw.Tick) {
	eg := &g.eg
	if eg.Changed == 0 || tick.Sub(eg.Base) > protocol.RelativeWindow {
		return
	}
	// A component changed after the baseline, so the encoding there is a
	// past one.
	if src, from, ok := g.past.at(eg.Base, tick); ok {
		eg.BaseSrc, eg.BaseFrom = src, from
	}
}

// baseBodies is how many bodies against baselines a ghost keeps.
const baseBodies = 4

// bodyFor returns the body of g's record as g.eg says it, encoding it
// in place of the oldest one kept when no body holds it.
func (g *serverGhost) bodyFor(schema *codec.Schema) *protocol.RecordBody {
	eg := &g.eg
	if !eg.HasBase {
		if !g.body[0].For(eg) {
			g.body[0].Encode(schema, eg)
		}
		return &g.body[0]
	}
	for i := 1; i < len(g.body); i++ {
		if g.body[i].For(eg) {
			return &g.body[i]
		}
	}
	b := &g.body[1+g.bodyNext]
	g.bodyNext = (g.bodyNext + 1) % baseBodies
	b.Encode(schema, eg)
	return b
}

// RunRecords returns how many records snapshots took from record runs
// (written once for every connection whose baseline is as far back) rather
// than one at a time, and how many snapshot parts found no run for their
// baseline distance because the tick had its 8 runs already (their
// records were written one at a time).
func (s *ServerRegister) RunRecords() (copied, runless uint64) { return s.copied, s.runless }

// changedSince returns the bits of g's components whose encoding changed
// in the d ticks up to tick.
func changedSince(g *serverGhost, tick gw.Tick, d int32) uint32 {
	var changed uint32
	for i, t := range g.chg {
		if age(t, tick) < uint32(d) {
			changed |= 1 << i
		}
	}
	return changed
}

// recordRun is a tick's run of records for the connections whose default
// baseline is d ticks back (see protocol.RecordRun): its ghosts in ID
// order and whether each record said nothing changed.
type recordRun struct {
	d      int32
	ghosts []*serverGhost
	rest   []bool
	r      protocol.RecordRun
}

// recordSlack bounds the bytes of a record's head and flags beyond its
// components' encodings.
const recordSlack = 24

// growRuns gives every run room for half again as many records as run
// holds and one more, of need bytes at most each, as the connections of
// any tick may use any of them: a run larger than any before costs one
// allocation per slice of each run, not one each time a run first grows
// that large.
func (s *ServerRegister) growRuns(run *recordRun, need int) {
	total := (run.r.Len()+1)*3/2 + 16
	for i := range s.recRuns {
		r := &s.recRuns[i]
		more := total - r.r.Len() // ghosts, rest and the records are as long
		if more <= 0 {
			continue
		}
		if n, b := r.r.Room(); n < more || b < more*need {
			r.r.Reserve(more, more*need)
		}
		r.ghosts, r.rest = slices.Grow(r.ghosts, more), slices.Grow(r.rest, more)
	}
}

// maxRuns bounds the record runs of a tick: the connections whose
// baseline distance has none write their records one at a time. Round
// trips jitter by a few ticks, so a handful of distances cover them.
const maxRuns = 8

// runFor returns the record run of v's snapshot of tick, made empty when
// it is the first of its baseline distance this tick; nil when v's
// snapshot has no default baseline, no other connection could share it,
// or maxRuns runs were made this tick.
func (s *ServerRegister) runFor(v *View, tick gw.Tick) *recordRun {
	d := tick.Sub(v.acked)
	if s.nviews < 2 || !v.hasAcked || d < 1 || d > protocol.MaxBaseDistance {
		return nil
	}
	if !s.runOK || s.runTick != tick {
		s.nrecRuns, s.runTick, s.runOK = 0, tick, true
	}
	for i := range s.recRuns[:s.nrecRuns] {
		if s.recRuns[i].d == d {
			return &s.recRuns[i]
		}
	}
	if s.nrecRuns == maxRuns {
		s.runless++
		return nil
	}
	if s.recRuns == nil {
		s.recRuns = make([]recordRun, maxRuns)
	}
	r := &s.recRuns[s.nrecRuns]
	s.nrecRuns++
	clear(r.ghosts) // let dead ghosts go
	r.d, r.ghosts, r.rest = d, r.ghosts[:0], r.rest[:0]
	r.r.Reset()
	return r
}

// shared reports whether v's client knows vg's ghost and holds it at v's
// acknowledged snapshot: then its record is the one every connection
// whose baseline is as far back gets, so it can come from a run.
func (v *View) shared(vg *viewGhost) bool { return shared(vg, v.acked, v.ack0()) }

// ack0 reports whether the client acknowledged part 0 of v's
// acknowledged snapshot: then a plain record of a ghost in it is the
// ghost's baseline.
func (v *View) ack0() bool { return v.hasAck0 && v.ack0Top == v.acked }

// shared is View.shared for a view that acknowledged the snapshot of
// acked, for loops that keep it in a local.
func shared(vg *viewGhost, acked gw.Tick, ack0 bool) bool {
	// A plain record, first: a moving ghost's. Only a known ghost has
	// plain bits (a resync or a new scope clears them).
	if d := uint64(age(acked, vg.plainTop)); ack0 && d < plainTicks && vg.plain>>(d&63)&1 != 0 {
		return true
	}
	return vg.known && vg.hasBase && vg.base == acked
}

// copyRun adds to sw the longest stretch of v's candidates from k (below
// to) that are records of run in a row, v's client knowing each and
// holding it at v's acknowledged snapshot, appending to the run the
// records it does not have yet past its end, and returns how many it
// added and the candidate after the stretch. *j is the run's record expected at
// k, set to the one after the stretch; it returns 0 with *j at -1 when
// the run passed candidate k by (another connection's snapshot did not
// hold it) and with *j unchanged when the stretch does not fit.
func (s *ServerRegister) copyRun(sw *protocol.SnapshotWriter, v *View, run *recordRun, k, to int, j *int, tick gw.Tick) (n, end int) {
	if g := v.cand[k].g; *j < 0 || *j >= len(run.ghosts) || run.ghosts[*j] != g {
		i, ok := slices.BinarySearchFunc(run.ghosts, g.id, func(x *serverGhost, id components.GhostID) int { return cmp.Compare(x.id, id) })
		if !ok && i < len(run.ghosts) {
			*j = -1
			return 0, k
		}
		*j = i
	}
	cand, state, acked, ack0, at := v.cand, v.state, v.acked, v.ack0(), *j // locals in the loop: it runs per record; at: the run's record next
	end = k
	for ; end < to; end++ {
		c := &cand[end]
		g := c.g
		if !shared(&state[g.idx], acked, ack0) {
			break
		}
		if at < len(run.ghosts) {
			if run.ghosts[at] != g {
				break
			}
		} else if g.id > run.r.Last() {
			s.appendRun(run, g, v.acked, tick)
		} else {
			break
		}
		c.rest, c.full = run.rest[at], false // noted before it is written: a stretch that does not fit is written again
		at++
		n++
	}
	if !sw.AddRun(&run.r, *j, *j+n) {
		return 0, k
	}
	*j += n
	s.copied += uint64(n)
	return n, end
}

// appendRun appends g's record against the snapshot of base to run.
func (s *ServerRegister) appendRun(run *recordRun, g *serverGhost, base, tick gw.Tick) {
	need := len(g.enc)*3/2 + recordSlack // a relative field is at most 3 bits over its code of 8 or more
	if records, bytes := run.r.Room(); records < 1 || bytes < need || len(run.ghosts) == cap(run.ghosts) || len(run.rest) == cap(run.rest) {
		s.growRuns(run, need)
	}
	eg := &g.eg
	eg.Identity, eg.HasBase, eg.Base, eg.Rest, eg.Changed, eg.BaseSrc = false, true, base, false, changedSince(g, tick, run.d), nil
	s.relative(g, tick)
	body := g.bodyFor(s.b.schema)
	run.r.Append(eg, body)
	run.ghosts, run.rest = append(run.ghosts, g), append(run.rest, eg.Changed == 0)
}
