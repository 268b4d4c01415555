package ghostreg

import (
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// states is what a client keeps of one ghost as the server sent it: its
// states of the last protocol.RelativeWindow ticks and its newest one,
// oldest first in a ring. A record coded relative to a baseline decodes
// against the state at that tick; a plain delta record takes the
// components it leaves out from it too. A ghost that rarely changes
// holds one state; one that changes every tick at most
// RelativeWindow + 1.
type states struct {
	typ   uint16
	size  int       // bytes of one state: each component 8-aligned, as in a snapshot
	ticks []gw.Tick // per slot of the ring
	data  []byte    // the slots' states, size bytes each
	head  int       // the oldest state's slot
	n     int       // states held
}

// newest returns the newest state and its tick.
func (s *states) newest() (gw.Tick, []byte) {
	i := (s.head + s.n - 1) % len(s.ticks)
	return s.ticks[i], s.data[i*s.size : (i+1)*s.size]
}

// at returns the state of tick, and false when none is held.
func (s *states) at(tick gw.Tick) ([]byte, bool) {
	for k := s.n - 1; k >= 0; k-- {
		i := (s.head + k) % len(s.ticks)
		if s.ticks[i] == tick {
			return s.data[i*s.size : (i+1)*s.size], true
		}
	}
	return nil, false
}

// next returns the slot of the state of tick, the newest (snapshots are
// completed in tick order), after dropping the states older than the
// relative window before it: a later record's baseline is never older.
// A second record of the same tick replaces the state of the first.
func (s *states) next(tick gw.Tick) []byte {
	if s.n > 0 {
		if t, d := s.newest(); t == tick {
			return d
		}
	}
	for s.n > 0 && tick.Sub(s.ticks[s.head]) > protocol.RelativeWindow {
		s.head = (s.head + 1) % len(s.ticks)
		s.n--
	}
	if s.n == len(s.ticks) {
		s.grow()
	}
	i := (s.head + s.n) % len(s.ticks)
	s.n++
	s.ticks[i] = tick
	return s.data[i*s.size : (i+1)*s.size]
}

// grow doubles the ring, keeping the states in order from slot 0: a
// ghost's ring grows a few times in its life, to at most
// RelativeWindow + 2 states, and then allocates nothing.
func (s *states) grow() {
	m := max(1, 2*len(s.ticks))
	ticks, data := make([]gw.Tick, 0, m), make([]byte, 0, m*s.size)
	for k := range s.n {
		i := (s.head + k) % len(s.ticks)
		ticks = append(ticks, s.ticks[i])
		data = append(data, s.data[i*s.size:(i+1)*s.size]...)
	}
	s.ticks, s.data, s.head = ticks[:m], data[:m*s.size], 0
}
