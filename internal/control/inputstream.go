package control

import (
	"fmt"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
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

// InputStream is the client's record of its own inputs: a tick-indexed
// ring (slots carry their tick) of headers and records of the game's input
// type, read by prediction and replay, and the source of the batches sent
// to the server, trimmed by what the server has confirmed.
type InputStream struct {
	schema      *codec.Schema
	coder       codec.Coder
	size        int
	capacity    int
	mask        uint32
	heads       []components.InputHeader
	valid       []bool
	data        []byte
	redundancy  int
	newest      ecs.Tick
	has         bool
	confirmed   ecs.Tick
	confirmedOK bool
}

// NewInputStream returns a stream for the schema's input type. It errors
// naming the value when an option is out of range.
func NewInputStream(s *codec.Schema, opts InputStreamOptions) (*InputStream, error) {
	if opts.Capacity == 0 {
		opts.Capacity = 256
	}
	if opts.Redundancy == 0 {
		opts.Redundancy = 4
	}
	if opts.Capacity < 16 || opts.Capacity > 65536 {
		return nil, fmt.Errorf("netsync: input stream capacity %d outside 16..65536", opts.Capacity)
	}
	if opts.Redundancy < 1 || opts.Redundancy > codec.MaxInputsPerBatch {
		return nil, fmt.Errorf("netsync: input redundancy %d outside 1..%d", opts.Redundancy, codec.MaxInputsPerBatch)
	}
	// A power of two keeps neighbouring ticks in distinct slots across the
	// tick wrap.
	n := 1
	for n < opts.Capacity {
		n <<= 1
	}
	size := s.InputSize()
	return &InputStream{schema: s, size: size, capacity: opts.Capacity, mask: uint32(n - 1),
		heads: make([]components.InputHeader, n), valid: make([]bool, n), data: make([]byte, n*size),
		redundancy: opts.Redundancy}, nil
}

// Capacity returns the number of ticks of input kept.
func (s *InputStream) Capacity() int { return s.capacity }

func (s *InputStream) slot(t ecs.Tick) int { return int(uint32(t) & s.mask) }

func (s *InputStream) rec(i int) []byte { return s.data[i*s.size : (i+1)*s.size] }

// Record stores the input of h.Tick: the header with its view quantized
// and a copy of rec (the game's input type's bytes) rounded to what the
// wire carries and validated as the server will. It returns the stored
// record, valid until the ring wraps: what prediction must use. refuse is
// the reason the server would refuse it ("" when accepted).
func (s *InputStream) Record(h components.InputHeader, rec []byte) (stored []byte, refuse string) {
	codec.QuantizeHeader(&h)
	i := s.slot(h.Tick)
	r := s.rec(i)
	copy(r, rec)
	_, refuse = s.coder.QuantizeInput(s.schema, codec.Ptr(r))
	s.heads[i], s.valid[i] = h, true
	if !s.has || h.Tick.After(s.newest) {
		s.newest, s.has = h.Tick, true
	}
	return r, refuse
}

// Get returns the input of tick, if the ring still holds it; the record is
// the stream's own memory.
func (s *InputStream) Get(tick ecs.Tick) (h components.InputHeader, rec []byte, ok bool) {
	i := s.slot(tick)
	if !s.valid[i] || s.heads[i].Tick != tick || s.newest.Sub(tick) >= int32(s.capacity) {
		return components.InputHeader{}, nil, false
	}
	return s.heads[i], s.rec(i), true
}

// Newest returns the newest tick recorded; ok is false before the first.
func (s *InputStream) Newest() (tick ecs.Tick, ok bool) { return s.newest, s.has }

// Confirm notes that the server has applied inputs up to tick.
func (s *InputStream) Confirm(tick ecs.Tick) {
	if !s.confirmedOK || tick.After(s.confirmed) {
		s.confirmed, s.confirmedOK = tick, true
	}
}

// Confirmed returns the newest tick the server confirmed; ok is false
// before the first confirmation.
func (s *InputStream) Confirmed() (tick ecs.Tick, ok bool) { return s.confirmed, s.confirmedOK }

// Batch fills b with the inputs to send now: every unconfirmed one up to
// codec.MaxInputsPerBatch, and never fewer than Redundancy (when the ring has
// them), oldest first, ending with the newest. It reuses b's capacity and
// leaves it empty when nothing was recorded.
func (s *InputStream) Batch(b *protocol.InputBatch) {
	b.Heads, b.Data = b.Heads[:0], b.Data[:0]
	if !s.has {
		return
	}
	k := codec.MaxInputsPerBatch
	if s.confirmedOK {
		if unconfirmed := int(s.newest.Sub(s.confirmed)); unconfirmed < k {
			k = max(unconfirmed, s.redundancy)
		}
	}
	for t := s.newest.Add(1 - k); ; t++ {
		if h, rec, ok := s.Get(t); ok {
			b.Heads = append(b.Heads, h)
			b.Data = append(b.Data, rec...)
		} else {
			b.Heads, b.Data = b.Heads[:0], b.Data[:0] // keep the batch consecutive
		}
		if t == s.newest {
			break
		}
	}
}
