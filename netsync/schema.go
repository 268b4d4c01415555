package netsync

import (
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/codec"
)

// ComponentID is a component's wire identity: its index in the [Schema],
// the same on server and clients because both build the schema with the
// same code (arche's own IDs depend on registration order per world).
type ComponentID codec.ComponentID

// GhostTypeID is a ghost type's index in the [Schema].
type GhostTypeID codec.GhostTypeID

// Schema is the shared declaration of replicated components, ghost types,
// the input type and message types, built once with a [SchemaBuilder] and never changed
// after: server and clients build it with the same code, and its hash
// (with a hash per component) is compared at connection to refuse a
// client built with other components, ranges or precisions, naming the
// component. Give it to the endpoints; a Schema is safe for concurrent
// use.
type Schema codec.Schema

// SchemaBuilder declares a [Schema]: components with [Component], how they
// are interpolated, ghost types, the input type with [Input], message types
// with [Message], then [SchemaBuilder.Build]. A declaration that is wrong (an unconfigured
// quantizer, a type declared twice, an unknown component in a ghost type)
// is remembered and returned by Build, so a game declares everything in a
// row and checks one error. The zero value is ready to use.
type SchemaBuilder codec.SchemaBuilder

// Component declares the replicated component type T, whose pointer
// implements [Serializer], and returns its wire ID. The description is run
// once here to learn the fields it codes; a field coded with an
// unconfigured or invalid quantizer, a type declared twice, more than 128
// components or a declaration after Build makes Build fail naming the
// type and the field.
func Component[T any, PT interface {
	*T
	Serializer
}](b *SchemaBuilder) ComponentID {
	return ComponentID((*codec.SchemaBuilder)(b).AddComponent(reflect.TypeFor[T](), func(p unsafe.Pointer, s *codec.Stream) {
		PT((*T)(p)).Serialize((*Stream)(s))
	}))
}

// GhostType declares a kind of ghost replicating the given components in
// order, and returns its ID. An unknown or repeated component, more than
// 32 components, or a name already used makes Build fail.
func (b *SchemaBuilder) GhostType(name string, comps ...ComponentID) GhostTypeID {
	ids := make([]codec.ComponentID, len(comps))
	for i, c := range comps {
		ids[i] = codec.ComponentID(c)
	}
	return GhostTypeID((*codec.SchemaBuilder)(b).GhostType(name, ids...))
}

// Build returns the schema, or the first error of the declarations. The
// schema never changes after; the builder cannot be used again (a second
// Build errors).
func (b *SchemaBuilder) Build() (*Schema, error) {
	s, err := (*codec.SchemaBuilder)(b).Build()
	return (*Schema)(s), err
}

// Hash returns the schema's hash: schemas built with the same
// declarations (components with their ranges and precisions, ghost types,
// the input and message types) have the same one. The endpoints compare
// it at connection; a replay file carries it.
func (s *Schema) Hash() uint64 { return (*codec.Schema)(s).Hash() }

// InputSize returns the size in bytes of the input type's value, 0
// without an input type.
func (s *Schema) InputSize() int { return (*codec.Schema)(s).InputSize() }
