package codec

import (
	"reflect"
	"slices"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// Coder quantizes and compares component values through their schema
// descriptions. It owns scratch space, so one Coder per goroutine; steady
// state it allocates nothing.
type Coder struct {
	st    Stream
	codes []uint64
	w     bitstream.Writer // ApplyRelative's codes, as a decoder reads them
	wbuf  []byte
	r     bitstream.Reader
}

// Quantize replaces the value of component id at p by what a peer would
// receive: each field through its quantizer, directly, without encoding.
// The server applies it to its state at the end of every tick, so a
// correct prediction is bit-identical to the server's.
func (c *Coder) Quantize(s *Schema, id ComponentID, p unsafe.Pointer) {
	c.st = Stream{mode: modeQuantize, codes: c.st.codes}
	s.comps[id].serialize(p, &c.st)
}

// Equal reports whether the values of component id at a and b have the
// same wire codes: whether a peer would see the same value.
func (c *Coder) Equal(s *Schema, id ComponentID, a, b unsafe.Pointer) bool {
	_, same := c.Diff(s, id, a, b)
	return same
}

// FieldDiff names the first field of a component whose wire codes differ
// between two values, and keeps both values of the field: printing them
// (Values, String) is left until someone asks, so finding a difference
// allocates nothing.
type FieldDiff struct {
	Component string // the component's type
	Field     string // the field's path in the type ("X", "Pos.Y")
	f         field
	a, b      [8]byte // the field's bytes in each value
}

// Values prints the field's value in each of the two values compared.
func (d FieldDiff) Values() (a, b string) {
	if d.f.kind == 0 {
		return "", ""
	}
	f := d.f
	f.off = 0
	return formatField(f, unsafe.Pointer(&d.a)), formatField(f, unsafe.Pointer(&d.b))
}

// Numbers returns the field's Go kind and its value in each of the two
// values compared, as float64s: every kind a Stream codes (float32, bool
// as 0 or 1, a press, a tick, integers of up to 32 bits) converts
// exactly. The kind is reflect.Invalid for a zero FieldDiff.
func (d FieldDiff) Numbers() (kind reflect.Kind, a, b float64) {
	f := d.f
	f.off = 0
	return fieldKindOf(f), fieldNumber(f, unsafe.Pointer(&d.a)), fieldNumber(f, unsafe.Pointer(&d.b))
}

// fieldKindOf returns the Go kind of a described field.
func fieldKindOf(f field) reflect.Kind {
	switch f.kind {
	case kindFloat, kindAngle, kindFloat32:
		return reflect.Float32
	case kindBool:
		return reflect.Bool
	case kindPress:
		return reflect.Uint8
	case kindTick:
		return reflect.Uint32
	case kindInt:
		return [...]reflect.Kind{1: reflect.Int8, 2: reflect.Int16, 4: reflect.Int32}[f.size]
	case kindUint:
		return [...]reflect.Kind{1: reflect.Uint8, 2: reflect.Uint16, 4: reflect.Uint32}[f.size]
	}
	return reflect.Invalid
}

// fieldNumber reads a described field at p as a float64.
func fieldNumber(f field, p unsafe.Pointer) float64 {
	q := unsafe.Add(p, f.off)
	switch fieldKindOf(f) {
	case reflect.Float32:
		return float64(*(*float32)(q))
	case reflect.Bool:
		if *(*bool)(q) {
			return 1
		}
		return 0
	case reflect.Int8:
		return float64(*(*int8)(q))
	case reflect.Int16:
		return float64(*(*int16)(q))
	case reflect.Int32:
		return float64(*(*int32)(q))
	case reflect.Uint8:
		return float64(*(*uint8)(q))
	case reflect.Uint16:
		return float64(*(*uint16)(q))
	case reflect.Uint32:
		return float64(*(*uint32)(q))
	}
	return 0
}

// String describes the difference: "game.Position.X: 1.5 then 2".
func (d FieldDiff) String() string {
	a, b := d.Values()
	return d.Component + "." + d.Field + ": " + a + " then " + b
}

// Diff compares the values of component id at a and b field by field and
// returns the first field whose codes differ; same is true when none does.
func (c *Coder) Diff(s *Schema, id ComponentID, a, b unsafe.Pointer) (d FieldDiff, same bool) {
	comp := &s.comps[id]
	c.st = Stream{mode: modeCodes, codes: c.st.codes[:0]}
	comp.serialize(a, &c.st)
	c.codes = append(c.codes[:0], c.st.codes...)
	c.st.codes = c.st.codes[:0]
	comp.serialize(b, &c.st)
	if slices.Equal(c.codes, c.st.codes) {
		return FieldDiff{}, true
	}
	i := 0
	for i < len(c.codes) && i < len(c.st.codes) && c.codes[i] == c.st.codes[i] {
		i++
	}
	if i >= len(comp.fields) { // a description that codes more fields than it did at Build
		return FieldDiff{Component: comp.name}, false
	}
	f := comp.fields[i]
	d = FieldDiff{Component: comp.name, Field: comp.names[i], f: f}
	copy(d.a[:f.size], unsafe.Slice((*byte)(unsafe.Add(a, f.off)), f.size))
	copy(d.b[:f.size], unsafe.Slice((*byte)(unsafe.Add(b, f.off)), f.size))
	return d, false
}
