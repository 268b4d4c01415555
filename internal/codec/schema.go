package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
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

// MaxComponents bounds the components of a schema, so the per-component
// hashes of a hello (package protocol) fit one datagram.
const MaxComponents = 128

// GhostType says which components a kind of ghost replicates, in order,
// which clients predict it, and which of its components those clients
// take from the server without predicting them.
type GhostType struct {
	Name       string
	Components []ComponentID
	Mode       PredictionMode
	// ServerOwned has bit i set when Components[i] is server-owned
	// (see [SchemaBuilder.ServerOwned]); MaxComponentsPerGhost fits.
	ServerOwned uint32
}

// component is what the schema knows of one replicated type: its one
// description (the Serialize method, run through a Stream), the fields
// that description codes and how it is interpolated.
type component struct {
	name      string
	typ       reflect.Type
	serialize func(p unsafe.Pointer, s *Stream)
	fields    []field
	names     []string // per field, its path in the type ("X", "Pos.Y")
	hash      uint64
	interp    Interpolation
}

// Schema is the shared declaration of replicated components and ghost
// types, built once with a [SchemaBuilder] and never changed after:
// server and clients build it with the same code, and [Schema.Hash] (with
// a hash per component) is compared at connection to refuse a client
// built with other components, ranges or precisions, naming the component.
// A Schema is safe for concurrent use.
type Schema struct {
	comps    []component
	types    []GhostType
	input    *Input // nil without an input type
	events   []Event
	messages []MessageType
	hash     uint64
}

// SchemaBuilder declares a [Schema]: components with [SchemaBuilder.AddComponent], how they
// are interpolated, ghost types, then [SchemaBuilder.Build]. A declaration
// that is wrong (an unconfigured quantizer, a type declared twice, an
// unknown component in a ghost type) is remembered and returned by Build,
// so a game declares everything in a row and checks one error. The zero
// value is ready to use.
type SchemaBuilder struct {
	s     Schema
	err   error
	built bool
}

func (b *SchemaBuilder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// AddComponent declares a replicated component of type t whose one
// description is serialize, and returns its wire ID. The description is
// run once here, on a zero value, to learn the fields it codes; a type
// that is not plain data (an *ecs.PlainDataError), a field coded with an
// unconfigured or invalid quantizer, or a type declared twice makes Build
// fail naming the type and the field.
func (b *SchemaBuilder) AddComponent(t reflect.Type, serialize func(p unsafe.Pointer, s *Stream)) ComponentID {
	id := ComponentID(len(b.s.comps))
	if b.built {
		b.fail(fmt.Errorf("netsync: component %v declared after Build", t))
		return id
	}
	for _, c := range b.s.comps {
		if c.typ == t {
			b.fail(fmt.Errorf("netsync: component %v declared twice", t))
			return id
		}
	}
	// Histories copy components bit for bit: refuse one holding a
	// reference here, with its field named, not at a client's first tick.
	if err := ecs.CheckPlainData(t); err != nil {
		b.fail(fmt.Errorf("netsync: component %v: %w", t, err))
		return id
	}
	if len(b.s.comps) >= MaxComponents {
		b.fail(fmt.Errorf("netsync: component %v would be the %dth; a schema holds at most %d", t, len(b.s.comps)+1, MaxComponents))
		return id
	}
	c := component{
		name:      t.String(),
		typ:       t,
		serialize: serialize,
		interp:    Interpolation{Blend: defaultBlend(t)},
	}
	fields, err := describe(c.serialize, reflect.New(t).UnsafePointer(), t)
	if err != nil {
		b.fail(fmt.Errorf("netsync: component %v: %w", t, err))
	}
	c.fields = fields
	c.names = fieldNames(t, fields)
	if err := fixedWidth(fields, c.names); err != nil {
		b.fail(fmt.Errorf("netsync: component %v: %w", t, err))
	}
	c.hash = hashComponent(c.name, t.Size(), fields)
	b.s.comps = append(b.s.comps, c)
	return id
}

// describe runs a description on the value at p to list the fields it
// codes; every field must lie inside the value (a description coding
// something else would not be one of the value).
func describe(serialize func(unsafe.Pointer, *Stream), p unsafe.Pointer, t reflect.Type) ([]field, error) {
	st := Stream{mode: modeDescribe, base: uintptr(p)}
	serialize(p, &st)
	if st.err != nil {
		return nil, fmt.Errorf("field %d: %w", len(st.fields), st.err)
	}
	for i, f := range st.fields {
		if f.off+f.size > t.Size() {
			return nil, fmt.Errorf("field %d codes memory outside the value (offset %d, size %d of %d bytes)", i, f.off, f.size, t.Size())
		}
		if f.variable() && uintptr(f.param[0])+4 > t.Size() {
			return nil, fmt.Errorf("field %d keeps its length outside the value (offset %d of %d bytes)", i, f.param[0], t.Size())
		}
	}
	return st.fields, nil
}

// fixedWidth refuses a description with a field whose width varies
// (Stream.Bytes, Stream.Text): snapshots and input batches size and copy
// fields by their one width.
func fixedWidth(fields []field, names []string) error {
	for i, f := range fields {
		if f.variable() {
			return fmt.Errorf("field %s codes a variable number of bytes, which only message types may (netsync.Message)", names[i])
		}
	}
	return nil
}

// fieldNames names each described field by its path in t, found by its
// offset and size; a field that matches none is named by its index.
func fieldNames(t reflect.Type, fields []field) []string {
	type leaf struct {
		off, size uintptr
		name      string
	}
	var leaves []leaf
	var walk func(t reflect.Type, off uintptr, name string)
	walk = func(t reflect.Type, off uintptr, name string) {
		switch t.Kind() {
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				n := f.Name
				if name != "" {
					n = name + "." + n
				}
				walk(f.Type, off+f.Offset, n)
			}
		case reflect.Array:
			for i := 0; i < t.Len(); i++ {
				walk(t.Elem(), off+uintptr(i)*t.Elem().Size(), name+"["+strconv.Itoa(i)+"]")
			}
			// After its elements, which a field of one element's size
			// names: a byte field (Stream.Bytes) codes the whole array.
			leaves = append(leaves, leaf{off, t.Size(), name})
		default:
			leaves = append(leaves, leaf{off, t.Size(), name})
		}
	}
	walk(t, 0, "")
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = "#" + strconv.Itoa(i)
		for _, l := range leaves {
			if l.off == f.off && l.size == f.size {
				names[i] = l.name
				break
			}
		}
	}
	return names
}

// hashComponent covers everything that changes a component's bits: its
// name and size, and per field its kind, place, width and parameters.
func hashComponent(name string, size uintptr, fields []field) uint64 {
	h := fnv(hashOffset, []byte(name))
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h = fnv(h, b[:])
	}
	put(uint64(size))
	for _, f := range fields {
		put(uint64(f.kind))
		put(uint64(f.off))
		put(uint64(f.size))
		put(uint64(f.bits))
		for _, p := range f.param {
			put(p)
		}
	}
	return h
}

// Interpolate sets how component id is shown between two received states
// (see [Interpolation]); a nil Blend keeps the default. An unknown ID or a
// negative teleport threshold makes Build fail.
func (b *SchemaBuilder) Interpolate(id ComponentID, in Interpolation) {
	if int(id) >= len(b.s.comps) {
		b.fail(fmt.Errorf("netsync: interpolation of component ID %d outside 0..%d", id, len(b.s.comps)-1))
		return
	}
	if !(in.Teleport >= 0) {
		b.fail(fmt.Errorf("netsync: component %s: teleport threshold %v must be >= 0", b.s.comps[id].name, in.Teleport))
		return
	}
	if in.Blend == nil {
		in.Blend = b.s.comps[id].interp.Blend
	}
	b.s.comps[id].interp = in
}

// GhostType declares a kind of ghost replicating the given components in
// order, and returns its ID. An unknown or repeated component, more than
// MaxComponentsPerGhost, or a name already used makes Build fail.
func (b *SchemaBuilder) GhostType(name string, comps ...ComponentID) GhostTypeID {
	id := GhostTypeID(len(b.s.types))
	if err := b.checkGhostType(name, comps); err != nil {
		b.fail(err)
		return id
	}
	b.s.types = append(b.s.types, GhostType{Name: name, Components: append([]ComponentID(nil), comps...)})
	return id
}

func (b *SchemaBuilder) checkGhostType(name string, comps []ComponentID) error {
	if len(comps) > MaxComponentsPerGhost {
		return fmt.Errorf("netsync: ghost type %q has %d components, at most %d allowed", name, len(comps), MaxComponentsPerGhost)
	}
	for _, t := range b.s.types {
		if t.Name == name {
			return fmt.Errorf("netsync: ghost type %q already exists", name)
		}
	}
	for i, c := range comps {
		if int(c) >= len(b.s.comps) {
			return fmt.Errorf("netsync: ghost type %q: component ID %d outside 0..%d", name, c, len(b.s.comps)-1)
		}
		for _, d := range comps[:i] {
			if d == c {
				return fmt.Errorf("netsync: ghost type %q lists component %s twice", name, b.s.comps[c].name)
			}
		}
	}
	return nil
}

// Build returns the schema, or the first error of the declarations. The
// schema never changes after; the builder cannot be used again.
func (b *SchemaBuilder) Build() (*Schema, error) {
	if b.built {
		return nil, errors.New("netsync: SchemaBuilder.Build called twice")
	}
	b.built = true
	if b.err != nil {
		return nil, b.err
	}
	s := b.s
	h := uint64(hashOffset)
	var buf [8]byte
	for _, c := range s.comps {
		binary.LittleEndian.PutUint64(buf[:], c.hash)
		h = fnv(h, buf[:])
	}
	for _, t := range s.types {
		h = fnv(h, []byte(t.Name))
		for _, c := range t.Components {
			binary.LittleEndian.PutUint16(buf[:2], uint16(c))
			h = fnv(h, buf[:2])
		}
		h = fnv(h, []byte{0xff, byte(t.Mode)})
		// Only a type that declares server-owned components hashes them,
		// so every schema without keeps the hash it had.
		if m := t.ServerOwned; m != 0 {
			h = fnv(h, []byte{0xfe, byte(m), byte(m >> 8), byte(m >> 16), byte(m >> 24)})
		}
	}
	if s.input != nil {
		binary.LittleEndian.PutUint64(buf[:], s.input.hash)
		h = fnv(h, buf[:])
	}
	h = s.hashEvents(h)
	// A schema without message types hashes as before they existed.
	for _, m := range s.messages {
		binary.LittleEndian.PutUint64(buf[:], m.hash)
		h = fnv(h, buf[:])
	}
	s.hash = h
	return &s, nil
}

// Input returns the game's input type and rules, or nil when the schema
// declares none.
func (s *Schema) Input() *Input { return s.input }

// ComponentSize returns the size in bytes of component id's Go type; it
// panics on an unknown ID.
func (s *Schema) ComponentSize(id ComponentID) int { return int(s.comps[id].typ.Size()) }

// ComponentName returns the name of component id's Go type
// ("game.Position"); it panics on an unknown ID.
func (s *Schema) ComponentName(id ComponentID) string { return s.comps[id].name }

// NumComponents returns the number of declared components.
func (s *Schema) NumComponents() int { return len(s.comps) }

// ComponentType returns the Go type of a component; it panics on an
// unknown ID.
func (s *Schema) ComponentType(id ComponentID) reflect.Type { return s.comps[id].typ }

// ComponentOf returns the ID of component type t; ok is false when t is
// not one of the schema's components. It costs a walk of the components.
func (s *Schema) ComponentOf(t reflect.Type) (id ComponentID, ok bool) {
	for i := range s.comps {
		if s.comps[i].typ == t {
			return ComponentID(i), true
		}
	}
	return 0, false
}

// ComponentHash returns the hash of one component's wire form (name, size,
// fields, ranges, precisions); it panics on an unknown ID.
func (s *Schema) ComponentHash(id ComponentID) uint64 { return s.comps[id].hash }

// Interpolation returns how component id is interpolated (the default
// blend filled in). It panics on an unknown ID.
func (s *Schema) Interpolation(id ComponentID) Interpolation { return s.comps[id].interp }

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

// Hash identifies the schema: every component's wire form (see
// [Schema.ComponentHash]) and the ghost types with their component lists,
// prediction modes and server-owned components, in order. Two schemas
// with the same hash decode each other's snapshots.
func (s *Schema) Hash() uint64 { return s.hash }

// Mismatch compares per-component hashes received from a peer with this
// schema's and describes the first difference, naming the component:
// "component game.Position differs" for the first whose hash differs, or
// "3 components received, 2 declared" when only the count does; "" when
// all agree. The text is fit to send back to the peer.
func (s *Schema) Mismatch(hashes []uint64) string {
	for i, c := range s.comps {
		if i >= len(hashes) {
			break
		}
		if hashes[i] != c.hash {
			return "component " + c.name + " differs"
		}
	}
	if len(hashes) != len(s.comps) {
		return fmt.Sprintf("%d components received, %d declared", len(hashes), len(s.comps))
	}
	return ""
}

// Encode writes the value of component id at p, using st as scratch.
func (s *Schema) Encode(st *Stream, id ComponentID, w *bitstream.Writer, p unsafe.Pointer) {
	*st = Stream{mode: modeEncode, w: w, codes: st.codes}
	s.comps[id].serialize(p, st)
}

// Decode reads a value of component id into p, using st as scratch; the
// error names the field.
func (s *Schema) Decode(st *Stream, id ComponentID, r *bitstream.Reader, p unsafe.Pointer) error {
	*st = Stream{mode: modeDecode, r: r, codes: st.codes}
	c := &s.comps[id]
	c.serialize(p, st)
	if st.err != nil && st.n > 0 && st.n <= len(c.names) {
		return fmt.Errorf("field %s: %w", c.names[st.n-1], st.err)
	}
	return st.err
}

// formatField prints the value of a described field at p.
func formatField(f field, p unsafe.Pointer) string {
	q := unsafe.Add(p, f.off)
	switch f.kind {
	case kindFloat, kindAngle, kindFloat32:
		return strconv.FormatFloat(float64(*(*float32)(q)), 'g', -1, 32)
	case kindBool:
		return strconv.FormatBool(*(*bool)(q))
	case kindPress:
		return strconv.Itoa(int(*(*uint8)(q)))
	case kindTick:
		return strconv.FormatUint(uint64(*(*uint32)(q)), 10)
	case kindInt, kindUint:
		var v int64
		switch f.size {
		case 1:
			v = int64(*(*int8)(q))
			if f.kind == kindUint {
				v = int64(*(*uint8)(q))
			}
		case 2:
			v = int64(*(*int16)(q))
			if f.kind == kindUint {
				v = int64(*(*uint16)(q))
			}
		default:
			v = int64(*(*int32)(q))
			if f.kind == kindUint {
				v = int64(*(*uint32)(q))
			}
		}
		return strconv.FormatInt(v, 10)
	}
	return "?"
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
