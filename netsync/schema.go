package netsync

import (
	"encoding/binary"
	"fmt"
	"reflect"
)

// ComponentID is a component's wire identity: its index in the [Schema],
// the same on server and clients because both build the schema with the
// same code (arche's own IDs depend on registration order per world).
type ComponentID uint16

// GhostTypeID is a ghost type's index in the [Schema].
type GhostTypeID uint16

// MaxComponentsPerGhost bounds the replicated components of one ghost
// type.
const MaxComponentsPerGhost = 32

// GhostType says which components a kind of ghost replicates, in order.
type GhostType struct {
	Name       string
	Components []ComponentID
}

// Schema is the shared declaration of replicated components (with their
// codecs) and ghost types. Server and clients must build identical schemas;
// [Schema.Hash] is exchanged at connection to refuse a mismatch.
type Schema struct {
	codecs []Codec
	names  []string
	types  []GhostType
	interp []Interpolation
}

// NewSchema returns an empty schema.
func NewSchema() *Schema { return &Schema{} }

// AddComponent registers a replicated component type with its codec and
// returns its wire ID. It errors when the type is already registered.
func (s *Schema) AddComponent(c Codec) (ComponentID, error) {
	t := c.Type()
	for i, other := range s.codecs {
		if other.Type() == t {
			return 0, fmt.Errorf("netsync: component %v is already in the schema as ID %d", t, i)
		}
	}
	s.codecs = append(s.codecs, c)
	s.names = append(s.names, t.String())
	s.interp = append(s.interp, Interpolation{Blend: defaultBlend(t)})
	return ComponentID(len(s.codecs) - 1), nil
}

// AddGhostType registers a ghost type replicating the given components in
// order. It errors on an unknown or repeated component, on more than
// MaxComponentsPerGhost components, and on a name already used.
func (s *Schema) AddGhostType(name string, comps ...ComponentID) (GhostTypeID, error) {
	if len(comps) > MaxComponentsPerGhost {
		return 0, fmt.Errorf("netsync: ghost type %q has %d components, at most %d allowed", name, len(comps), MaxComponentsPerGhost)
	}
	for _, t := range s.types {
		if t.Name == name {
			return 0, fmt.Errorf("netsync: ghost type %q already exists", name)
		}
	}
	for i, c := range comps {
		if int(c) >= len(s.codecs) {
			return 0, fmt.Errorf("netsync: ghost type %q: component ID %d outside 0..%d", name, c, len(s.codecs)-1)
		}
		for _, d := range comps[:i] {
			if d == c {
				return 0, fmt.Errorf("netsync: ghost type %q lists component %s twice", name, s.names[c])
			}
		}
	}
	s.types = append(s.types, GhostType{Name: name, Components: append([]ComponentID(nil), comps...)})
	return GhostTypeID(len(s.types) - 1), nil
}

// NumComponents returns the number of registered components.
func (s *Schema) NumComponents() int { return len(s.codecs) }

// Codec returns the codec of a component; it panics on an unknown ID.
func (s *Schema) Codec(id ComponentID) Codec { return s.codecs[id] }

// ComponentType returns the Go type of a component; it panics on an
// unknown ID.
func (s *Schema) ComponentType(id ComponentID) reflect.Type { return s.codecs[id].Type() }

// NumGhostTypes returns the number of ghost types.
func (s *Schema) NumGhostTypes() int { return len(s.types) }

// GhostType returns a ghost type; ok is false for an unknown ID (which a
// decoder must treat as bad input).
func (s *Schema) GhostType(id GhostTypeID) (GhostType, bool) {
	if int(id) >= len(s.types) {
		return GhostType{}, false
	}
	return s.types[id], true
}

// Hash identifies the schema: component type names and sizes, what each
// codec writes for the zero value (so a changed range or precision changes
// the hash), ghost types and their component lists, in order. Two schemas
// with the same hash decode each other's snapshots.
func (s *Schema) Hash() uint64 {
	h := uint64(hashOffset)
	var b [8]byte
	var w BitWriter
	for i, c := range s.codecs {
		h = fnv(h, []byte(s.names[i]))
		binary.LittleEndian.PutUint64(b[:], uint64(c.Type().Size()))
		h = fnv(h, b[:])
		zero := reflect.New(c.Type())
		w.Reset(nil)
		c.Encode(&w, zero.UnsafePointer())
		binary.LittleEndian.PutUint64(b[:], uint64(w.BitLen()))
		h = fnv(fnv(h, b[:]), w.Bytes())
	}
	for _, t := range s.types {
		h = fnv(h, []byte(t.Name))
		for _, c := range t.Components {
			binary.LittleEndian.PutUint16(b[:2], uint16(c))
			h = fnv(h, b[:2])
		}
		h = fnv(h, []byte{0xff})
	}
	return h
}

const (
	hashOffset = 14695981039346656037
	hashPrime  = 1099511628211
)

func fnv(h uint64, b []byte) uint64 {
	for _, x := range b {
		h ^= uint64(x)
		h *= hashPrime
	}
	return h
}
