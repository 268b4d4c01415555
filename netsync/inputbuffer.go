package netsync

import (
	"fmt"
	"github.com/ghostwire/ghostwire/ecs"

	"github.com/ghostwire/ghostwire/components"
)

// MissingPolicy says what the server applies on a tick for which a client's
// input has not arrived.
type MissingPolicy uint8

const (
	// RepeatLast applies the client's previous input again (with its tick
	// changed): players mostly keep holding the same keys, so a late input
	// often turns out to equal the repeated one and the client's prediction
	// stays right. The default.
	RepeatLast MissingPolicy = iota
	// Neutral applies a zero input: the player lets go of everything.
	Neutral
)

// String names the policy.
func (p MissingPolicy) String() string {
	switch p {
	case RepeatLast:
		return "repeat-last"
	case Neutral:
		return "neutral"
	}
	return fmt.Sprintf("MissingPolicy(%d)", uint8(p))
}

// InputBufferOptions configures an [InputBuffer]. The zero value is usable.
type InputBufferOptions struct {
	// Capacity is the number of ticks buffered; 64 when zero. Allowed:
	// 8..4096.
	Capacity int
	// MaxAhead is how many ticks past the server's current tick an input
	// may be for; further ones are refused (a client cannot queue up
	// seconds of input). Capacity-1 when zero; at most Capacity-1.
	MaxAhead int
	// Missing is the policy for ticks without input.
	Missing MissingPolicy
	// OneShotButtons are buttons RepeatLast never repeats (fire, jump): a
	// press belongs to one tick, so a substitute must not press it again.
	OneShotButtons uint32
}

// InputStats counts what an [InputBuffer] did with what it was given.
type InputStats struct {
	Received    uint64 // commands offered to Add
	Accepted    uint64 // first copies stored for a future tick
	Duplicates  uint64 // copies of a tick already stored or applied (redundancy)
	Late        uint64 // first copies of a tick already run without them
	TooFarAhead uint64 // refused: beyond MaxAhead
	Rejected    uint64 // refused: NaN or infinite values
	Clamped     uint64 // move vectors longer than 1 scaled to length 1
	Applied     uint64 // ticks run with the client's own input
	Missing     uint64 // ticks run with the policy's substitute
	Buffered    int    // inputs held now
	MaxBuffered int    // most inputs held at once
}

// AddResult says what Add did with one command.
type AddResult uint8

// The results of Add.
const (
	Accepted AddResult = iota
	Duplicate
	Late
	TooFarAhead
	Rejected
)

// InputBuffer is the server's per-connection store of input commands keyed
// by tick. It drops duplicates and ticks already run, refuses ticks too far
// ahead and non-finite values, clamps move vectors longer than 1, and hands
// out exactly one input per tick (a client that sends faster gains
// nothing). Its memory is fixed at construction.
type InputBuffer struct {
	opts    InputBufferOptions
	inputs  []components.InputCommand
	ticks   []ecs.Tick
	has     []bool
	missing []bool   // per slot: tick run without input (to count late arrivals)
	applied ecs.Tick // newest tick taken
	started bool
	last    components.InputCommand
	hasLast bool
	stats   InputStats
}

// NewInputBuffer returns a buffer. It errors naming the value when
// Capacity is outside 8..4096 or MaxAhead outside 1..Capacity-1, or the
// policy is unknown.
func NewInputBuffer(opts InputBufferOptions) (*InputBuffer, error) {
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
	if opts.Missing > Neutral {
		return nil, fmt.Errorf("netsync: unknown missing-input policy %d", opts.Missing)
	}
	n := opts.Capacity
	return &InputBuffer{opts: opts, inputs: make([]components.InputCommand, n), ticks: make([]ecs.Tick, n),
		has: make([]bool, n), missing: make([]bool, n)}, nil
}

// Stats returns the counters.
func (b *InputBuffer) Stats() InputStats { return b.stats }

// Applied returns the newest tick taken and whether any was.
func (b *InputBuffer) Applied() (ecs.Tick, bool) { return b.applied, b.started }

func (b *InputBuffer) slot(t ecs.Tick) int { return int(uint32(t) % uint32(len(b.inputs))) }

// Add offers one command. current is the server's newest simulated tick:
// commands for it or earlier are duplicates or late, commands beyond
// current+MaxAhead are refused.
func (b *InputBuffer) Add(c components.InputCommand, current ecs.Tick) AddResult {
	b.stats.Received++
	if !finite(c.MoveX) || !finite(c.MoveY) || !finite(c.Aim) || !finite(c.ViewFraction) ||
		!finite(c.InterpolationDelay) || !finite(c.OriginX) || !finite(c.OriginY) || !finite(c.OriginZ) {
		b.stats.Rejected++
		return Rejected
	}
	if !c.Tick.After(current) {
		i := b.slot(c.Tick)
		if b.missing[i] && b.ticks[i] == c.Tick {
			b.missing[i] = false
			b.stats.Late++
			return Late
		}
		b.stats.Duplicates++
		return Duplicate
	}
	if c.Tick.Sub(current) > int32(b.opts.MaxAhead) {
		b.stats.TooFarAhead++
		return TooFarAhead
	}
	i := b.slot(c.Tick)
	if b.has[i] && b.ticks[i] == c.Tick {
		b.stats.Duplicates++
		return Duplicate
	}
	if moveLen2(c.MoveX, c.MoveY) > 1 {
		c.MoveX, c.MoveY = QuantizeMove(c.MoveX, c.MoveY)
		b.stats.Clamped++
	}
	if b.has[i] {
		b.stats.Buffered-- // a stale slot (older tick never taken) is replaced
	}
	b.inputs[i], b.ticks[i], b.has[i], b.missing[i] = c, c.Tick, true, false
	b.stats.Accepted++
	b.stats.Buffered++
	b.stats.MaxBuffered = max(b.stats.MaxBuffered, b.stats.Buffered)
	return Accepted
}

// Take returns the input to apply on tick and removes it: the client's own
// (real true) or the missing-input policy's substitute (real false, counted
// in Missing). Call it exactly once per tick, in increasing tick order.
func (b *InputBuffer) Take(tick ecs.Tick) (c components.InputCommand, real bool) {
	i := b.slot(tick)
	if b.has[i] && b.ticks[i] == tick {
		c = b.inputs[i]
		b.has[i] = false
		b.stats.Buffered--
		b.stats.Applied++
		b.last, b.hasLast = c, true
		real = true
	} else {
		b.stats.Missing++
		if b.opts.Missing == RepeatLast && b.hasLast {
			c = b.last
			c.Buttons &^= b.opts.OneShotButtons
		}
		c.Tick = tick
		b.ticks[i], b.missing[i] = tick, true
		if b.has[i] { // an older tick that was never taken
			b.has[i] = false
			b.stats.Buffered--
		}
	}
	b.applied, b.started = tick, true
	return c, real
}
