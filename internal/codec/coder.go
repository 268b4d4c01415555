package codec

import (
	"slices"
	"unsafe"
)

// Coder quantizes and compares component values through their schema
// descriptions. It owns scratch space, so one Coder per goroutine; steady
// state it allocates nothing.
type Coder struct {
	st    Stream
	codes []uint64
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
