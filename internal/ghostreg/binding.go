package ghostreg

import (
	"fmt"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// Binding maps a [codec.Schema] onto one world: the arche ID of every
// replicated component (arche numbers types per world, in registration
// order, so the wire cannot use them) and of ghostwire's own components.
type Binding struct {
	world        *gw.World
	schema       *codec.Schema
	ids          []ecs.ID // by codec.ComponentID
	sizes        []uintptr
	types        [][]ecs.ID // arche IDs per ghost type, in schema order
	Ghost        ecs.ID
	Predicted    ecs.ID
	Interpolated ecs.ID
	// Header is the ID of components.InputHeader; Input the ID of the
	// schema's input type, when HasInput.
	Header   ecs.ID
	Input    ecs.ID
	HasInput bool
	rt       codec.Coder
	values   []unsafe.Pointer
}

// Bind registers the schema's component types with the world's arche
// world and returns the binding.
func Bind(w *gw.World, s *codec.Schema) *Binding {
	a := w.Arche()
	b := &Binding{
		world:        w,
		schema:       s,
		Ghost:        ecs.ComponentID[components.Ghost](a),
		Predicted:    ecs.ComponentID[components.Predicted](a),
		Interpolated: ecs.ComponentID[components.Interpolated](a),
		Header:       ecs.ComponentID[components.InputHeader](a),
	}
	if t := s.InputType(); t != nil {
		b.Input, b.HasInput = ecs.TypeID(a, t), true
	}
	for i := 0; i < s.NumComponents(); i++ {
		t := s.ComponentType(codec.ComponentID(i))
		b.ids = append(b.ids, ecs.TypeID(a, t))
		b.sizes = append(b.sizes, t.Size())
	}
	for i := 0; i < s.NumGhostTypes(); i++ {
		gt, _ := s.GhostType(codec.GhostTypeID(i))
		ids := make([]ecs.ID, len(gt.Components))
		for j, c := range gt.Components {
			ids[j] = b.ids[c]
		}
		b.types = append(b.types, ids)
	}
	return b
}

// Schema returns the bound schema.
func (b *Binding) Schema() *codec.Schema { return b.schema }

// World returns the bound world.
func (b *Binding) World() *gw.World { return b.world }

// ComponentIDs returns the arche IDs of a ghost type's replicated
// components in schema order; ok is false for an unknown type.
func (b *Binding) ComponentIDs(t codec.GhostTypeID) (ids []ecs.ID, ok bool) {
	if int(t) >= len(b.types) {
		return nil, false
	}
	return b.types[t], true
}

// checkComponents returns an error naming the first replicated component
// of type t that e lacks.
func (b *Binding) checkComponents(e ecs.Entity, t codec.GhostTypeID) error {
	ids, ok := b.ComponentIDs(t)
	if !ok {
		return fmt.Errorf("ghosts: ghost type %d outside 0..%d", t, len(b.types)-1)
	}
	a := b.world.Arche()
	gt, _ := b.schema.GhostType(t)
	for i, id := range ids {
		if !a.Has(e, id) {
			return fmt.Errorf("ghosts: entity %v lacks component %v of ghost type %q", e, b.schema.ComponentType(gt.Components[i]), gt.Name)
		}
	}
	return nil
}

// hasAll reports whether e has every replicated component of type t.
func (b *Binding) hasAll(e ecs.Entity, t codec.GhostTypeID) bool {
	a := b.world.Arche()
	for _, id := range b.types[t] {
		if !a.Has(e, id) {
			return false
		}
	}
	return true
}

// Quantize replaces each replicated component of e (of ghost type t) by
// what the wire would carry. Steady state it allocates nothing.
func (b *Binding) Quantize(e ecs.Entity, t codec.GhostTypeID) {
	gt, _ := b.schema.GhostType(t)
	a := b.world.Arche()
	for i, id := range b.types[t] {
		b.rt.Quantize(b.schema, gt.Components[i], a.Get(e, id))
	}
}

// valuesOf returns pointers to e's replicated components of type t, in a
// slice reused by the next call.
func (b *Binding) valuesOf(e ecs.Entity, t codec.GhostTypeID) []unsafe.Pointer {
	a := b.world.Arche()
	b.values = b.values[:0]
	for _, id := range b.types[t] {
		b.values = append(b.values, a.Get(e, id))
	}
	return b.values
}
