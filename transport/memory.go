package transport

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// defaultMaxInFlight is the in-flight bound of each direction of a memory
// link when memoryOptions.maxInFlight is zero.
const defaultMaxInFlight = 4096

// memoryOptions tunes a MemoryNetwork. The zero value gives the defaults.
type memoryOptions struct {
	// maxInFlight bounds the datagrams scheduled but not yet received in each
	// direction of each link, like a socket buffer; a datagram (or duplicate
	// copy) beyond it is dropped and counted in the sender's Stats.Dropped.
	// Zero or negative means defaultMaxInFlight.
	maxInFlight int
}

// MemoryNetwork connects Conns in memory, with delivery driven only by its
// Clock: a datagram becomes receivable when its delivery time is at or before
// Clock.Now() at Receive time. It is safe for concurrent use. Send and
// Receive cost O(log n) in the datagrams in flight and do not allocate once a
// link's buffers have grown to its traffic.
//
// Each link gets an index in creation order (Pair and Dial share the
// counter), and each direction of a link draws from its own random source
// derived from the network seed and that index. The same seed, the same link
// creation order and the same sends therefore give the same deliveries, and
// traffic on one link never changes the draws of another.
type MemoryNetwork struct {
	clock       Clock
	seed        uint64
	maxInFlight int

	mu        sync.Mutex
	links     uint64 // links created so far; the next link's index
	listeners map[string]*memListener
}

// NewMemoryNetwork returns an empty network reading clock, with randomness
// derived from seed. Each direction of each link holds at most 4096
// datagrams in flight, like a socket buffer; a datagram (or duplicate copy)
// beyond that is dropped and counted in the sender's Stats.Dropped. It
// panics if clock is nil.
func NewMemoryNetwork(clock Clock, seed uint64) *MemoryNetwork {
	return newMemoryNetwork(clock, seed, memoryOptions{})
}

// newMemoryNetwork is NewMemoryNetwork with explicit options.
func newMemoryNetwork(clock Clock, seed uint64, opts memoryOptions) *MemoryNetwork {
	if clock == nil {
		panic("transport: NewMemoryNetwork with a nil Clock")
	}
	if opts.maxInFlight <= 0 {
		opts.maxInFlight = defaultMaxInFlight
	}
	return &MemoryNetwork{
		clock:       clock,
		seed:        seed,
		maxInFlight: opts.maxInFlight,
		listeners:   make(map[string]*memListener),
	}
}

// Pair creates a connected client/server pair with the given conditions. It
// returns an error naming the first field of c out of range (Latency and
// Jitter in [0, 1h], Loss, Duplicate and Reorder in [0, 1], Bandwidth in
// [0, 1e10]).
func (n *MemoryNetwork) Pair(c Conditions) (client, server Conn, err error) {
	if err := c.validate(); err != nil {
		return nil, nil, err
	}
	n.mu.Lock()
	l := n.newLinkLocked(c)
	n.mu.Unlock()
	return &memConn{link: l, side: clientSide}, &memConn{link: l, side: serverSide}, nil
}

// Listen starts accepting connections dialled to addr. It returns an error
// for an empty addr and for an addr that already has an open listener.
// The listener's Close frees the address for a new Listen; connections
// dialled but not accepted are closed then, so their clients see ErrClosed.
func (n *MemoryNetwork) Listen(addr string) (Listener, error) {
	if addr == "" {
		return nil, fmt.Errorf("%w: empty address", errInvalidAddr)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.listeners[addr]; ok {
		return nil, fmt.Errorf("%w: %q", errAddrInUse, addr)
	}
	l := &memListener{network: n, addr: addr}
	n.listeners[addr] = l
	return l, nil
}

// Dial connects to the listener at addr with the given conditions and returns
// the client end; the server end is queued for the listener's Accept. It
// returns an error naming the field when c is out of range (as Pair) and
// one naming addr when no open listener has it.
func (n *MemoryNetwork) Dial(addr string, c Conditions) (Conn, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	ln, ok := n.listeners[addr]
	if !ok {
		return nil, fmt.Errorf("%w: %q", errNoListener, addr)
	}
	l := n.newLinkLocked(c)
	ln.pending = append(ln.pending, &memConn{link: l, side: serverSide})
	return &memConn{link: l, side: clientSide}, nil
}

func (n *MemoryNetwork) newLinkLocked(c Conditions) *link {
	index := n.links
	n.links++
	l := &link{clock: n.clock, maxInFlight: n.maxInFlight}
	// Two streams per link, one per direction, so the directions do not share draws either.
	l.dirs[clientSide].cond = newConditioner(c.Up, n.seed, 2*index)
	l.dirs[serverSide].cond = newConditioner(c.Down, n.seed, 2*index+1)
	l.dirs[clientSide].mark()
	l.dirs[serverSide].mark()
	return l
}

// memListener accepts connections dialled to its address on a
// MemoryNetwork. It is safe for concurrent use.
type memListener struct {
	network *MemoryNetwork
	addr    string
	pending []Conn // server ends dialled but not yet accepted; guarded by network.mu
	closed  bool   // guarded by network.mu
}

// Accept returns the server end of the oldest dialled, not yet accepted
// connection, or nil and false when there is none or the listener is closed.
// It never blocks.
func (l *memListener) Accept() (Conn, bool) {
	l.network.mu.Lock()
	defer l.network.mu.Unlock()
	if l.closed || len(l.pending) == 0 {
		return nil, false
	}
	c := l.pending[0]
	l.pending[0] = nil
	l.pending = l.pending[1:]
	return c, true
}

// Close stops the listener and frees its address for a new Listen. Dialled
// connections it had not accepted are closed, so their clients see
// ErrClosed. Closing twice returns ErrClosed.
func (l *memListener) Close() error {
	l.network.mu.Lock()
	defer l.network.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.closed = true
	delete(l.network.listeners, l.addr)
	for _, c := range l.pending {
		_ = c.Close() // first Close of an unaccepted end cannot fail
	}
	l.pending = nil
	return nil
}

// side indexes the two ends of a link; a direction is indexed by its sender.
type side int

const (
	clientSide side = 0 // sends Up
	serverSide side = 1 // sends Down
)

// direction is one way of a link: its conditions and its in-flight queue.
type direction struct {
	cond  conditioner
	queue flightQueue
	// next is when the earliest queued datagram is due (math.MaxInt64
	// when none is), set under the link's mutex and read without it: a
	// receiver with nothing due returns without locking, as a game loop
	// polls every connection every step.
	next atomic.Int64
}

// mark sets d.next from its queue; the link's mutex is held.
func (d *direction) mark() {
	if d.queue.len() == 0 {
		d.next.Store(math.MaxInt64)
		return
	}
	d.next.Store(int64(d.queue.items[0].at))
}

// link is the shared state of both ends. One mutex guards it all, so a Conn
// used from a socket-style goroutine does not race with the game loop.
type link struct {
	clock       Clock
	maxInFlight int

	mu     sync.Mutex
	dirs   [2]direction // indexed by sending side
	stats  [2]Stats     // indexed by side
	closed [2]bool      // indexed by side
	free   [][]byte     // spare MaxDatagramSize buffers, so steady-state traffic does not allocate
	// buffers counts the buffers the link took: free has room for all of
	// them, so a burst coming back grows nothing.
	buffers int
}

func (l *link) buffer() []byte {
	if k := len(l.free); k > 0 {
		b := l.free[k-1]
		l.free = l.free[:k-1]
		return b
	}
	l.buffers++
	l.free = slices.Grow(l.free, l.buffers-len(l.free))
	return make([]byte, MaxDatagramSize)
}

func (l *link) release(b []byte) { l.free = append(l.free, b[:MaxDatagramSize]) }

// schedule copies p into a pooled buffer and queues it on d, or counts a drop
// when d is full.
func (l *link) schedule(d *direction, st *Stats, at time.Duration, p []byte) {
	if d.queue.len() >= l.maxInFlight {
		st.Dropped++
		return
	}
	b := l.buffer()
	d.queue.push(at, b[:copy(b, p)])
	d.mark()
}

// discard returns every datagram queued on d to the free list.
func (l *link) discard(d *direction) {
	for d.queue.len() > 0 {
		l.release(d.queue.pop().data)
	}
	d.mark()
}

// memConn is one end of a memory link.
type memConn struct {
	link *link
	side side
}

func (c *memConn) Send(p []byte) error {
	now := c.link.clock.Now()
	l := c.link
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed[clientSide] || l.closed[serverSide] {
		return ErrClosed
	}
	if err := checkSize(len(p)); err != nil {
		return err
	}
	st := &l.stats[c.side]
	st.Sent++
	st.SentBytes += uint64(len(p))
	d := &l.dirs[c.side]
	// A full queue refuses before any draw, as a full socket buffer would.
	if d.queue.len() >= l.maxInFlight {
		st.Dropped++
		return nil
	}
	v := d.cond.decide(now, len(p))
	if v.lost {
		st.Lost++
		return nil
	}
	if v.reordered {
		st.Reordered++
	}
	l.schedule(d, st, v.at, p)
	if v.dup {
		st.Duplicated++
		l.schedule(d, st, v.dupAt, p)
	}
	return nil
}

func (c *memConn) Receive(buf []byte) (int, bool) {
	now := c.link.clock.Now()
	l := c.link
	d := &l.dirs[1-c.side]
	if time.Duration(d.next.Load()) > now { // nothing due (or closed and drained): no lock
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed[c.side] {
		return 0, false
	}
	st := &l.stats[c.side]
	defer d.mark()
	for d.queue.due(now) {
		data := d.queue.pop().data
		if len(data) > len(buf) {
			st.Truncated++
			l.release(data)
			continue
		}
		n := copy(buf, data)
		l.release(data)
		st.Received++
		st.ReceivedBytes += uint64(n)
		return n, true
	}
	return 0, false
}

func (c *memConn) Close() error {
	l := c.link
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed[c.side] {
		return ErrClosed
	}
	l.closed[c.side] = true
	// Nobody will receive on this end again; the peer may still drain what this end sent.
	l.discard(&l.dirs[1-c.side])
	if l.closed[1-c.side] {
		l.discard(&l.dirs[c.side])
		l.free = nil
	}
	return nil
}

func (c *memConn) Stats() Stats {
	c.link.mu.Lock()
	defer c.link.mu.Unlock()
	return c.link.stats[c.side]
}
