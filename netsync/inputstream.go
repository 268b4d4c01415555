package netsync

import (
	"fmt"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
)

// InputStreamOptions configures an [InputStream]. The zero value is usable.
type InputStreamOptions struct {
	// Capacity is the number of ticks of input kept for replay and resend;
	// 256 when zero. Allowed: 16..65536. It must exceed the longest
	// rollback.
	Capacity int
	// Redundancy is the least number of newest inputs every packet
	// carries, confirmed or not, so one lost packet costs nothing; 4 when
	// zero. Allowed: 1..MaxInputsPerBatch.
	Redundancy int
}

// InputStream is the client's record of its own input commands: a
// tick-indexed ring (slots carry their tick) read by prediction and
// replay, and the source of the batches sent to the server, trimmed by
// what the server has confirmed.
type InputStream struct {
	ring        *ecs.TickRing[components.InputCommand]
	redundancy  int
	newest      ecs.Tick
	has         bool
	confirmed   ecs.Tick
	confirmedOK bool
}

// NewInputStream returns a stream. It errors naming the value when an
// option is out of range.
func NewInputStream(opts InputStreamOptions) (*InputStream, error) {
	if opts.Capacity == 0 {
		opts.Capacity = 256
	}
	if opts.Redundancy == 0 {
		opts.Redundancy = 4
	}
	if opts.Capacity < 16 || opts.Capacity > 65536 {
		return nil, fmt.Errorf("netsync: input stream capacity %d outside 16..65536", opts.Capacity)
	}
	if opts.Redundancy < 1 || opts.Redundancy > MaxInputsPerBatch {
		return nil, fmt.Errorf("netsync: input redundancy %d outside 1..%d", opts.Redundancy, MaxInputsPerBatch)
	}
	return &InputStream{ring: ecs.NewTickRing[components.InputCommand](opts.Capacity), redundancy: opts.Redundancy}, nil
}

// Capacity returns the number of ticks of input kept.
func (s *InputStream) Capacity() int { return s.ring.Size() }

// Record quantizes c (see [QuantizeInput]), stores it as the input of
// c.Tick and returns the stored value, which is what prediction must use.
func (s *InputStream) Record(c components.InputCommand) components.InputCommand {
	QuantizeInput(&c)
	s.ring.Set(c.Tick, c)
	if !s.has || c.Tick.After(s.newest) {
		s.newest, s.has = c.Tick, true
	}
	return c
}

// Get returns the input of tick, if the ring still holds it.
func (s *InputStream) Get(tick ecs.Tick) (components.InputCommand, bool) { return s.ring.Get(tick) }

// Confirm notes that the server has applied inputs up to tick.
func (s *InputStream) Confirm(tick ecs.Tick) {
	if !s.confirmedOK || tick.After(s.confirmed) {
		s.confirmed, s.confirmedOK = tick, true
	}
}

// Confirmed returns the newest tick the server confirmed; ok is false
// before the first confirmation.
func (s *InputStream) Confirmed() (tick ecs.Tick, ok bool) { return s.confirmed, s.confirmedOK }

// Batch fills b.Inputs with the inputs to send now: every unconfirmed one
// up to MaxInputsPerBatch, and never fewer than Redundancy (when the ring
// has them), oldest first, ending with the newest. It reuses b.Inputs'
// capacity and leaves it empty when nothing was recorded.
func (s *InputStream) Batch(b *InputBatch) {
	b.Inputs = b.Inputs[:0]
	if !s.has {
		return
	}
	k := MaxInputsPerBatch
	if s.confirmedOK {
		if unconfirmed := int(s.newest.Sub(s.confirmed)); unconfirmed < k {
			k = max(unconfirmed, s.redundancy)
		}
	}
	for t := s.newest.Add(1 - k); ; t++ {
		if c, ok := s.ring.Get(t); ok {
			b.Inputs = append(b.Inputs, c)
		} else {
			b.Inputs = b.Inputs[:0] // keep the batch consecutive
		}
		if t == s.newest {
			break
		}
	}
}
