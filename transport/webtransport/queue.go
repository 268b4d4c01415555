package webtransport

// ring is a bounded FIFO of datagram buffers. Its storage is allocated once,
// so pushing and popping never allocate. It is not safe for concurrent use;
// conn guards its rings with its mutex.
type ring struct {
	items [][]byte
	head  int // index of the oldest item
	n     int // items queued
}

func newRing(capacity int) ring { return ring{items: make([][]byte, capacity)} }

func (r *ring) len() int { return r.n }

func (r *ring) full() bool { return r.n == len(r.items) }

// push appends b. The ring must not be full.
func (r *ring) push(b []byte) {
	r.items[(r.head+r.n)%len(r.items)] = b
	r.n++
}

// pop removes and returns the oldest buffer, or nil and false when empty.
func (r *ring) pop() ([]byte, bool) {
	if r.n == 0 {
		return nil, false
	}
	b := r.items[r.head]
	r.items[r.head] = nil // the ring does not keep a popped buffer reachable
	r.head = (r.head + 1) % len(r.items)
	r.n--
	return b, true
}
