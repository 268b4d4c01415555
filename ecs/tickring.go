package ecs

import "fmt"

// TickRing is a fixed-size ring of values indexed by tick number (slot =
// tick mod the slot count, a power of two at least the size asked for, so
// neighbouring ticks never share a slot across the tick wrap). Every slot
// carries the tick it holds, so asking for a tick that has been overwritten
// fails instead of returning another tick's data. It never allocates after
// construction.
type TickRing[T any] struct {
	items []T
	ticks []Tick
	valid []bool
	size  int
	mask  uint32
}

// NewTickRing returns a ring of size slots. It panics on a size outside
// 1..1<<20, a programming error.
func NewTickRing[T any](size int) *TickRing[T] {
	if size < 1 || size > 1<<20 {
		panic(fmt.Sprintf("ecs: tick ring size %d outside 1..%d", size, 1<<20))
	}
	n := ringSize(size)
	return &TickRing[T]{items: make([]T, n), ticks: make([]Tick, n), valid: make([]bool, n), size: size, mask: uint32(n - 1)}
}

// Size returns the size asked for: the ring holds at least the last Size
// ticks.
func (r *TickRing[T]) Size() int { return r.size }

func (r *TickRing[T]) slot(tick Tick) int { return int(uint32(tick) & r.mask) }

// Set stores v as the value of tick, replacing whatever tick held the slot.
func (r *TickRing[T]) Set(tick Tick, v T) {
	i := r.slot(tick)
	r.items[i], r.ticks[i], r.valid[i] = v, tick, true
}

// Get returns the value of tick; ok is false if the slot holds another tick
// or nothing.
func (r *TickRing[T]) Get(tick Tick) (v T, ok bool) {
	i := r.slot(tick)
	if !r.valid[i] || r.ticks[i] != tick {
		return v, false
	}
	return r.items[i], true
}

// Ptr returns a pointer to the value of tick, or nil like Get's !ok. The
// pointer is valid until the slot is set again.
func (r *TickRing[T]) Ptr(tick Tick) *T {
	i := r.slot(tick)
	if !r.valid[i] || r.ticks[i] != tick {
		return nil
	}
	return &r.items[i]
}

// Has reports whether the ring holds tick.
func (r *TickRing[T]) Has(tick Tick) bool {
	i := r.slot(tick)
	return r.valid[i] && r.ticks[i] == tick
}

// Delete forgets tick if the ring holds it.
func (r *TickRing[T]) Delete(tick Tick) {
	i := r.slot(tick)
	if r.valid[i] && r.ticks[i] == tick {
		var zero T
		r.items[i], r.valid[i] = zero, false
	}
}

// Clear forgets every tick.
func (r *TickRing[T]) Clear() {
	clear(r.items)
	clear(r.valid)
}
