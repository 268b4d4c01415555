package ghostreg

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
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
}

type serverGhost struct {
	id    components.GhostID
	e     ecs.Entity
	typ   codec.GhostTypeID
	owner components.ConnID
	spawn gw.Tick
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
	s.ghosts = append(s.ghosts, serverGhost{id: g.ID, e: e, typ: t, owner: owner, spawn: g.Spawned})
	return g.ID, nil
}

// Despawn stops replicating the ghost of entity e (clients despawn it at
// their next complete snapshot) and removes its Ghost component if e is
// alive. It reports whether e was a ghost. Destroying the entity without
// Despawn works too: dead ghosts are dropped at the next snapshot.
func (s *ServerRegister) Despawn(e ecs.Entity) bool {
	for i, g := range s.ghosts {
		if g.e == e {
			s.ghosts = append(s.ghosts[:i], s.ghosts[i+1:]...)
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
		}
	}
	s.ghosts = kept
}

// Quantize rounds every ghost's replicated components to what the wire
// carries. The server runs it at the end of each tick's prediction so a
// client that predicts with the same inputs gets bit-identical state.
func (s *ServerRegister) Quantize() {
	s.prune()
	for _, g := range s.ghosts {
		s.b.Quantize(g.e, g.typ)
	}
}

// WriteSnapshot adds the ghosts relevant to conn to sw: the ghosts conn
// owns first, then the others in ID order, as many as fit. It returns how
// many were left out for lack of room.
func (s *ServerRegister) WriteSnapshot(sw *protocol.SnapshotWriter, conn components.ConnID) (left int) {
	s.prune()
	a := s.b.world.Arche()
	for pass := 0; pass < 2; pass++ {
		for _, g := range s.ghosts {
			if (g.owner == conn) != (pass == 0) {
				continue
			}
			ghost := *(*components.Ghost)(a.Get(g.e, s.b.Ghost))
			if !sw.AddGhost(ghost, s.b.valuesOf(g.e, g.typ)) {
				left++
			}
		}
	}
	return left
}
