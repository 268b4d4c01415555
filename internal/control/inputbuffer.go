package control

import (
	"fmt"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// InputBufferOptions configures an [InputBuffer]. The zero value is usable.
type InputBufferOptions struct {
	// Capacity is the number of ticks buffered; 64 when zero. Allowed:
	// 8..4096. The ring is the next power of two, so that it stays right
	// across the tick wrap.
	Capacity int
	// MaxAhead is how many ticks past the server's current tick an input
	// may be for; further ones are refused (a client cannot queue up
	// seconds of input). Capacity-1 when zero; at most Capacity-1.
	MaxAhead int
}

// maxRefuseReasons bounds the reasons an [InputBuffer] counts one by one;
// further reasons are counted under "other".
const maxRefuseReasons = 8

// InputStats counts what an [InputBuffer] did with what it was given.
type InputStats struct {
	Received    uint64 // inputs offered to Add
	Accepted    uint64 // first copies stored for a future tick
	Duplicates  uint64 // copies of a tick already stored or applied (redundancy)
	Late        uint64 // first copies of a tick already run without them
	LatePresses uint64 // late inputs whose presses were applied on a later tick
	TooFarAhead uint64 // refused: beyond MaxAhead
	Refused     uint64 // refused by the game's Validate
	Clamped     uint64 // changed by the game's Validate
	Applied     uint64 // ticks run with the client's own input
	Missing     uint64 // ticks run with the policy's substitute
	Buffered    int    // inputs held now
	MaxBuffered int    // most inputs held at once
	// RefusedBy counts refusals by the reason Validate gave (the first
	// few reasons; later ones under "other"). Read-only: shared with the
	// buffer.
	RefusedBy map[string]uint64
}

// AddResult says what Add did with one input.
type AddResult uint8

// The results of Add.
const (
	AddAccepted AddResult = iota
	AddDuplicate
	AddLate
	AddTooFarAhead
	AddRefused
)

// InputBuffer is the server's per-connection store of a client's inputs
// keyed by tick. It drops duplicates and ticks already run, refuses ticks
// too far ahead and what the game's Validate refuses, and hands out
// exactly one input per tick (a client that sends faster gains nothing).
// A press that arrives after its tick was run on a substitute is applied
// on the next tick, so it counts exactly once; such a late input is also
// what the next substitute repeats, being the client's newest. Its memory is fixed at
// construction.
type InputBuffer struct {
	opts     InputBufferOptions
	in       *codec.Input // nil: header-only inputs
	size     int
	data     []byte // Capacity records
	heads    []components.InputHeader
	ticks    []ecs.Tick
	has      []bool
	missing  []bool // per slot: tick run without input (to count late arrivals)
	applied  ecs.Tick
	started  bool
	first    ecs.Tick // the first tick accepted: ticks before it have no input to await
	firstOK  bool
	last     []byte // the newest record received of a tick already run
	lastTick ecs.Tick
	hasLast  bool
	carry    []byte // presses of late inputs, for the next tick
	carried  bool
	out      []byte // what Take returns
	late     []byte // a late input, validated without touching the caller's copy
	stats    InputStats
}

// NewInputBuffer returns a buffer for the schema's input type. It errors
// naming the value when Capacity is outside 8..4096 or MaxAhead outside
// 1..Capacity-1.
func NewInputBuffer(s *codec.Schema, opts InputBufferOptions) (*InputBuffer, error) {
	if opts.Capacity == 0 {
		opts.Capacity = 64
	}
	if opts.Capacity < 8 || opts.Capacity > 4096 {
		return nil, fmt.Errorf("netsync: input buffer capacity %d outside 8..4096", opts.Capacity)
	}
	if opts.MaxAhead == 0 {
		opts.MaxAhead = opts.Capacity - 1
	}
	if opts.MaxAhead < 1 || opts.MaxAhead > opts.Capacity-1 {
		return nil, fmt.Errorf("netsync: input max-ahead %d outside 1..%d", opts.MaxAhead, opts.Capacity-1)
	}
	// A power of two keeps neighbouring ticks in distinct slots across the
	// tick wrap (2³² is a multiple of it).
	n, size := 1, s.InputSize()
	for n < opts.Capacity {
		n <<= 1
	}
	return &InputBuffer{opts: opts, in: s.Input(), size: size,
		data: make([]byte, n*size), heads: make([]components.InputHeader, n), ticks: make([]ecs.Tick, n),
		has: make([]bool, n), missing: make([]bool, n),
		last: make([]byte, size), carry: make([]byte, size), out: make([]byte, size), late: make([]byte, size),
		stats: InputStats{RefusedBy: map[string]uint64{}}}, nil
}

// Stats returns the counters.
func (b *InputBuffer) Stats() InputStats { return b.stats }

// Applied returns the newest tick taken and whether any was.
func (b *InputBuffer) Applied() (ecs.Tick, bool) { return b.applied, b.started }

func (b *InputBuffer) slot(t ecs.Tick) int { return int(uint32(t) & uint32(len(b.heads)-1)) }

func (b *InputBuffer) rec(i int) []byte { return b.data[i*b.size : (i+1)*b.size] }

// Add offers one input: its header and its record (the game's input
// type's bytes, copied). current is the server's newest simulated tick:
// inputs for it or earlier are duplicates or late, inputs beyond
// current+MaxAhead are refused. It allocates nothing (but the first time a
// refusal reason is counted).
func (b *InputBuffer) Add(h components.InputHeader, rec []byte, current ecs.Tick) AddResult {
	b.stats.Received++
	if !h.Tick.After(current) {
		i := b.slot(h.Tick)
		if b.missing[i] && b.ticks[i] == h.Tick {
			b.missing[i] = false
			b.stats.Late++
			if b.in == nil || !b.validate(b.copyLate(rec)) {
				return AddLate
			}
			// The tick ran on a substitute without its presses: they
			// count on the next tick instead of never.
			if b.in.HasPress(b.late) {
				b.in.OrPresses(b.carry, b.late)
				b.carried = true
				b.stats.LatePresses++
			}
			// It is the client's newest input of a tick already run: the
			// one a substitute repeats (with the claims that go with its
			// presses, such as where a shot started), not an older one.
			if !b.hasLast || h.Tick.After(b.lastTick) {
				copy(b.last, b.late)
				b.lastTick, b.hasLast = h.Tick, true
			}
			return AddLate
		}
		b.stats.Duplicates++
		return AddDuplicate
	}
	if h.Tick.Sub(current) > int32(b.opts.MaxAhead) {
		b.stats.TooFarAhead++
		return AddTooFarAhead
	}
	i := b.slot(h.Tick)
	if b.has[i] && b.ticks[i] == h.Tick {
		b.stats.Duplicates++
		return AddDuplicate
	}
	r := b.rec(i)
	copy(r, rec)
	if !b.validate(r) {
		return AddRefused
	}
	if b.has[i] {
		b.stats.Buffered-- // a stale slot (older tick never taken) is replaced
	}
	b.heads[i], b.ticks[i], b.has[i], b.missing[i] = h, h.Tick, true, false
	if !b.firstOK {
		b.first, b.firstOK = h.Tick, true
	}
	b.stats.Accepted++
	b.stats.Buffered++
	b.stats.MaxBuffered = max(b.stats.MaxBuffered, b.stats.Buffered)
	return AddAccepted
}

// Confirmed returns the tick up to which the client need not resend its
// inputs: the newest tick taken, held back to just before the oldest of
// the last codec.MaxInputsPerBatch ticks taken that ran on a substitute while
// their own input can still come (a tick from the first accepted one on,
// no copy of which has arrived since). The client resends every input
// after the confirmed tick, so a press whose every packet was lost still
// arrives and counts, late, on the next tick, instead of being trimmed
// from the client's batches unseen. ok is false before the first Take.
// It costs O(codec.MaxInputsPerBatch) and allocates nothing.
func (b *InputBuffer) Confirmed() (tick ecs.Tick, ok bool) {
	if !b.started {
		return 0, false
	}
	for k := min(codec.MaxInputsPerBatch, len(b.heads)) - 1; k >= 0; k-- {
		t := b.applied.Add(-k)
		if i := b.slot(t); b.missing[i] && b.ticks[i] == t && b.firstOK && !t.Before(b.first) {
			return t.Add(-1), true
		}
	}
	return b.applied, true
}

// copyLate copies a late input's record into the buffer's own scratch.
func (b *InputBuffer) copyLate(rec []byte) []byte {
	copy(b.late, rec)
	return b.late
}

// validate runs the game's Validate on r in place and counts what it did;
// it reports whether r is accepted.
func (b *InputBuffer) validate(r []byte) bool {
	if b.in == nil || b.in.Validate == nil {
		return true
	}
	clamped, refuse := b.in.Validate(codec.Ptr(r))
	if refuse != "" {
		b.stats.Refused++
		if _, ok := b.stats.RefusedBy[refuse]; !ok && len(b.stats.RefusedBy) >= maxRefuseReasons {
			refuse = "other"
		}
		b.stats.RefusedBy[refuse]++
		return false
	}
	if clamped {
		b.stats.Clamped++
	}
	return true
}

// Take returns the input to apply on tick and removes it: the client's own
// (real true) or the missing-input policy's substitute (real false,
// counted in Missing), with the presses of late inputs added. The record
// is valid until the next call. Call it exactly once per tick, in
// increasing tick order.
func (b *InputBuffer) Take(tick ecs.Tick) (h components.InputHeader, rec []byte, real bool) {
	i := b.slot(tick)
	if b.has[i] && b.ticks[i] == tick {
		h = b.heads[i]
		copy(b.out, b.rec(i))
		b.has[i] = false
		b.stats.Buffered--
		b.stats.Applied++
		copy(b.last, b.out)
		b.lastTick, b.hasLast = tick, true
		real = true
	} else {
		b.stats.Missing++
		h = components.InputHeader{Tick: tick}
		b.substitute()
		b.ticks[i], b.missing[i] = tick, true
		if b.has[i] { // an older tick that was never taken
			b.has[i] = false
			b.stats.Buffered--
		}
	}
	if b.carried {
		b.in.OrPresses(b.out, b.carry)
		clear(b.carry)
		b.carried = false
	}
	b.applied, b.started = tick, true
	return h, b.out, real
}

// substitute writes the missing-input policy's input into out.
func (b *InputBuffer) substitute() {
	clear(b.out)
	if b.in == nil || !b.hasLast {
		return
	}
	switch {
	case b.in.Substitute != nil:
		b.in.Substitute(codec.Ptr(b.last), codec.Ptr(b.out))
	case b.in.Missing == codec.MissingRepeatLast:
		copy(b.out, b.last)
	}
	b.in.ClearPresses(b.out)
}
