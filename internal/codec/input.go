package codec

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// Input wire limits. The view fraction travels in 1/256 tick and the
// interpolation delay in 1/16 tick up to MaxInterpolationDelay.
const (
	viewFractionSteps     = 256
	delaySteps            = 16
	delayBits             = 11
	MaxInterpolationDelay = float32((1<<delayBits)-1) / delaySteps // ticks
	MaxInputsPerBatch     = 32
	// maxViewDistance bounds how far a view tick may lie from its input's
	// tick: 2^20 ticks is over 4 hours at 60 Hz, more than any rewind. A
	// view may lie after its input: a client that fell behind the server
	// shows remote ghosts newer than its own tick; lag compensation
	// judges that claim, the decoder only bounds it.
	maxViewDistance = 1<<20 - 1
)

// MissingPolicy says what the server applies on a tick for which a
// client's input has not arrived.
type MissingPolicy uint8

const (
	// MissingRepeatLast applies the client's previous input again, its presses
	// cleared: players mostly keep holding the same keys, so a late input
	// often equals the repeated one and the client's prediction stays
	// right. The default.
	MissingRepeatLast MissingPolicy = iota
	// MissingNeutral applies the input type's zero value: the player lets go of
	// everything.
	MissingNeutral
)

// String names the policy.
func (p MissingPolicy) String() string {
	switch p {
	case MissingRepeatLast:
		return "repeat-last"
	case MissingNeutral:
		return "neutral"
	}
	return fmt.Sprintf("MissingPolicy(%d)", uint8(p))
}

// Input is what the schema knows of the game's input type.
type Input struct {
	name      string
	typ       reflect.Type
	size      int
	serialize func(p unsafe.Pointer, s *Stream)
	fields    []field
	uncarried []span    // bytes no field covers: padding, fields left out
	presses   []uintptr // offsets of the Press fields
	hash      uint64
	// Validate, Substitute and Missing are the game's rules (see
	// InputRules).
	Validate   func(p unsafe.Pointer) (clamped bool, refuse string)
	Substitute func(last, out unsafe.Pointer)
	Missing    MissingPolicy
}

// InputRules says how the server treats the game's input type: the
// unsafe form of netsync.InputRules.
type InputRules struct {
	Validate   func(p unsafe.Pointer) (clamped bool, refuse string)
	Missing    MissingPolicy
	Substitute func(last, out unsafe.Pointer)
}

// AddInput declares the game's input type t whose one description is
// serialize. A schema declares at most one input type; a second one, an
// unknown policy or an invalid description makes Build fail.
func (b *SchemaBuilder) AddInput(t reflect.Type, serialize func(p unsafe.Pointer, s *Stream), rules InputRules) {
	if b.s.input != nil {
		b.fail(fmt.Errorf("netsync: input type %v declared after %v: a schema has one input type", t, b.s.input.typ))
		return
	}
	if rules.Missing > MissingNeutral {
		b.fail(fmt.Errorf("netsync: input type %v: unknown missing-input policy %d", t, rules.Missing))
		return
	}
	if err := ecs.CheckPlainData(t); err != nil {
		b.fail(fmt.Errorf("netsync: input type %v: %w", t, err))
		return
	}
	in := &Input{
		name:      t.String(),
		typ:       t,
		size:      int(t.Size()),
		serialize: serialize,
		Missing:   rules.Missing,
	}
	fields, err := describe(in.serialize, reflect.New(t).UnsafePointer(), t)
	if err != nil {
		b.fail(fmt.Errorf("netsync: input type %v: %w", t, err))
		return
	}
	if err := fixedWidth(fields, fieldNames(t, fields)); err != nil {
		b.fail(fmt.Errorf("netsync: input type %v: %w", t, err))
		return
	}
	in.fields = fields
	in.uncarried = uncarried(t.Size(), fields)
	for _, f := range fields {
		if f.kind == kindPress {
			in.presses = append(in.presses, f.off)
		}
	}
	in.hash = hashComponent("input "+in.name, t.Size(), fields)
	in.Validate, in.Substitute = rules.Validate, rules.Substitute
	b.s.input = in
}

// InputType returns the game's input type, or nil when the schema declares
// none (its clients then send only headers).
func (s *Schema) InputType() reflect.Type {
	if s.input == nil {
		return nil
	}
	return s.input.typ
}

// InputSize returns the size in bytes of the game's input type (0 without
// one).
func (s *Schema) InputSize() int {
	if s.input == nil {
		return 0
	}
	return s.input.size
}

// QuantizeInput rounds the input at p (of the schema's input type) to
// what the wire carries, then validates it as the server will; a client
// predicts with the result, so it simulates exactly what the server
// applies. The bytes the wire does not carry (padding, fields the
// description leaves out) are zeroed, as the server's decoder leaves
// them, so equal inputs are equal records byte for byte. refuse is the
// reason the server would refuse it ("" when accepted).
func (c *Coder) QuantizeInput(s *Schema, p unsafe.Pointer) (clamped bool, refuse string) {
	in := s.input
	if in == nil {
		return false, ""
	}
	// A typed copy of the game's value copies its padding too, and Go
	// leaves padding unspecified (stack garbage): it must not make two
	// equal inputs differ.
	rec := unsafe.Slice((*byte)(p), in.size)
	for _, u := range in.uncarried {
		clear(rec[u.off : u.off+u.n])
	}
	c.st = Stream{mode: modeQuantize, codes: c.st.codes}
	in.serialize(p, &c.st)
	if in.Validate != nil {
		clamped, refuse = in.Validate(p)
	}
	return clamped, refuse
}

// span is a byte range of a value.
type span struct{ off, n uintptr }

// uncarried returns the byte ranges of a value of size bytes that none of
// fields covers.
func uncarried(size uintptr, fields []field) []span {
	carried := make([]bool, size)
	for _, f := range fields {
		for i := f.off; i < f.off+f.size; i++ {
			carried[i] = true
		}
	}
	var out []span
	for i := uintptr(0); i < size; i++ {
		if carried[i] {
			continue
		}
		start := i
		for i < size && !carried[i] {
			i++
		}
		out = append(out, span{start, i - start})
	}
	return out
}

// ClearPresses zeroes every press of the input record rec.
func (in *Input) ClearPresses(rec []byte) {
	for _, off := range in.presses {
		rec[off] = 0
	}
}

// OrPresses sets in dst every press set in src.
func (in *Input) OrPresses(dst, src []byte) {
	for _, off := range in.presses {
		if src[off] != 0 {
			dst[off] = 1
		}
	}
}

// HasPress reports whether any press of rec is set.
func (in *Input) HasPress(rec []byte) bool {
	for _, off := range in.presses {
		if rec[off] != 0 {
			return true
		}
	}
	return false
}

// QuantizeHeader rounds the header's view fraction and delay to what the
// wire carries; without a view both are 0.
func QuantizeHeader(h *components.InputHeader) {
	if !h.HasView || !finite(h.ViewFraction) || h.ViewFraction < 0 {
		h.ViewFraction = 0
	}
	// Clamp before converting: float-to-int conversion of a value too
	// large for int is implementation-defined.
	h.ViewFraction = float32(min(viewFractionSteps-1, int(min(h.ViewFraction, 1)*viewFractionSteps))) / viewFractionSteps
	if !h.HasView || !finite(h.InterpolationDelay) || h.InterpolationDelay < 0 {
		h.InterpolationDelay = 0
	}
	h.InterpolationDelay = float32(min((1<<delayBits)-1, int(min(h.InterpolationDelay, MaxInterpolationDelay)*delaySteps+0.5))) / delaySteps
	if !h.HasView {
		h.ViewTick = 0
	}
}

func finite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// WriteInput encodes one input of a batch after prev (the previous input
// of the batch, or nil): the header's view as a distance to its tick, one
// bit when the distance and delay repeat, and the game's input in one bit
// when it repeats.
func (s *Schema) WriteInput(st *Stream, w *bitstream.Writer, h, prevH *components.InputHeader, rec, prev []byte) {
	if !h.HasView {
		w.WriteBool(false)
	} else {
		w.WriteBool(true)
		d := int64(h.Tick.Sub(h.ViewTick))
		if prevH != nil && prevH.HasView && d == int64(prevH.Tick.Sub(prevH.ViewTick)) {
			w.WriteBool(true)
		} else {
			w.WriteBool(false)
			w.WriteVarint(d)
		}
		w.WriteBits(uint64(h.ViewFraction*viewFractionSteps), 8)
		if prevH != nil && prevH.HasView && h.InterpolationDelay == prevH.InterpolationDelay {
			w.WriteBool(true)
		} else {
			w.WriteBool(false)
			w.WriteBits(uint64(h.InterpolationDelay*delaySteps), delayBits)
		}
	}
	if s.input == nil {
		return
	}
	if prev != nil && string(rec) == string(prev) {
		w.WriteBool(true)
		return
	}
	w.WriteBool(false)
	*st = Stream{mode: modeEncode, w: w, codes: st.codes}
	s.input.serialize(Ptr(rec), st)
}

// ReadInput decodes what WriteInput wrote into h and rec (for tick).
func (s *Schema) ReadInput(st *Stream, r *bitstream.Reader, h, prevH *components.InputHeader, rec, prev []byte, tick ecs.Tick) error {
	*h = components.InputHeader{Tick: tick}
	if has, _ := r.ReadBool(); has {
		var d int64
		if same, _ := r.ReadBool(); same && prevH != nil && prevH.HasView {
			d = int64(prevH.Tick.Sub(prevH.ViewTick))
		} else if same {
			return fmt.Errorf("netsync: input view tick repeats a previous one that has none: %w", bitstream.ErrMalformed)
		} else {
			d, _ = r.ReadVarint()
		}
		frac, _ := r.ReadBits(8)
		sameDelay, err := r.ReadBool()
		if err != nil {
			return err
		}
		var delay uint64
		switch {
		case sameDelay && (prevH == nil || !prevH.HasView):
			return fmt.Errorf("netsync: input delay repeats a previous one that has none: %w", bitstream.ErrMalformed)
		case sameDelay:
			delay = uint64(prevH.InterpolationDelay * delaySteps)
		default:
			if delay, err = r.ReadBits(delayBits); err != nil {
				return err
			}
		}
		if d < -maxViewDistance || d > maxViewDistance {
			return fmt.Errorf("netsync: input view tick %d ticks before the input's tick %d, outside ±%d: %w", d, tick, maxViewDistance, bitstream.ErrOutOfRange)
		}
		h.HasView, h.ViewTick = true, tick.Add(-int(d))
		h.ViewFraction = float32(frac) / viewFractionSteps
		h.InterpolationDelay = float32(delay) / delaySteps
	}
	if s.input == nil {
		return r.Err()
	}
	same, err := r.ReadBool()
	if err != nil {
		return err
	}
	if same {
		if prev == nil {
			return fmt.Errorf("netsync: the first input of a batch repeats a previous one: %w", bitstream.ErrMalformed)
		}
		copy(rec, prev)
		return r.Err()
	}
	clear(rec)
	*st = Stream{mode: modeDecode, r: r, codes: st.codes}
	s.input.serialize(Ptr(rec), st)
	if st.err != nil {
		return fmt.Errorf("netsync: input %s: %w", s.input.name, st.err)
	}
	return r.Err()
}

// Ptr points at a record's first byte (nil for an empty record,
// which nothing reads through).
func Ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
