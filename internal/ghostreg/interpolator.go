package ghostreg

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// InterpolatorStats counts what an [Interpolator] did.
type InterpolatorStats struct {
	// ExtrapolatedTicks adds up, over ghosts and frames, the ticks shown
	// past the newest received state.
	ExtrapolatedTicks float64
	// MaxExtrapolation is the furthest any ghost was shown past its newest
	// state, in ticks; it never exceeds the cap.
	MaxExtrapolation float64
	// HeldTicks adds up, over ghosts and frames, the ticks shown held at
	// the extrapolation cap (part of ExtrapolatedTicks).
	HeldTicks float64
	Teleports uint64 // blends replaced by a jump
	Spawned   uint64 // ghosts shown once the render tick reached them
	Despawned uint64
	Buffered  int // ghosts with a state buffer now
}

// Interpolator shows the ghosts a client does not own: it buffers their
// received states by server tick and, every frame, writes into their
// entities the blend of the two states around the render tick (per
// component, by the schema's [codec.Interpolation]), extrapolates from
// the last two states up to a cap when data runs out and then holds, and
// steps instead of blending across a teleport. A ghost's entity appears
// when the render tick reaches its first state and disappears when it
// reaches the tick the ghost was first missing from a complete snapshot.
type Interpolator struct {
	c      *ClientRegister
	b      *Binding
	maxExt float64
	ghosts []*interpGhost       // sorted by ID
	ids    []components.GhostID // the IDs of ghosts, searched without touching the ghosts
	// hint is the index find returned last: a snapshot lists its records
	// mostly in ID order, so the next is most often just after it.
	hint  int
	plans []typePlan // by ghost type
	// active are the ghosts a frame must visit, sorted by ID: every ghost
	// but those shown at rest (still), which cost a frame nothing.
	// activate are the ghosts that became active since the last frame,
	// merged in by the next; sweep is where the next frame's check for
	// still ghosts whose entity the game destroyed goes on.
	active   []*interpGhost
	activate []*interpGhost
	sweep    int
	lastRT   float64 // the render tick of the last frame
	// The record Poses, for the still ghosts they do not visit: recTick
	// and recSeq are the tick and sequence number of the latest record
	// Pose of each tick slot (seq counts them). A still ghost was posed
	// at its newest state by every record Pose since it went still (its
	// stillSeq) whose tick is not before stillMax, the newest state of
	// any ghost when it went still (hasStill: some did).
	seq      uint64
	recTick  [statesPerGhost]gw.Tick
	recSeq   [statesPerGhost]uint64
	stillMax gw.Tick
	hasStill bool
	posed    []*interpGhost // still ghosts Pose wrote into, for Restore
	posing   bool           // a Pose ran since the last Restore
	free     []*interpGhost
	interp   []codec.Interpolation // by component ID
	target   []byte
	vals     []unsafe.Pointer
	stats    InterpolatorStats
	// base and baseTick unwrap the states' ticks near the frame's render
	// tick (gw.Tick.Unwrap with the floor taken once a frame).
	base     float64
	baseTick gw.Tick
}

// typePlan is what a frame needs of a ghost type, looked up once: where
// each component sits in a buffered state, its size, its arche ID in the
// client world and how it blends.
type typePlan struct {
	comps  []compPlan
	stride int // bytes of one buffered state: each component 8-byte aligned
	span   int // bytes from the first component to the end of the last
	// flat: a decoded snapshot holds a record of this type with the
	// components at the same offsets as a buffered state (checked on the
	// first record, and every record's last component against it), so a
	// record is compared and copied as one block.
	flat, checked bool
}

type compPlan struct {
	id   ecs.ID // in the client world
	size uintptr
	off  int
	in   *codec.Interpolation
}

// recoveryTicks is the time constant of the fade back from a wrong
// extrapolation.
const recoveryTicks = 3

// statesPerGhost is the ring size of a ghost's buffer: 64 ticks (1 s at
// 60 Hz) of states, far beyond any sensible interpolation delay.
const statesPerGhost = 64

type interpGhost struct {
	// What a visit reads comes first, in two cache lines.
	e    ecs.Entity
	plan *typePlan
	// buf holds statesPerGhost slots of plan.stride bytes (see state),
	// then the values written last frame (lastVals), then a frozen copy
	// of them that the display fades from after extrapolation
	// (fromVals), instead of jumping.
	buf []byte
	// ptrs are the entity's components (the type's, then Interpolated)
	// as of the world's layout version ptrsAt-1 (0: none): while the
	// version stays, no entity was created or removed, so the entity
	// lives and its values have not moved.
	ptrs   []unsafe.Pointer
	ptrsAt uint64
	// lastRT is the render tick of the last frame, to flag each jump
	// once.
	lastRT float64
	fade   float64 // weight of fromVals; 1 while extrapolating, 0 when done
	n      int     // states held
	head   int     // index of the newest state
	gone   gw.Tick // first tick missing from a complete snapshot, when isGone
	// teleAt is the tick of the newest state flagged tele (when hasTele):
	// a frame whose last render tick passed it looks for no jump.
	teleAt  gw.Tick
	top     uint8 // the slot of buf taken last
	hasTele bool
	shown   bool
	isGone  bool
	// still: the entity shows the newest state, a rest, exactly; until
	// another state arrives, frames and poses have nothing to write.
	// active: in Interpolator.active or activate; freed: returned to the
	// free list by this frame.
	still  bool
	active bool
	freed  bool
	// posed: Pose wrote into the entity, so Restore must write it back.
	posed    bool
	lateTele bool // a teleported state arrived behind the render tick

	g        components.Ghost
	fadeFrom float64 // render tick the fade's clock starts at
	fadeTime float64 // the fade's time constant in ticks: recoveryTicks, or a switch's
	stillSeq uint64  // the record Poses numbered above it ran while it was still
	// st is the ring of states, oldest to newest up to head. Each names
	// the slot of buf that holds its values, so a state equal to the one
	// before shares its slot instead of a copy. Slots are taken in turn
	// (top), so one comes round again only after statesPerGhost others,
	// when no state names it any more.
	st [statesPerGhost]ipEntry
	// poses[t%statesPerGhost] notes the state Pose used for the last
	// recorded prediction of tick t (used), when its tick is t.
	poses [statesPerGhost]poseNote
}

// ipEntry is one buffered state of a ghost.
type ipEntry struct {
	tick gw.Tick
	slot uint8
	tele bool // a teleport away from the state before
	rest bool // the server said the ghost rests at this state
}

// poseNote is what a recorded Pose of tick used: the state of tick used.
type poseNote struct{ tick, used gw.Tick }

// NewInterpolator returns an interpolator that spawns and despawns through
// the client register c. maxExtrapolation is the cap in ticks (0: none).
func NewInterpolator(c *ClientRegister, maxExtrapolation float64) (*Interpolator, error) {
	if !(maxExtrapolation >= 0 && maxExtrapolation <= 60) {
		return nil, fmt.Errorf("ghosts: max extrapolation %v outside 0..60 ticks", maxExtrapolation)
	}
	ip := &Interpolator{c: c, b: c.b, maxExt: maxExtrapolation}
	for i := 0; i < c.b.schema.NumComponents(); i++ {
		ip.interp = append(ip.interp, c.b.schema.Interpolation(codec.ComponentID(i)))
	}
	ip.plans = make([]typePlan, c.b.schema.NumGhostTypes())
	for t := range ip.plans {
		gt, _ := c.b.schema.GhostType(codec.GhostTypeID(t))
		pl := &ip.plans[t]
		for ci, comp := range gt.Components {
			size := c.b.sizes[comp]
			pl.comps = append(pl.comps, compPlan{id: c.b.types[t][ci], size: size, off: pl.stride, in: &ip.interp[comp]})
			pl.span = pl.stride + int(size)
			pl.stride += (int(size) + 7) &^ 7
		}
	}
	c.interp = ip
	return ip, nil
}

// Stats returns the counters.
func (ip *Interpolator) Stats() InterpolatorStats {
	st := ip.stats
	st.Buffered = len(ip.ghosts)
	return st
}

// find returns the index of ghost id in ip.ghosts, or where it would be
// inserted. It looks first just after the last one found, then further
// on in doubling steps, and searches the whole list only for an ID
// before it: records in ID order cost a comparison or two each.
func (ip *Interpolator) find(id components.GhostID) (int, bool) {
	ids := ip.ids
	lo, hi := 0, len(ids)
	if h := min(ip.hint+1, len(ids)); h == 0 || ids[h-1] < id {
		lo = h
		for step := 1; lo < len(ids) && ids[lo] < id; step *= 2 {
			next := lo + step
			if next >= len(ids) || ids[next] >= id {
				hi = min(next+1, len(ids))
				lo++
				break
			}
			lo = next + 1
		}
	} else {
		hi = h
	}
	i, ok := slices.BinarySearch(ids[lo:hi], id)
	ip.hint = lo + i
	return lo + i, ok
}

// insert puts ig at index i of the ghosts, as find said.
func (ip *Interpolator) insert(i int, ig *interpGhost) {
	ip.ghosts = slices.Insert(ip.ghosts, i, ig)
	ip.ids = slices.Insert(ip.ids, i, ig.g.ID)
}

// state returns the values of ig's i-th state.
func (ig *interpGhost) state(i int) []byte {
	k := int(ig.st[i].slot) * ig.plan.stride
	return ig.buf[k : k+ig.plan.stride]
}

// lastVals returns the values ig's entity was shown with last frame.
func (ig *interpGhost) lastVals() []byte {
	k := statesPerGhost * ig.plan.stride
	return ig.buf[k : k+ig.plan.stride]
}

// fromVals returns the values a fade from extrapolation starts from.
func (ig *interpGhost) fromVals() []byte {
	k := (statesPerGhost + 1) * ig.plan.stride
	return ig.buf[k : k+ig.plan.stride]
}

// Push buffers the state of the gi-th ghost of snap at snap.Tick. States
// older than the newest buffered one are ignored. A record that says
// the ghost rests (protocol.GhostState.Rest: a delta that changed
// nothing, or a full state of a ghost that did not change) does: shown
// past it, it holds without counting as extrapolation, and when it moves
// again the rest is taken to last until the tick before the new state,
// rather than blended across the quiet ticks the server did not send.
func (ip *Interpolator) Push(snap *protocol.Snapshot, gi int) {
	gs := &snap.Ghosts[gi]
	i, ok := ip.find(gs.ID)
	if !ok {
		ip.insert(i, ip.alloc(gs.Ghost))
		ip.wake(ip.ghosts[i])
	}
	ig := ip.ghosts[i]
	if ig.isGone && snap.Tick.After(ig.gone) {
		ig.isGone = false // present again after the tick it went missing
	}
	if ig.n > 0 && !snap.Tick.After(ig.st[ig.head].tick) {
		return
	}
	rest := gs.Rest
	if ig.still {
		ip.unstill(ig)
	}
	if ig.n > 0 && ig.st[ig.head].rest && !rest && snap.Tick.Sub(ig.st[ig.head].tick) > 1 {
		ip.advance(ig, snap.Tick.Add(-1), true, true)
	}
	// A record equal to the newest state notes the tick and shares the
	// state's values; a teleport belongs to the ghost: when any component
	// says so, the whole state steps.
	pl := ig.plan
	src := ip.record(pl, snap, gi)
	if ig.n > 0 && ip.sameAsNewest(ig, src, snap, gi) {
		ip.advance(ig, snap.Tick, rest, true)
	} else {
		prev := ig.head
		ip.advance(ig, snap.Tick, rest, false)
		state := ig.state(ig.head)
		if src != nil {
			copy(state, src)
		} else {
			for ci := range pl.comps {
				c := &pl.comps[ci]
				copy(state[c.off:c.off+int(c.size)], unsafe.Slice((*byte)(snap.Value(gi, ci)), c.size))
			}
		}
		if ig.n > 1 {
			before := ig.state(prev)
			for ci := range pl.comps {
				c := &pl.comps[ci]
				if c.in.Teleported(at(before, c.off), at(state, c.off)) {
					ig.st[ig.head].tele, ig.teleAt, ig.hasTele = true, snap.Tick, true
					break
				}
			}
		}
	}
	// A teleport the render tick has already passed (it arrived while the
	// ghost was extrapolated) jumps on the next frame.
	if ig.st[ig.head].tele && ig.shown && snap.Tick.Unwrap(ig.lastRT) <= ig.lastRT {
		ig.lateTele = true
	}
}

// advance makes room for a new newest state of tick: with the values of
// the newest state (same) or in a slot of its own, to be filled.
func (ip *Interpolator) advance(ig *interpGhost, tick gw.Tick, rest, same bool) {
	slot := ig.st[ig.head].slot
	if !same || ig.n == 0 {
		ig.top = (ig.top + 1) % statesPerGhost
		slot = ig.top
	}
	ig.head = (ig.head + 1) % statesPerGhost
	ig.n = min(ig.n+1, statesPerGhost)
	ig.st[ig.head].tick, ig.st[ig.head].slot = tick, slot
	ig.st[ig.head].rest, ig.st[ig.head].tele = rest, false
}

// record returns the values of the gi-th ghost of snap as one block laid
// out as a buffered state of pl, or nil when the snapshot does not hold
// them so (then each is read by Snapshot.Value).
func (ip *Interpolator) record(pl *typePlan, snap *protocol.Snapshot, gi int) []byte {
	if len(pl.comps) == 0 || pl.checked && !pl.flat {
		return nil
	}
	p := snap.Value(gi, 0)
	first := uintptr(p)
	if !pl.checked {
		pl.checked, pl.flat = true, true
		for ci := range pl.comps {
			if uintptr(snap.Value(gi, ci))-first != uintptr(pl.comps[ci].off) {
				pl.flat = false
				return nil
			}
		}
	} else if last := len(pl.comps) - 1; last > 0 && uintptr(snap.Value(gi, last))-first != uintptr(pl.comps[last].off) {
		return nil
	}
	return unsafe.Slice((*byte)(p), pl.span)
}

// sameAsNewest reports whether the gi-th ghost of snap, whose values are
// src when not nil (see record), has the values of ig's newest state.
func (ip *Interpolator) sameAsNewest(ig *interpGhost, src []byte, snap *protocol.Snapshot, gi int) bool {
	pl, newest := ig.plan, ig.state(ig.head)
	if src != nil { // padding included: unequal padding costs a copy, never a wrong state
		return bytes.Equal(newest[:len(src)], src)
	}
	for ci := range pl.comps {
		c := &pl.comps[ci]
		if !bytes.Equal(newest[c.off:c.off+int(c.size)], unsafe.Slice((*byte)(snap.Value(gi, ci)), c.size)) {
			return false
		}
	}
	return true
}

func (ip *Interpolator) alloc(g components.Ghost) *interpGhost {
	pl := &ip.plans[g.Type]
	for k, f := range ip.free {
		if f.plan.stride == pl.stride && cap(f.ptrs) == len(pl.comps)+1 {
			ip.free = append(ip.free[:k], ip.free[k+1:]...)
			*f = interpGhost{g: g, plan: pl, buf: f.buf, ptrs: f.ptrs}
			return f
		}
	}
	return &interpGhost{g: g, plan: pl, buf: make([]byte, pl.stride*(statesPerGhost+2)), ptrs: make([]unsafe.Pointer, 0, len(pl.comps)+1)}
}

// Gone notes that ghost id was missing from the complete snapshot of tick;
// it disappears when the render tick reaches that tick.
func (ip *Interpolator) Gone(id components.GhostID, tick gw.Tick) {
	if i, ok := ip.find(id); ok && !ip.ghosts[i].isGone {
		ip.ghosts[i].gone, ip.ghosts[i].isGone = tick, true
		ip.wake(ip.ghosts[i])
	}
}

// wake makes ig active from the next frame on.
func (ip *Interpolator) wake(ig *interpGhost) {
	if !ig.active {
		ig.active = true
		ip.activate = append(ip.activate, ig)
	}
}

// unstill takes a still ghost out of rest, before a new state changes
// its buffer: the record Poses that skipped it while it was still get
// their notes (the state each would have used: its newest at or before
// their tick, from a buffer that did not change meanwhile), and it
// catches up with the frames it skipped.
func (ip *Interpolator) unstill(ig *interpGhost) {
	ig.still = false
	ig.lastRT = ip.lastRT
	for slot := range statesPerGhost {
		if ip.recSeq[slot] <= ig.stillSeq {
			continue
		}
		tick := ip.recTick[slot]
		if i := ig.newestAt(tick); i >= 0 {
			ig.poses[slot].tick, ig.poses[slot].used = tick, ig.st[i].tick
		}
	}
	ip.wake(ig)
}

// newestAt returns the index of ig's newest state at or before tick, or
// -1.
func (ig *interpGhost) newestAt(tick gw.Tick) int {
	for k, i := 0, ig.head; k < ig.n; k, i = k+1, (i-1+statesPerGhost)%statesPerGhost {
		if !ig.st[i].tick.After(tick) {
			return i
		}
	}
	return -1
}

// Known reports whether ghost id has a state buffer (shown or not yet).
func (ip *Interpolator) Known(id components.GhostID) bool {
	_, ok := ip.find(id)
	return ok
}

// Update writes every interpolated ghost's components for the render tick
// rt, a continuous tick (gw.Tick.Unwrap: it keeps counting past 2³²,
// and the states' ticks are compared with it unwrapped), spawning and despawning as the render tick passes their first and
// missing ticks. frame is the frame's length in ticks, for the statistics.
// A ghost shown at rest is not visited until a state arrives for it (its
// Interpolated.Tick stays the frame it came to rest on), so a frame costs
// the moving ghosts, not all of them; sweepPerFrame still ghosts a frame
// are checked for an entity the game destroyed and for a rest since long
// ago (longAgo).
func (ip *Interpolator) Update(rt, frame float64) {
	if ip.posing { // what a Pose wrote goes before the frame: a ghost coming to rest leaves the lists Restore walks
		ip.Restore()
	}
	a := ip.b.world.Arche()
	ip.lastRT = rt
	now, _ := gw.TickAt(rt)
	ip.base, ip.baseTick = math.Floor(rt), now
	if ip.hasStill && age(ip.stillMax, now) > longAgo {
		ip.stillMax = now.Add(-longAgo) // no still ghost's newest state is later
	}
	for range min(sweepPerFrame, len(ip.ghosts)) {
		ip.sweep = (ip.sweep + 1) % len(ip.ghosts)
		ig := ip.ghosts[ip.sweep]
		if !ig.still {
			continue
		}
		if !a.Alive(ig.e) {
			ip.wake(ig)
		} else if age(ig.st[ig.head].tick, now) > longAgo {
			ig.st[ig.head].tick, ig.n = now.Add(-longAgo), 1
		}
	}
	if len(ip.activate) > 0 {
		ip.active = append(ip.active, ip.activate...)
		clear(ip.activate)
		ip.activate = ip.activate[:0]
		slices.SortFunc(ip.active, func(x, y *interpGhost) int { return cmp.Compare(x.g.ID, y.g.ID) })
	}
	kept, freed := ip.active[:0], false
	for _, ig := range ip.active {
		if ig.isGone && rt >= ig.gone.Unwrap(rt) || ig.shown && !ip.cached(ig) && !a.Alive(ig.e) {
			if ig.shown {
				ip.c.despawn(ig.g.ID)
				ip.stats.Despawned++
			}
			ig.freed, ig.active, freed = true, false, true
			ip.free = append(ip.free, ig)
			continue
		}
		if ig.n == 0 || !ig.shown && rt < ig.st[(ig.head-ig.n+1+statesPerGhost)%statesPerGhost].tick.Unwrap(rt) {
			kept = append(kept, ig)
			continue
		}
		if ig.still && !ig.isGone { // back at rest: a despawn it waited for was taken back
			ig.active = false
			continue
		}
		if ig.still { // at rest and shown so, waiting for its despawn: only the render tick moves on
			ig.lastRT = rt
			*(*components.Interpolated)(a.Get(ig.e, ip.b.Interpolated)) = components.Interpolated{Tick: rt}
			kept = append(kept, ig)
			continue
		}
		ip.show(ig, rt, frame)
		if ig.still {
			ig.stillSeq = ip.seq
			if h := ig.st[ig.head].tick; !ip.hasStill || h.After(ip.stillMax) {
				ip.stillMax, ip.hasStill = h, true
			}
			if !ig.isGone {
				ig.active = false
				continue
			}
		}
		kept = append(kept, ig)
	}
	clear(ip.active[len(kept):])
	ip.active = kept
	if freed { // alloc clears freed when it reuses one
		ip.ghosts = slices.DeleteFunc(ip.ghosts, func(ig *interpGhost) bool { return ig.freed })
		ip.ids = ip.ids[:len(ip.ghosts)]
		for i, ig := range ip.ghosts {
			ip.ids[i] = ig.g.ID
		}
	}
}

// longAgo is the age, in ticks, past which a ghost at rest has rested
// since "long ago": a frame's sweep moves its newest state's tick up to
// that age and forgets the older states, which nothing reads any more, so
// that every tick the interpolator compares stays within 2³¹ of the
// present (past that, wrapping ticks would read a state from months ago
// as one from the future).
const longAgo = 1 << 30

// sweepPerFrame is how many still ghosts a frame checks for an entity the
// game destroyed: 10,000 in under a second at 60 frames per second.
const sweepPerFrame = 256

// show blends and writes one ghost, creating its entity if needed.
func (ip *Interpolator) show(ig *interpGhost, rt, frame float64) {
	pl := ig.plan
	// a: newest state at or before rt; b: the one after it.
	ai := ig.head
	for k := 0; k < ig.n-1 && ip.unwrap(ig.st[ai].tick) > rt; k++ {
		ai = (ai - 1 + statesPerGhost) % statesPerGhost
	}
	var bi int
	var t float32
	extrapolated := false
	switch ta := ip.unwrap(ig.st[ai].tick); {
	case ta > rt: // before the oldest state: hold it
		bi, t = ai, 0
	case ai != ig.head: // interpolate
		bi = (ai + 1) % statesPerGhost
		t = float32((rt - ta) / float64(ig.st[bi].tick.Sub(ig.st[ai].tick)))
	case ta == rt || ig.st[ai].rest: // exactly the newest state, or past one at rest
		bi, t = ai, 0
	case ig.n > 1: // past the newest: extrapolate from the last two, capped
		extrapolated = true
		bi, ai = ai, (ai-1+statesPerGhost)%statesPerGhost
		over := rt - ta
		ip.stats.ExtrapolatedTicks += math.Min(over, frame)
		ip.stats.HeldTicks += max(0, math.Min(over-ip.maxExt, frame))
		capped := math.Min(over, ip.maxExt)
		ip.stats.MaxExtrapolation = math.Max(ip.stats.MaxExtrapolation, capped)
		t = float32(1 + capped/float64(ig.st[bi].tick.Sub(ig.st[ai].tick)))
	default:
		bi, t = ai, 1
		extrapolated = true
	}
	teleported := ai != bi && ig.st[bi].tele
	// The jump of a teleport shows on the first frame whose render tick
	// passed the teleported state (or the first after it arrived late);
	// only a ghost whose newest teleport the last frame had not passed
	// looks for it.
	jump := ig.lateTele && ig.shown
	ig.lateTele = false
	if ig.shown && ig.hasTele && ip.unwrap(ig.teleAt) > ig.lastRT {
		for k, i := 0, ig.head; k < ig.n; k, i = k+1, (i-1+statesPerGhost)%statesPerGhost {
			if st := ip.unwrap(ig.st[i].tick); st <= ig.lastRT {
				break
			} else if ig.st[i].tele && st <= rt {
				jump = true
				break
			}
		}
	}
	ig.lastRT = rt
	if jump {
		ip.stats.Teleports++
	}
	// Leaving extrapolation: fade from the last extrapolated value to the
	// true blend, the old value's weight decaying as exp(-Δ/recoveryTicks)
	// with the render ticks since the fade began (whatever the frame rate),
	// so a wrong guess slides back instead of jumping. A teleport ends it.
	fading := false
	switch {
	case jump:
		ig.fade = 0
	case extrapolated && ig.n > 1 && rt > ip.unwrap(ig.st[ig.head].tick):
		ig.fade, ig.fadeFrom, ig.fadeTime = 1, rt, recoveryTicks
	case ig.fade > 0 && ig.shown:
		if ig.fade == 1 { // the first frame with data again: freeze what was shown
			copy(ig.fromVals(), ig.lastVals())
		}
		ig.fade = math.Exp(-(rt - ig.fadeFrom) / ig.fadeTime)
		if ig.fade < 0.02 {
			ig.fade = 0
		} else {
			fading = true
		}
	}
	// The blend goes straight into last, what this frame shows; two
	// states that share their values (a record equal to the one before)
	// need no blend.
	out, sa, sb := ig.lastVals(), ig.state(ai), ig.state(bi)
	tt := t
	if teleported && extrapolated {
		tt = 1 // never extrapolate across a teleport
	}
	if ig.st[ai].slot == ig.st[bi].slot {
		copy(out, sa)
	} else {
		for ci := range pl.comps {
			c := &pl.comps[ci]
			c.in.Apply(at(sa, c.off), at(sb, c.off), at(out, c.off), tt, c.size, teleported)
		}
	}
	if fading {
		ip.target = append(ip.target[:0], out...)
		for ci := range pl.comps {
			c := &pl.comps[ci]
			c.in.Blend(at(ip.target, c.off), at(ig.fromVals(), c.off), at(out, c.off), float32(ig.fade))
		}
	}
	a := ip.b.world.Arche()
	shown := components.Interpolated{Tick: rt, Extrapolated: extrapolated, Teleported: jump}
	if !ig.shown {
		ip.vals = ip.vals[:0]
		for ci := range pl.comps {
			ip.vals = append(ip.vals, at(out, pl.comps[ci].off))
		}
		ig.e, ig.ptrsAt = ip.c.spawn(ig.g, ip.vals, false), 0
		ig.shown = true
		ip.stats.Spawned++
		*(*components.Interpolated)(a.Get(ig.e, ip.b.Interpolated)) = shown
	} else { // Update checked that the entity lives
		ip.write(a, ig, out)
		*(*components.Interpolated)(ig.ptrs[len(pl.comps)]) = shown
	}
	ig.still = ai == ig.head && bi == ai && ig.st[ai].rest && t == 0 && ig.fade == 0 && !jump && !ig.lateTele
}

// write copies the state st into ig's entity, which lives, and leaves
// ig.ptrs current.
func (ip *Interpolator) write(a *ecs.World, ig *interpGhost, st []byte) {
	comps := ig.plan.comps
	if !ip.cached(ig) {
		ig.ptrs = ig.ptrs[:0]
		for ci := range comps {
			ig.ptrs = append(ig.ptrs, a.GetUnchecked(ig.e, comps[ci].id))
		}
		ig.ptrs = append(ig.ptrs, a.GetUnchecked(ig.e, ip.b.Interpolated))
		ig.ptrsAt = ip.b.world.LayoutVersion() + 1
	}
	for ci := range comps {
		c := &comps[ci]
		copyValue(ig.ptrs[ci], at(st, c.off), c.size)
	}
}

// copyValue copies a component value of size bytes from src to dst as
// one move for the common small sizes (a call to memmove costs more than
// the copy), and with copy otherwise.
func copyValue(dst, src unsafe.Pointer, size uintptr) {
	switch size {
	case 4:
		*(*[4]byte)(dst) = *(*[4]byte)(src)
	case 8:
		*(*[8]byte)(dst) = *(*[8]byte)(src)
	case 12:
		*(*[12]byte)(dst) = *(*[12]byte)(src)
	case 16:
		*(*[16]byte)(dst) = *(*[16]byte)(src)
	default:
		copy(unsafe.Slice((*byte)(dst), size), unsafe.Slice((*byte)(src), size))
	}
}

// cached reports whether ig.ptrs hold its entity's components: the entity
// lived when they were taken and nothing was created or removed since.
func (ip *Interpolator) cached(ig *interpGhost) bool {
	return ig.ptrsAt == ip.b.world.LayoutVersion()+1
}

// unwrap is ig.st[i].tick.Unwrap(rt) for the render tick rt of the frame.
func (ip *Interpolator) unwrap(t gw.Tick) float64 {
	return ip.base + float64(t.Sub(ip.baseTick))
}

// Pose writes into every shown ghost, for a prediction of tick, where
// the server saw it at that tick: its state at tick when buffered, else the
// newest buffered before tick (its last known state), never where it is
// drawn (in the past by the interpolation delay, and moving frame to
// frame). A run of tick that counts (the first, or the replay of a
// correction) passes record, and Pose remembers which state it used; any
// other run (the determinism check's replays) uses the same state again,
// so it reproduces the run it checks. Ghosts without a state that old keep
// what they show. Restore puts back what the last Update showed; a Pose
// or an Update after a Pose without one restores first, so each Pose
// starts from what is drawn. It allocates nothing. A record run visits only the moving ghosts when
// every ghost shown at rest rests since tick or before (the common case:
// a prediction runs ahead of every state received); the others visit
// every ghost.
func (ip *Interpolator) Pose(tick gw.Tick, record bool) {
	if ip.posing {
		ip.Restore()
	}
	ip.posing = true
	slot := int(uint32(tick) % statesPerGhost)
	if record {
		ip.seq++
		ip.recTick[slot], ip.recSeq[slot] = tick, ip.seq
	}
	if record && (!ip.hasStill || !ip.stillMax.After(tick)) {
		for _, list := range [2][]*interpGhost{ip.active, ip.activate} {
			for _, ig := range list {
				ip.pose(ig, tick, slot, record)
			}
		}
		return
	}
	for _, ig := range ip.ghosts {
		ip.pose(ig, tick, slot, record)
	}
}

// pose is Pose for one ghost.
func (ip *Interpolator) pose(ig *interpGhost, tick gw.Tick, slot int, record bool) {
	if !ig.shown {
		return
	}
	// The latest record run of tick skipped this ghost at rest: it used
	// the newest state at or before tick of a buffer unchanged since.
	skipped := ig.still && ip.recTick[slot] == tick && ip.recSeq[slot] > ig.stillSeq
	noted := ig.poses[slot].tick == tick && !skipped
	// A ghost shown at rest is, at any tick from its rest on, where it is
	// drawn: note what was used, write nothing.
	if head := ig.st[ig.head].tick; ig.still && !head.After(tick) && (record || !noted || ig.poses[slot].used == head) {
		if record {
			ig.poses[slot].tick, ig.poses[slot].used = tick, head
		}
		return
	}
	i := -1
	if !record && noted {
		for k, j := 0, ig.head; k < ig.n; k, j = k+1, (j-1+statesPerGhost)%statesPerGhost {
			if ig.st[j].tick == ig.poses[slot].used {
				i = j
				break
			}
		}
	}
	if i < 0 {
		i = ig.newestAt(tick)
	}
	if i < 0 {
		return
	}
	if record {
		ig.poses[slot].tick, ig.poses[slot].used = tick, ig.st[i].tick
	}
	ip.put(ig, ig.state(i))
	if !ig.active && !ig.posed { // once per Restore however many ticks a replay poses
		ip.posed = append(ip.posed, ig)
	}
	ig.posed = true
}

// Restore writes back what the last Update showed, after a Pose. A ghost
// shown at rest that Pose left alone is not written: the prediction must
// not write the interpolated ghosts it is shown.
func (ip *Interpolator) Restore() {
	ip.posing = false
	for _, list := range [3][]*interpGhost{ip.active, ip.activate, ip.posed} {
		for _, ig := range list {
			if ig.shown && (ig.posed || !ig.still) {
				ip.put(ig, ig.lastVals())
				ig.posed = false
			}
		}
	}
	clear(ip.posed)
	ip.posed = ip.posed[:0]
}

// put writes the state st into a shown ghost's entity, if it still lives.
func (ip *Interpolator) put(ig *interpGhost, st []byte) {
	if a := ip.b.world.Arche(); ip.cached(ig) || a.Alive(ig.e) {
		ip.write(a, ig, st)
	}
}

// at returns a pointer to b[off]; off may be len(b) for a zero-size value
// stored last, which is never read or written through the pointer.
func at(b []byte, off int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b[off:])) }

// Release stops interpolating ghost id without despawning its entity (the
// client predicts it from now on) and reports whether id was buffered.
// What a Pose wrote is put back first, so the entity holds what was drawn.
func (ip *Interpolator) Release(id components.GhostID) bool {
	i, ok := ip.find(id)
	if !ok {
		return false
	}
	if ip.posing {
		ip.Restore()
	}
	ig := ip.ghosts[i]
	ip.ghosts = slices.Delete(ip.ghosts, i, i+1)
	ip.ids = slices.Delete(ip.ids, i, i+1)
	drop := func(list []*interpGhost) []*interpGhost {
		return slices.DeleteFunc(list, func(x *interpGhost) bool { return x == ig })
	}
	ip.active, ip.activate = drop(ip.active), drop(ip.activate)
	ig.freed, ig.active = true, false
	ip.free = append(ip.free, ig)
	return true
}

// Take starts interpolating ghost g, whose entity e the client predicted
// until now: its buffer is seeded with states (each a value per
// component of g's type, in schema order) at ticks, oldest first, and the
// display fades from e's present values to the interpolated ones with a
// time constant of fadeTicks render ticks, so the ghost slides back to
// where the interpolation shows it instead of jumping. It panics if e is
// dead or g is buffered already.
func (ip *Interpolator) Take(g components.Ghost, e ecs.Entity, ticks []gw.Tick, states [][]unsafe.Pointer, fadeTicks float64) {
	i, ok := ip.find(g.ID)
	if ok {
		panic("ghostreg: Take of a ghost the interpolator holds")
	}
	ig := ip.alloc(g)
	ip.insert(i, ig)
	pl := ig.plan
	for k, tick := range ticks {
		prev := ig.head
		ip.advance(ig, tick, false, false)
		state := ig.state(ig.head)
		for ci := range pl.comps {
			c := &pl.comps[ci]
			copy(state[c.off:c.off+int(c.size)], unsafe.Slice((*byte)(states[k][ci]), c.size))
		}
		// A state equal to the tick's before rests, as the server's
		// record would have said: the server sends nothing more of a
		// ghost its client holds at rest, and without the mark the
		// interpolation would extrapolate past it, held at the cap.
		if k > 0 && tick.Sub(ticks[k-1]) == 1 && bytes.Equal(state, ig.state(prev)) {
			ig.st[ig.head].rest = true
		}
	}
	a := ip.b.world.Arche()
	for ci := range pl.comps {
		c := &pl.comps[ci]
		copy(ig.lastVals()[c.off:c.off+int(c.size)], unsafe.Slice((*byte)(a.Get(e, c.id)), c.size))
	}
	ig.e, ig.ptrsAt, ig.shown, ig.lastRT = e, 0, true, ip.lastRT
	ig.fade, ig.fadeFrom, ig.fadeTime = 1, ip.lastRT, max(fadeTicks, 1e-3)
	ip.wake(ig)
}
