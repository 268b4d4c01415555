package ghostreg

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"sort"

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
type ServerRegister struct {
	b      *Binding
	next   components.GhostID
	ghosts []serverGhost // sorted by ID
	lost   uint64
	views  []*View // by slot; nil for a free one
	// gen counts changes to the ghosts or their state (spawn, despawn,
	// quantize): the encoding below is current while it has not moved.
	gen uint64
	// Each ghost's values encoded once per tick for every connection:
	// ghost i's bits are encOff[i]..encOff[i+1] of encData.
	enc     bitstream.Writer
	encData []byte
	encOff  []int
	encTick gw.Tick
	encGen  uint64
	encOK   bool
	st      codec.Stream
}

type serverGhost struct {
	id    components.GhostID
	e     ecs.Entity
	typ   codec.GhostTypeID
	owner components.ConnID
	spawn gw.Tick
	per   []viewGhost // per view slot
}

// NewServerRegister returns an empty ghost register for the binding's world.
func NewServerRegister(b *Binding) *ServerRegister { return &ServerRegister{b: b} }

// Binding returns the binding the register was made with.
func (s *ServerRegister) Binding() *Binding { return s.b }

// Spawn makes e a ghost of type t owned by owner (0: the server) and
// returns its ID. It adds the [components.Ghost] identity and the
// [components.Predicted] marker (the server simulates every ghost in the
// prediction stages) and, for an owned ghost, a [components.InputHeader]
// and the schema's input type, which the server rewrites every tick. It errors when e is dead, already a
// ghost, or lacks a replicated component of t (the error names it). It
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
	s.gen++
	s.ghosts = append(s.ghosts, serverGhost{id: g.ID, e: e, typ: t, owner: owner, spawn: g.Spawned, per: make([]viewGhost, len(s.views))})
	return g.ID, nil
}

// Despawn stops replicating the ghost of entity e (clients that were told
// about it get a despawn record until they acknowledge one) and removes its Ghost component if e is
// alive. It reports whether e was a ghost. Destroying the entity without
// Despawn works too: dead ghosts are dropped at the next snapshot.
func (s *ServerRegister) Despawn(e ecs.Entity) bool {
	for i, g := range s.ghosts {
		if g.e == e {
			s.gone(&g)
			s.ghosts = append(s.ghosts[:i], s.ghosts[i+1:]...)
			s.gen++
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
	if i < len(s.ghosts) && s.ghosts[i].id == id && s.live(&s.ghosts[i]) {
		return s.ghosts[i].e, true
	}
	return ecs.Entity{}, false
}

// Owned appends the live entities owned by conn to dst, in ID order: a
// ghost destroyed without Despawn is left out even before it is dropped,
// so callers can use every entity returned.
func (s *ServerRegister) Owned(dst []ecs.Entity, conn components.ConnID) []ecs.Entity {
	for i := range s.ghosts {
		if g := &s.ghosts[i]; g.owner == conn && s.live(g) {
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
	for i := range s.ghosts {
		if g := &s.ghosts[i]; s.live(g) {
			kept = append(kept, *g)
		} else {
			s.lost++
			s.gen++
			s.gone(g)
		}
	}
	s.ghosts = kept
}

// encode drops dead ghosts and encodes every ghost's values for tick,
// unless that was done already and nothing changed since: once per tick
// however many connections the server sends to. (Nothing runs between the
// connections' snapshots of a tick that could kill a ghost.)
func (s *ServerRegister) encode(tick gw.Tick) {
	if s.encOK && s.encTick == tick && s.encGen == s.gen {
		return
	}
	s.prune()
	s.enc.Reset(s.encData[:0])
	s.encOff = s.encOff[:0]
	for i := range s.ghosts {
		g := &s.ghosts[i]
		s.encOff = append(s.encOff, s.enc.BitLen())
		protocol.EncodeValues(s.b.schema, &s.st, &s.enc, g.typ, s.b.valuesOf(g.e, g.typ))
	}
	s.encOff = append(s.encOff, s.enc.BitLen())
	s.encData = s.enc.Bytes()
	s.encTick, s.encGen, s.encOK = tick, s.gen, true
}

// gone tells every view that ghost g stopped replicating.
func (s *ServerRegister) gone(g *serverGhost) {
	for _, v := range s.views {
		if v != nil {
			v.removed(g)
		}
	}
}

// find returns the index of ghost id in s.ghosts.
func (s *ServerRegister) find(id components.GhostID) (int, bool) {
	i := sort.Search(len(s.ghosts), func(i int) bool { return s.ghosts[i].id >= id })
	return i, i < len(s.ghosts) && s.ghosts[i].id == id
}

// Quantize rounds every ghost's replicated components to what the wire
// carries. The server runs it at the end of each tick's prediction so a
// client that predicts with the same inputs gets bit-identical state.
func (s *ServerRegister) Quantize() {
	s.prune()
	s.gen++
	for _, g := range s.ghosts {
		s.b.Quantize(g.e, g.typ)
	}
}

// WriteSnapshot fills sw, begun for tick, for v's connection: first the
// despawn records v has not acknowledged, then ghosts by priority within
// the writer's budget. Every ghost's priority grows by its importance
// each call until it is sent; the ghosts the connection owns come first,
// then those whose identity it has not acknowledged (spawns), then the
// rest by priority, highest first (ties by ID). It returns how many ghosts
// were deferred to a later snapshot for lack of room. The ghosts' values
// are encoded once per tick (the first call of a tick, or after a Quantize,
// Spawn or Despawn) and spliced bit by bit into each connection's
// snapshot; per call the cost is a map lookup and an importance call per
// ghost, a sort of the ghosts and a copy of the bits sent.
func (s *ServerRegister) WriteSnapshot(sw *protocol.SnapshotWriter, v *View, tick gw.Tick) (deferred int) {
	s.encode(tick)
	rec := &v.sent[uint32(tick)%sentRing]
	rec.tick, rec.valid = tick, true
	rec.idents, rec.despawns = rec.idents[:0], rec.despawns[:0]
	for _, id := range v.despawns {
		if !sw.Despawn(id) {
			v.stats.DespawnsDeferred += uint64(len(v.despawns) - len(rec.despawns))
			break
		}
		rec.despawns = append(rec.despawns, id)
	}
	slices.Sort(rec.despawns)
	v.stats.Despawns += uint64(len(rec.despawns))
	v.cand = v.cand[:0]
	for i := range s.ghosts {
		g := &s.ghosts[i]
		vg := &g.per[v.slot]
		imp := float32(1)
		if v.Importance != nil {
			if imp = v.Importance(g.e); !(imp >= MinImportance) { // NaN too
				imp = MinImportance
			}
		}
		vg.priority += imp
		class := classOther
		switch {
		case g.owner == v.conn:
			class = classOwned
		case !vg.known:
			class = classSpawn
		}
		v.cand = append(v.cand, candidate{id: g.id, i: i, class: class, priority: vg.priority})
	}
	slices.SortFunc(v.cand, func(x, y candidate) int {
		if c := cmp.Compare(x.class, y.class); c != 0 {
			return c
		}
		if c := cmp.Compare(y.priority, x.priority); c != 0 {
			return c
		}
		return cmp.Compare(x.id, y.id)
	})
	for k, c := range v.cand {
		g := &s.ghosts[c.i]
		vg := &g.per[v.slot]
		ghost := components.Ghost{ID: g.id, Type: uint16(g.typ), Owner: g.owner, Spawned: g.spawn}
		if !sw.AddEncoded(ghost, !vg.known, s.encData, s.encOff[c.i], s.encOff[c.i+1]-s.encOff[c.i]) {
			deferred = len(v.cand) - k // the writer is full: every later ghost waits too
			break
		}
		vg.priority, vg.sent = 0, true
		if !vg.known {
			rec.idents = append(rec.idents, g.id)
			v.stats.Identities++
		}
	}
	v.stats.Deferred += uint64(deferred)
	return deferred
}
