package codec

import (
	"fmt"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// A changed component of a record with a baseline can carry each field
// relative to the field's code at the baseline: a value that moved a
// little costs a few bits, not its whole range. The coding is chosen per
// field from its width alone, so a game writes nothing but its one
// Serialize description.
//
// A field of at least relativeMinBits bits is one of:
//
//	0                    its baseline code
//	1 0   then s1 bits   the difference d, mod 2ⁿ as a signed n-bit value, as zigzag(d) − 1
//	1 1 0 then s2 bits   the same in more bits
//	1 1 1 then n bits    the code itself
//
// (s1, s2 from relativeClasses); a narrower field, a tick and a raw
// float32 are their codes as they are (a tick's difference from a
// baseline of 0, an unset tick, would grow with uptime, and so would the
// record). The difference wraps mod 2ⁿ, so an angle crossing ±π stays
// small; a decoded code beyond a range's maximum is refused by the
// field's own decoder, as an absolute one is.

// relativeMinBits is the narrowest field coded relative to its baseline:
// below it, the class bits would cost as much as the code saves.
const relativeMinBits = 8

// relative reports whether f is coded relative to its baseline: a field
// with a range (a quantized float, an angle, an integer) of at least
// relativeMinBits bits.
func (f field) relative() bool {
	switch f.kind {
	case kindFloat, kindAngle, kindInt, kindUint:
		return f.bits >= relativeMinBits
	}
	return false
}

// relativeClasses returns the payload bits of a field of n bits in its
// two small classes: about a quarter and a half of its width, so a field
// moving by up to 2^(n/4) codes costs n/4+2 bits.
func relativeClasses(n int) (s1, s2 int) {
	s1 = max(2, (n+3)/4)
	s2 = max(s1+2, (n+1)/2)
	return s1, s2
}

// EncodeRelative appends to w the value of component id coded relative
// to its baseline: cur holds its encoding from bit curAt on and base its
// encoding at the baseline from bit baseAt on, both as [Schema.Encode]
// writes them. It reads each field's bits in place and allocates nothing.
// It panics when either encoding is shorter than the component's fields.
func (s *Schema) EncodeRelative(id ComponentID, w *bitstream.Writer, cur []byte, curAt int, base []byte, baseAt int) {
	for _, f := range s.comps[id].fields {
		n := f.bits
		c := bitstream.Extract(cur, curAt, n)
		curAt += n
		if !f.relative() {
			w.WriteBits(c, n)
			baseAt += n
			continue
		}
		p := bitstream.Extract(base, baseAt, n)
		baseAt += n
		writeRelative(w, c, p, n)
	}
}

// writeRelative writes code c of an n-bit field (8 ≤ n ≤ 32) whose
// baseline code is p.
func writeRelative(w *bitstream.Writer, c, p uint64, n int) {
	d := (c - p) & (1<<uint(n) - 1)
	if d == 0 {
		w.WriteBits(0, 1)
		return
	}
	sd := int64(d)
	if d >= 1<<uint(n-1) {
		sd -= 1 << uint(n)
	}
	z := uint64(sd<<1^sd>>63) - 1
	s1, s2 := relativeClasses(n)
	switch {
	case z < 1<<uint(s1):
		w.WriteBits(0b01|z<<2, 2+s1)
	case z < 1<<uint(s2):
		w.WriteBits(0b011|z<<3, 3+s2)
	default:
		w.WriteBits(0b111|c<<3, 3+n)
	}
}

// ReadRelative reads what EncodeRelative wrote for component id and
// appends one word per field to dst: a difference from the baseline's
// code (its zigzag form shifted up, with bit 0 set) or a code (shifted
// up, bit 0 clear). [Coder.ApplyRelative] makes the value of them. It
// fails only when r runs out.
func (s *Schema) ReadRelative(id ComponentID, r *bitstream.Reader, dst []uint64) ([]uint64, error) {
	for _, f := range s.comps[id].fields {
		n := f.bits
		if !f.relative() {
			c, err := r.ReadBits(n)
			if err != nil {
				return dst, err
			}
			dst = append(dst, c<<1)
			continue
		}
		s1, s2 := relativeClasses(n)
		var zz uint64
		switch same, err := r.ReadBits(1); {
		case err != nil:
			return dst, err
		case same == 0:
			dst = append(dst, 1) // a difference of 0
			continue
		}
		small, _ := r.ReadBits(1)
		if small == 0 {
			z, err := r.ReadBits(s1)
			if err != nil {
				return dst, err
			}
			zz = z + 1
		} else if medium, _ := r.ReadBits(1); medium == 0 {
			z, err := r.ReadBits(s2)
			if err != nil {
				return dst, err
			}
			zz = z + 1
		} else {
			c, err := r.ReadBits(n)
			if err != nil {
				return dst, err
			}
			dst = append(dst, c<<1)
			continue
		}
		dst = append(dst, zz<<1|1)
	}
	return dst, nil
}

// NumFields returns how many fields component id's description codes:
// the words [Schema.ReadRelative] appends for it.
func (s *Schema) NumFields(id ComponentID) int { return len(s.comps[id].fields) }

// ApplyRelative sets the value of component id at p from read, what
// [Schema.ReadRelative] read for it, and base, the component's value at
// the record's baseline: each field's code is the baseline's plus the
// difference (mod 2ⁿ) or the code read, then decoded as
// [Schema.Decode] decodes it, so a code beyond a field's range is an
// error naming the field, and p is then unspecified. It panics when read
// does not hold one word per field. Steady state it allocates nothing.
func (c *Coder) ApplyRelative(s *Schema, id ComponentID, read []uint64, base, p unsafe.Pointer) error {
	comp := &s.comps[id]
	if len(read) != len(comp.fields) {
		panic(fmt.Sprintf("netsync: %d relative codes for the %d fields of %s", len(read), len(comp.fields), comp.name))
	}
	c.st = Stream{mode: modeCodes, codes: c.st.codes[:0]}
	comp.serialize(base, &c.st)
	c.codes = append(c.codes[:0], c.st.codes...)
	c.w.Reset(c.wbuf[:0])
	for i, f := range comp.fields {
		v := read[i] >> 1
		if read[i]&1 != 0 {
			d := int64(v>>1) ^ -int64(v&1)
			v = (c.codes[i] + uint64(d)) & (1<<uint(f.bits) - 1)
		}
		c.w.WriteBits(v, f.bits)
	}
	c.wbuf = c.w.Bytes()
	c.r.Reset(c.wbuf)
	return s.Decode(&c.st, id, &c.r, p)
}
