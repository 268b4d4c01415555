package ghostreg

import (
	"slices"
	"sort"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// ClientStats counts a client's ghost bookkeeping.
type ClientStats struct {
	Spawned, Despawned uint64
	Live               int
	// Unresolved counts ghost records dropped because they came without
	// an identity this client knew.
	Unresolved uint64
	// BaselineMissing counts delta records dropped because this client
	// did not hold the ghost at their baseline tick. The server encodes
	// against snapshots the client acknowledged, which it applied, so
	// this counts only a server that breaks the protocol.
	BaselineMissing uint64
	// ValueRefused counts delta records dropped because a value coded
	// relative to its baseline decoded out of its field's range: a
	// server breaking the protocol, too.
	ValueRefused uint64
}

// ClientRegister maps ghost IDs to local entities and creates or destroys them from
// snapshots. The ghosts it predicts (see [ClientRegister.Predicts]) get
// [components.Predicted], and those this connection owns among them
// [components.InputHeader] and the input type too, as on the server; all
// others are [components.Interpolated].
type ClientRegister struct {
	b      *Binding
	me     components.ConnID
	ghosts []clientGhost // sorted by ID
	ids    []ecs.ID
	seen   []components.GhostID
	gone   []components.GhostID
	vals   []unsafe.Pointer
	interp *Interpolator
	stats  ClientStats
	// bases holds, per ghost, its values in the accepted snapshots that
	// held it (see states): what a delta record is decoded against.
	bases map[components.GhostID]*states
	slabs []*stateSlabs // by ghost type: the rings of bases
	// modes holds the ghosts switched from their type's prediction mode
	// on this client (SetPredicted): true predicted, false interpolated.
	modes map[components.GhostID]bool
	// OnSpawn, if set, is called after a ghost's entity is created, with
	// its replicated components set, so the game can add its own
	// components (render state, predicted-only state).
	OnSpawn func(w *gw.World, e ecs.Entity, g components.Ghost)
	// OnDespawn, if set, is called before a ghost's entity is removed.
	OnDespawn func(w *gw.World, e ecs.Entity, g components.Ghost)
}

type clientGhost struct {
	id        components.GhostID
	e         ecs.Entity
	typ       codec.GhostTypeID
	predicted bool
}

// NewClientRegister returns an empty client register.
func NewClientRegister(b *Binding) *ClientRegister {
	c := &ClientRegister{b: b, bases: map[components.GhostID]*states{}, modes: map[components.GhostID]bool{}}
	for t := range b.schema.NumGhostTypes() {
		gt, _ := b.schema.GhostType(codec.GhostTypeID(t))
		size := 0
		for _, cid := range gt.Components {
			size += (b.schema.ComponentSize(cid) + 7) &^ 7
		}
		c.slabs = append(c.slabs, newStateSlabs(size))
	}
	return c
}

// Complete fills in the components that snap's delta records left out
// from the state of each ghost at its baseline, decodes the values coded
// relative to that state, and keeps every record's state for later
// records (those of the last protocol.RelativeWindow ticks and the
// newest); it drops the despawned ghosts' states. Call it once per
// accepted snapshot, in tick order, before anything reads snap's values.
// A record whose baseline this client does not hold (no state of the
// ghost at or after the baseline tick, or of another type; for relative
// values, no state of the baseline tick itself) is dropped, never guessed,
// and counted in ClientStats.BaselineMissing; one whose relative values
// decode out of range is dropped and counted in ClientStats.ValueRefused.
// Steady state it allocates nothing; a new ghost allocates its
// bookkeeping, and the rings of its states come from slabs of 64.
func (c *ClientRegister) Complete(snap *protocol.Snapshot) {
	kept := snap.Ghosts[:0]
	for gi := range snap.Ghosts {
		gs := &snap.Ghosts[gi]
		gt, _ := c.b.schema.GhostType(codec.GhostTypeID(gs.Type))
		st := c.bases[gs.ID]
		var base []byte
		if gs.HasBase {
			ok := st != nil && st.typ == gs.Type
			switch {
			case !ok:
			case gs.Relative: // the values at the baseline itself
				base, ok = st.at(gs.Base)
			default: // left-out components did not change since the baseline: any later state holds them
				var t gw.Tick
				t, base = st.newest()
				ok = !t.Before(gs.Base)
			}
			if !ok {
				c.stats.BaselineMissing++
				continue
			}
			if gs.Relative {
				if err := snap.Resolve(gi, base); err != nil {
					c.stats.ValueRefused++
					continue
				}
			}
		}
		if st == nil || st.typ != gs.Type {
			if st != nil {
				st.release(c.slabs[st.typ])
			}
			st = &states{typ: gs.Type, size: c.slabs[gs.Type][0].size - 4}
			c.bases[gs.ID] = st
		}
		off := 0
		for ci, cid := range gt.Components {
			size := c.b.schema.ComponentSize(cid)
			if gs.Present&(1<<ci) == 0 {
				copy(unsafe.Slice((*byte)(snap.Value(gi, ci)), size), base[off:off+size])
			}
			off += (size + 7) &^ 7
		}
		next := st.next(snap.Tick, c.slabs[gs.Type])
		off = 0
		for ci, cid := range gt.Components {
			size := c.b.schema.ComponentSize(cid)
			copy(next[off:off+size], unsafe.Slice((*byte)(snap.Value(gi, ci)), size))
			off += (size + 7) &^ 7
		}
		kept = append(kept, *gs)
	}
	snap.Ghosts = kept
	for _, id := range snap.Despawned {
		if st := c.bases[id]; st != nil {
			st.release(c.slabs[st.typ])
			delete(c.bases, id)
		}
	}
}

// SetConn sets this client's connection ID, which decides ownership.
func (c *ClientRegister) SetConn(id components.ConnID) { c.me = id }

// Binding returns the binding the register was made with.
func (c *ClientRegister) Binding() *Binding { return c.b }

// Conn returns this client's connection ID (0 before the welcome).
func (c *ClientRegister) Conn() components.ConnID { return c.me }

// Stats returns the counters.
func (c *ClientRegister) Stats() ClientStats {
	st := c.stats
	st.Live = len(c.ghosts)
	return st
}

func (c *ClientRegister) find(id components.GhostID) int {
	return sort.Search(len(c.ghosts), func(i int) bool { return c.ghosts[i].id >= id })
}

// Entity returns the local entity of ghost id. A ghost whose entity the
// game destroyed is forgotten (and spawned again by the next snapshot).
func (c *ClientRegister) Entity(id components.GhostID) (ecs.Entity, bool) {
	if i := c.find(id); i < len(c.ghosts) && c.ghosts[i].id == id {
		if c.b.world.Arche().Alive(c.ghosts[i].e) {
			return c.ghosts[i].e, true
		}
		c.ghosts = slices.Delete(c.ghosts, i, i+1)
		c.stats.Despawned++
	}
	return ecs.Entity{}, false
}

// Interpolator returns the client's interpolator, or nil.
func (c *ClientRegister) Interpolator() *Interpolator { return c.interp }

// Owned reports whether this client owns ghost g: its input drives it.
func (c *ClientRegister) Owned(g *components.Ghost) bool { return c.me != 0 && g.Owner == c.me }

// Predicts reports whether this client predicts ghost g, by its type's
// [codec.PredictionMode]: always for PredictAll, when owned for
// PredictOwner, never for PredictNone. A ghost of an unknown type counts
// as PredictOwner.
func (c *ClientRegister) Predicts(g *components.Ghost) bool {
	if len(c.modes) > 0 && g.ID != 0 {
		if on, ok := c.modes[g.ID]; ok {
			return on
		}
	}
	gt, _ := c.b.schema.GhostType(codec.GhostTypeID(g.Type))
	switch gt.Mode {
	case codec.PredictAll:
		return true
	case codec.PredictNone:
		return false
	}
	return c.Owned(g)
}

// Spawn creates the entity for the gi-th ghost of snap (which must not
// exist yet) with its replicated values, its identity and its mode, calls
// OnSpawn and returns the entity. It panics if the world is locked.
func (c *ClientRegister) Spawn(snap *protocol.Snapshot, gi int) ecs.Entity {
	gs := &snap.Ghosts[gi]
	c.vals = c.vals[:0]
	for ci := range c.b.types[gs.Type] {
		c.vals = append(c.vals, snap.Value(gi, ci))
	}
	return c.spawn(gs.Ghost, c.vals, c.Predicts(&gs.Ghost))
}

// spawn creates a ghost's entity from component values in schema order.
func (c *ClientRegister) spawn(g components.Ghost, vals []unsafe.Pointer, predicted bool) ecs.Entity {
	a := c.b.world.Arche()
	c.ids = append(c.ids[:0], c.b.types[g.Type]...)
	c.ids = append(c.ids, c.b.Ghost)
	if predicted {
		c.ids = append(c.ids, c.b.Predicted)
		// Only the owner's input drives a ghost, as on the server: the
		// game's systems reading input skip the others.
		if c.Owned(&g) {
			c.ids = append(c.ids, c.b.Header)
			if c.b.HasInput {
				c.ids = append(c.ids, c.b.Input)
			}
		}
	} else {
		c.ids = append(c.ids, c.b.Interpolated)
	}
	e := a.NewEntity(c.ids...)
	*(*components.Ghost)(a.Get(e, c.b.Ghost)) = g
	c.write(e, codec.GhostTypeID(g.Type), vals)
	i := c.find(g.ID)
	c.ghosts = slices.Insert(c.ghosts, i, clientGhost{id: g.ID, e: e, typ: codec.GhostTypeID(g.Type), predicted: predicted})
	c.stats.Spawned++
	if c.OnSpawn != nil {
		c.OnSpawn(c.b.world, e, g)
	}
	return e
}

// SetPredicted switches ghost id, whose entity e this client holds, to
// predicted (on) or interpolated: its markers change (Predicted or
// Interpolated) and from now on Predicts says so, whatever its type's
// mode, until the ghost is despawned. The caller moves its state between
// the interpolator and the history. It reports false, changing nothing,
// when the register does not hold id.
func (c *ClientRegister) SetPredicted(id components.GhostID, on bool) (e ecs.Entity, ok bool) {
	i := c.find(id)
	if i == len(c.ghosts) || c.ghosts[i].id != id {
		return e, false
	}
	g := &c.ghosts[i]
	c.modes[id] = on
	if g.predicted == on {
		return g.e, true
	}
	g.predicted = on
	a := c.b.world.Arche()
	if on {
		a.Exchange(g.e, []ecs.ID{c.b.Predicted}, []ecs.ID{c.b.Interpolated})
	} else {
		a.Exchange(g.e, []ecs.ID{c.b.Interpolated}, []ecs.ID{c.b.Predicted})
	}
	return g.e, true
}

// Adopt makes e, a predicted spawn of this client (an entity with the
// ghost type's components, a components.Ghost of ID 0 and the Predicted
// marker), the entity of ghost g, which the server has just confirmed: its
// identity is set and later snapshots write into it. It panics if e is
// dead or lacks a components.Ghost, and if g's ID is already known.
func (c *ClientRegister) Adopt(e ecs.Entity, g components.Ghost) {
	a := c.b.world.Arche()
	*(*components.Ghost)(a.Get(e, c.b.Ghost)) = g
	i := c.find(g.ID)
	if i < len(c.ghosts) && c.ghosts[i].id == g.ID {
		panic("ghostreg: Adopt of a known ghost")
	}
	c.ghosts = slices.Insert(c.ghosts, i, clientGhost{id: g.ID, e: e, typ: codec.GhostTypeID(g.Type), predicted: true})
	c.stats.Spawned++
}

// Write copies the gi-th ghost's replicated values from snap into e.
func (c *ClientRegister) Write(e ecs.Entity, snap *protocol.Snapshot, gi int) {
	gs := &snap.Ghosts[gi]
	c.vals = c.vals[:0]
	for ci := range c.b.types[gs.Type] {
		c.vals = append(c.vals, snap.Value(gi, ci))
	}
	c.write(e, codec.GhostTypeID(gs.Type), c.vals)
}

// write copies component values in schema order into e.
func (c *ClientRegister) write(e ecs.Entity, t codec.GhostTypeID, vals []unsafe.Pointer) {
	a := c.b.world.Arche()
	gt, _ := c.b.schema.GhostType(t)
	for ci, id := range c.b.types[t] {
		size := c.b.sizes[gt.Components[ci]]
		copy(unsafe.Slice((*byte)(a.Get(e, id)), size), unsafe.Slice((*byte)(vals[ci]), size))
	}
}

// despawn removes ghost id's entity (calling OnDespawn first) and forgets
// it.
func (c *ClientRegister) despawn(id components.GhostID) {
	i := c.find(id)
	if i == len(c.ghosts) || c.ghosts[i].id != id {
		return
	}
	g := c.ghosts[i]
	c.ghosts = slices.Delete(c.ghosts, i, i+1)
	delete(c.modes, id)
	c.stats.Despawned++
	a := c.b.world.Arche()
	if !a.Alive(g.e) {
		return
	}
	if c.OnDespawn != nil {
		c.OnDespawn(c.b.world, g.e, *(*components.Ghost)(a.Get(g.e, c.b.Ghost)))
	}
	if a.Alive(g.e) {
		a.RemoveEntity(g.e)
	}
}

// Compare reports whether the values the history recorded for e at tick
// have the same wire codes as the gi-th ghost of snap: whether the
// prediction at that tick was right. The type's server-owned components
// are not compared: the client does not predict them (see TakeOwned).
// When not right, diff names the first component and field that differ,
// with the predicted value as A and the server's as B. recorded is false
// (and the rest meaningless) when the history does not hold e at tick.
func (c *ClientRegister) Compare(h *gw.History, tick gw.Tick, e ecs.Entity, snap *protocol.Snapshot, gi int) (diff codec.FieldDiff, equal, recorded bool) {
	gs := &snap.Ghosts[gi]
	gt, _ := c.b.schema.GhostType(codec.GhostTypeID(gs.Type))
	equal = true
	for ci, id := range c.b.types[gs.Type] {
		if gt.Owned(ci) {
			continue
		}
		p, err := h.Lookup(tick, e, id)
		if err != nil || p == nil {
			return codec.FieldDiff{}, false, false
		}
		if equal {
			diff, equal = c.b.rt.Diff(c.b.schema, gt.Components[ci], p, snap.Value(gi, ci))
		}
	}
	return diff, equal, true
}

// TakeOwned writes the values of the server-owned components of the gi-th
// ghost of snap (codec.SchemaBuilder.ServerOwned) into e, its predicted
// entity: the client takes them as they arrive, without comparison. It
// calls changed, when not nil, for each component whose wire codes it
// changed, with the difference (the client's value as A, the server's as
// B), and reports whether any changed. A type without server-owned
// components costs one test.
func (c *ClientRegister) TakeOwned(e ecs.Entity, snap *protocol.Snapshot, gi int, changed func(codec.FieldDiff)) bool {
	gs := &snap.Ghosts[gi]
	gt, _ := c.b.schema.GhostType(codec.GhostTypeID(gs.Type))
	if gt.ServerOwned == 0 {
		return false
	}
	a := c.b.world.Arche()
	took := false
	for ci, id := range c.b.types[gs.Type] {
		if !gt.Owned(ci) {
			continue
		}
		cid := gt.Components[ci]
		dst, src := a.Get(e, id), snap.Value(gi, ci)
		d, same := c.b.rt.Diff(c.b.schema, cid, dst, src)
		if same {
			continue
		}
		took = true
		if changed != nil {
			changed(d)
		}
		size := c.b.sizes[cid]
		copy(unsafe.Slice((*byte)(dst), size), unsafe.Slice((*byte)(src), size))
	}
	return took
}

// Resolve completes the records of snap sent without their identity
// (owner and spawn tick) from the ghosts this client knows, predicted or
// interpolated, and drops those of ghosts it does not know (counted in
// ClientStats.Unresolved): a ghost whose entity the game destroyed comes
// back only when the server sends its identity again. A record that
// carries the identity of a ghost this client knows under another owner
// (the server gave it to a player's new connection) updates the owner it
// holds (see reown). It is idempotent.
func (c *ClientRegister) Resolve(snap *protocol.Snapshot) {
	kept := snap.Ghosts[:0]
	for _, gs := range snap.Ghosts {
		if !gs.Identity {
			g, ok := c.known(gs.ID)
			if !ok || g.Type != gs.Type {
				c.stats.Unresolved++
				continue
			}
			gs.Owner, gs.Spawned, gs.Identity = g.Owner, g.Spawned, true
		} else {
			c.reown(&gs.Ghost)
		}
		kept = append(kept, gs)
	}
	snap.Ghosts = kept
}

// known returns the identity of ghost id, when this client has it.
func (c *ClientRegister) known(id components.GhostID) (components.Ghost, bool) {
	if i := c.find(id); i < len(c.ghosts) && c.ghosts[i].id == id {
		if a := c.b.world.Arche(); a.Alive(c.ghosts[i].e) {
			return *(*components.Ghost)(a.Get(c.ghosts[i].e, c.b.Ghost)), true
		}
	}
	if c.interp != nil {
		if i, ok := c.interp.find(id); ok {
			return c.interp.ghosts[i].g, true
		}
	}
	return components.Ghost{}, false
}

// Despawn applies the despawn records of snap: a predicted ghost is
// despawned now (OnDespawn, then removal); an interpolated one is handed
// to the Interpolator, which removes it when the render tick reaches the
// snapshot's tick (without an Interpolator it goes now too). A record of
// a ghost this client does not know is ignored (IDs are never reused). It
// panics if the world is locked.
func (c *ClientRegister) Despawn(snap *protocol.Snapshot) {
	for _, id := range snap.Despawned {
		i := c.find(id)
		interpolated := c.interp != nil && c.interp.Known(id)
		if i < len(c.ghosts) && c.ghosts[i].id == id && (c.ghosts[i].predicted || !interpolated) {
			c.despawn(id)
		}
		if interpolated {
			c.interp.Gone(id, snap.Tick)
		}
	}
}

// Each calls fn for every ghost in ID order with its entity and whether it
// is predicted.
func (c *ClientRegister) Each(fn func(id components.GhostID, e ecs.Entity, predicted bool)) {
	for _, g := range c.ghosts {
		fn(g.id, g.e, g.predicted)
	}
}
