package ghostreg

import (
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// encodings keeps a ghost's past encodings on the server, for records
// coded relative to a baseline (see protocol.EncodedGhost.BaseSrc): the
// last protocol.RelativeWindow of them, each with the tick it became
// current, in a ring, oldest first. A ghost's encoding changes at most
// once a tick, so with its current one they cover every tick a relative
// baseline may lie at. A ghost that never changes after its spawn keeps
// none.
type encodings struct {
	size int       // bytes of one encoding (a ghost type's are all as long)
	from []gw.Tick // per slot
	data []byte    // the slots' encodings, size bytes each
	head int       // the oldest one's slot
	n    int
}

// push keeps enc, current from tick from until now, as the newest past
// encoding, dropping the oldest when RelativeWindow are kept. The ring
// is made whole at a ghost's first change (RelativeWindow encodings and
// ticks: under 1 KB for a ghost of 28 bytes of components), so it
// allocates once in the ghost's life.
func (e *encodings) push(enc []byte, from gw.Tick) {
	if e.from == nil {
		e.size = len(enc)
		e.from, e.data = make([]gw.Tick, protocol.RelativeWindow), make([]byte, protocol.RelativeWindow*e.size)
	}
	if e.n == len(e.from) { // full: the oldest goes
		e.head = (e.head + 1) % len(e.from)
		e.n--
	}
	i := (e.head + e.n) % len(e.from)
	e.n++
	e.from[i] = from
	copy(e.data[i*e.size:(i+1)*e.size], enc)
}

// at returns the past encoding current at tick base, now ticks after it,
// and the tick it became current; false when the ring does not reach
// that far back. Ticks are compared by their age at now, which wraps
// safely.
func (e *encodings) at(base, now gw.Tick) ([]byte, gw.Tick, bool) {
	back := age(base, now)
	for k := e.n - 1; k >= 0; k-- {
		i := (e.head + k) % len(e.from)
		if age(e.from[i], now) >= back {
			return e.data[i*e.size : (i+1)*e.size], e.from[i], true
		}
	}
	return nil, 0, false
}
