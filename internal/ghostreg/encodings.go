package ghostreg

import (
	"encoding/binary"
	"sort"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// encodings keeps a ghost's past encodings on the server, for records
// coded relative to a baseline (see protocol.EncodedGhost.BaseSrc): the
// last protocol.RelativeWindow of them, each with the tick it became
// current, oldest first in a ring of slots (a tick in 4 bytes, then the
// encoding). A ghost's encoding changes at most once a tick, so with its
// current one they cover every tick a relative baseline may lie at. A
// ghost that never changes after its spawn keeps none; one that changes
// takes its ring from its type's slab at its first change.
type encodings struct {
	size int    // bytes of one encoding (a ghost type's are all as long)
	buf  []byte // RelativeWindow slots, once the ghost changed
	head int    // the oldest one's slot
	n    int
}

// encodingSlab returns the slab of the rings of encodings of size bytes.
func encodingSlab(size int) *slab { return &slab{size: protocol.RelativeWindow * (4 + size)} }

// push keeps enc, current from tick from until now, as the newest past
// encoding, dropping the oldest when RelativeWindow are kept.
func (e *encodings) push(enc []byte, from gw.Tick, ring *slab) {
	if e.buf == nil {
		e.size, e.buf = len(enc), ring.get()
	}
	if e.n == protocol.RelativeWindow { // full: the oldest goes
		e.head = (e.head + 1) % protocol.RelativeWindow
		e.n--
	}
	i := (e.head + e.n) % protocol.RelativeWindow
	e.n++
	at := i * (4 + e.size)
	binary.LittleEndian.PutUint32(e.buf[at:], uint32(from))
	copy(e.buf[at+4:at+4+e.size], enc)
}

// at returns the past encoding current at tick base, now ticks after it,
// and the tick it became current; false when the ring does not reach
// that far back. Ticks are compared by their age at now, which wraps
// safely.
func (e *encodings) at(base, now gw.Tick) ([]byte, gw.Tick, bool) {
	back := age(base, now)
	// The newest one at least as old as the baseline: ages fall from the
	// oldest to the newest, so a binary search over the ring finds it.
	from := func(k int) gw.Tick {
		return gw.Tick(binary.LittleEndian.Uint32(e.buf[(e.head+k)%protocol.RelativeWindow*(4+e.size):]))
	}
	k := sort.Search(e.n, func(k int) bool { return age(from(k), now) < back }) - 1
	if k < 0 {
		return nil, 0, false
	}
	at := (e.head+k)%protocol.RelativeWindow*(4+e.size) + 4
	return e.buf[at : at+e.size], from(k), true
}

// release gives the ring back to its slab; e is empty afterwards.
func (e *encodings) release(ring *slab) {
	if e.buf != nil {
		ring.put(e.buf)
	}
	*e = encodings{}
}
