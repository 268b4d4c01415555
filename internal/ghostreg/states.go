package ghostreg

import (
	"encoding/binary"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// states is what a client keeps of one ghost as the server sent it: its
// states of the last protocol.RelativeWindow ticks and its newest one,
// oldest first in a ring of slots, each a tick (4 bytes) and a state. A
// record coded relative to a baseline decodes against the state of that
// tick; a plain delta record takes the components it leaves out from it
// too. A ghost that never changes holds one slot; one that changes
// gets statesMax slots at its first change, from its type's slabs.
type states struct {
	typ  uint16
	size int    // bytes of one state: each component 8-aligned, as in a snapshot
	buf  []byte // the ring: len(buf) / (4 + size) slots
	head int    // the oldest state's slot
	n    int    // states held
}

// statesMax is the most states a ghost holds: one per tick of the
// relative window, the newest and the one being added.
const statesMax = protocol.RelativeWindow + 2

// stateSlabs are the slabs of one ghost type's rings: one slot, and
// statesMax slots.
type stateSlabs [2]slab

func newStateSlabs(size int) *stateSlabs {
	return &stateSlabs{{size: 4 + size}, {size: statesMax * (4 + size)}}
}

func (s *states) slots() int { return len(s.buf) / (4 + s.size) }

func (s *states) tick(i int) gw.Tick {
	return gw.Tick(binary.LittleEndian.Uint32(s.buf[i*(4+s.size):]))
}

func (s *states) state(i int) []byte {
	at := i*(4+s.size) + 4
	return s.buf[at : at+s.size]
}

// newest returns the newest state and its tick.
func (s *states) newest() (gw.Tick, []byte) {
	i := (s.head + s.n - 1) % s.slots()
	return s.tick(i), s.state(i)
}

// at returns the state of tick, and false when none is held.
func (s *states) at(tick gw.Tick) ([]byte, bool) {
	for k := s.n - 1; k >= 0; k-- {
		if i := (s.head + k) % s.slots(); s.tick(i) == tick {
			return s.state(i), true
		}
	}
	return nil, false
}

// next returns the state of tick to fill in, the newest (snapshots are
// completed in tick order), after dropping the states older than the
// relative window before it: a later record's baseline is never older.
// A second record of the same tick replaces the state of the first. A
// ghost's first state and its first change take their rings from slabs.
func (s *states) next(tick gw.Tick, slabs *stateSlabs) []byte {
	if s.n > 0 {
		if t, d := s.newest(); t == tick {
			return d
		}
	}
	for s.n > 0 && tick.Sub(s.tick(s.head)) > protocol.RelativeWindow {
		s.head = (s.head + 1) % s.slots()
		s.n--
	}
	switch {
	case s.buf == nil:
		s.buf = slabs[0].get()
	case s.n == s.slots(): // one slot, held: the ghost changed
		ring := slabs[1].get()
		copy(ring, s.buf[s.head*(4+s.size):(s.head+1)*(4+s.size)])
		slabs[0].put(s.buf)
		s.buf, s.head = ring, 0
	}
	i := (s.head + s.n) % s.slots()
	s.n++
	binary.LittleEndian.PutUint32(s.buf[i*(4+s.size):], uint32(tick))
	return s.state(i)
}

// release gives the ring back to its slabs; s is empty afterwards.
func (s *states) release(slabs *stateSlabs) {
	if s.buf != nil {
		slabs[min(1, s.slots()-1)].put(s.buf)
	}
	s.buf, s.head, s.n = nil, 0, 0
}
