// Package ring is the bounded FIFO of datagram buffers the WebSocket and
// WebTransport connections queue sends and receipts in.
package ring

// Ring is a bounded FIFO of datagram buffers. Its storage is allocated once,
// so pushing and popping never allocate. It is not safe for concurrent use;
// a connection guards its rings with its mutex.
type Ring struct {
	items [][]byte
	head  int // index of the oldest item
	n     int // items queued
}

// New returns a ring holding at most capacity buffers.
func New(capacity int) Ring { return Ring{items: make([][]byte, capacity)} }

// Len returns the buffers queued.
func (r *Ring) Len() int { return r.n }

// Full reports whether the ring holds capacity buffers.
func (r *Ring) Full() bool { return r.n == len(r.items) }

// Push appends b. The ring must not be full.
func (r *Ring) Push(b []byte) {
	r.items[(r.head+r.n)%len(r.items)] = b
	r.n++
}

// Pop removes and returns the oldest buffer, or nil and false when empty.
func (r *Ring) Pop() ([]byte, bool) {
	if r.n == 0 {
		return nil, false
	}
	b := r.items[r.head]
	r.items[r.head] = nil // the ring does not keep a popped buffer reachable
	r.head = (r.head + 1) % len(r.items)
	r.n--
	return b, true
}
