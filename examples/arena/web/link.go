package web

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/transport"
)

// Link is what the page's sliders set on a connection's link: the round
// trip added on top of the real one, the jitter (±, each way), and the loss
// and duplication in percent (each way). The zero value adds nothing.
type Link struct {
	RTTms    float64
	JitterMS float64
	LossPct  float64
	DupPct   float64
}

// Validate returns an error naming the first field out of range.
func (l Link) Validate() error {
	bad := func(name string, v float64, allowed string) error {
		return fmt.Errorf("link %s %v: allowed range is %s", name, v, allowed)
	}
	switch {
	case !(l.RTTms >= 0 && l.RTTms <= 2000):
		return bad("RTTms", l.RTTms, "0..2000")
	case !(l.JitterMS >= 0 && l.JitterMS <= 500):
		return bad("JitterMS", l.JitterMS, "0..500")
	case !(l.LossPct >= 0 && l.LossPct <= 50):
		return bad("LossPct", l.LossPct, "0..50")
	case !(l.DupPct >= 0 && l.DupPct <= 50):
		return bad("DupPct", l.DupPct, "0..50")
	}
	return nil
}

// oneWay is the condition of each direction: half the RTT.
func (l Link) oneWay() transport.LinkConfig {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return transport.LinkConfig{Latency: ms(l.RTTms / 2), Jitter: ms(l.JitterMS), Loss: l.LossPct / 100, Duplicate: l.DupPct / 100}
}

// maxQueued bounds the datagrams a conditioned link holds back in each
// direction: four seconds of a 60 Hz stream and its duplicates at the
// largest delay the sliders allow. A datagram beyond it is dropped and
// counted in Stats.Dropped.
const maxQueued = 512

// held is a datagram waiting for its delivery time.
type held struct {
	due time.Duration
	p   []byte
}

// direction is one way of a conditioned link: a FIFO of held datagrams
// whose delivery times never decrease, so jitter delays but never
// reorders (as on transport.LinkConfig without Reorder).
type direction struct {
	q    []held // q[head:] are held
	head int
	free [][]byte
	last time.Duration
}

// push holds a copy of p until due (raised to the previous delivery time).
// It reports false when the queue is full.
func (d *direction) push(due time.Duration, p []byte) bool {
	if len(d.q)-d.head == maxQueued {
		return false
	}
	if d.head > 0 && d.head >= len(d.q)/2 {
		// Compact, so the queue reuses its array instead of growing.
		d.q = d.q[:copy(d.q, d.q[d.head:])]
		d.head = 0
	}
	due = max(due, d.last)
	d.last = due
	var b []byte
	if n := len(d.free); n > 0 {
		b, d.free = d.free[n-1][:0], d.free[:n-1]
	}
	d.q = append(d.q, held{due: due, p: append(b, p...)})
	return true
}

// pop returns the oldest datagram due by now; the caller hands its buffer
// back with recycle.
func (d *direction) pop(now time.Duration) ([]byte, bool) {
	if d.head == len(d.q) || d.q[d.head].due > now {
		return nil, false
	}
	p := d.q[d.head].p
	d.q[d.head] = held{}
	d.head++
	if d.head == len(d.q) {
		d.q, d.head = d.q[:0], 0
	}
	return p, true
}

func (d *direction) recycle(b []byte) {
	if len(d.free) < maxQueued {
		d.free = append(d.free, b)
	}
}

// minRTO is Linux's floor on TCP's retransmission timeout.
const minRTO = 200 * time.Millisecond

// linkConn conditions the server's end of one connection: datagrams the
// server sends (down) and receives (up) are lost, duplicated and delayed
// by the connection's Link, with a seeded random source. The game loop
// polls it; SetLink may be called from any goroutine.
//
// On a stream (WebSocket, over TCP) nothing is lost: a segment the link
// loses is sent again after TCP's retransmission timeout, max(200 ms,
// RTT + 4 × jitter), and everything behind it waits, since a direction
// never reorders (head-of-line blocking). Lost then counts the
// retransmissions. Fast retransmission can recover sooner when enough
// segments follow; at a game's rate this is the common case's order.
type linkConn struct {
	inner  transport.Conn
	clock  gw.TimeSource
	stream bool

	mu       sync.Mutex
	cfg      transport.LinkConfig
	rng      *rand.Rand
	up, down direction
	buf      []byte
	closed   bool
	extra    transport.Stats // the conditioner's own counters, both ways
}

// newLinkConn wraps inner with link l and the random source of seed; stream
// says inner is a WebSocket, whose losses TCP repairs late.
func newLinkConn(inner transport.Conn, clock gw.TimeSource, seed uint64, l Link, stream bool) *linkConn {
	return &linkConn{inner: inner, clock: clock, stream: stream, cfg: l.oneWay(),
		rng: rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909)), buf: make([]byte, transport.MaxDatagramSize)}
}

// SetLink changes the link's conditions; held datagrams keep their times.
func (c *linkConn) SetLink(l Link) {
	c.mu.Lock()
	c.cfg = l.oneWay()
	c.mu.Unlock()
}

// condition holds p in d as the link decides: lost, delivered, or
// delivered twice.
func (c *linkConn) condition(d *direction, p []byte, now time.Duration) {
	cfg := c.cfg
	var retransmit time.Duration
	if cfg.Loss > 0 && c.rng.Float64() < cfg.Loss {
		c.extra.Lost++
		if !c.stream {
			return
		}
		retransmit = max(minRTO, 2*cfg.Latency+4*cfg.Jitter)
	}
	copies := 1
	if cfg.Duplicate > 0 && c.rng.Float64() < cfg.Duplicate {
		copies = 2
		c.extra.Duplicated++
	}
	for range copies {
		delay := cfg.Latency + retransmit
		if cfg.Jitter > 0 {
			delay += time.Duration((c.rng.Float64()*2 - 1) * float64(cfg.Jitter))
		}
		if !d.push(now+max(delay, 0), p) {
			c.extra.Dropped++
		}
	}
}

// flush hands the due server-to-client datagrams to the socket.
func (c *linkConn) flush(now time.Duration) {
	for {
		p, ok := c.down.pop(now)
		if !ok {
			return
		}
		// The size was checked on the way in, so an error means the
		// socket closed: the datagram is gone, as on a real link.
		if c.inner.Send(p) != nil {
			c.closed = true
		}
		c.down.recycle(p)
	}
}

// Send conditions a datagram from the server to the client.
func (c *linkConn) Send(p []byte) error {
	if len(p) == 0 || len(p) > transport.MaxDatagramSize {
		return fmt.Errorf("%w: %d bytes, allowed 1..%d", transport.ErrDatagramSize, len(p), transport.MaxDatagramSize)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return transport.ErrClosed
	}
	now := c.clock.Now()
	c.extra.Sent++
	c.extra.SentBytes += uint64(len(p))
	c.condition(&c.down, p, now)
	c.flush(now)
	return nil
}

// Receive returns the next datagram from the client that the link has
// delivered by now.
func (c *linkConn) Receive(buf []byte) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.flush(now)
	for {
		n, ok := c.inner.Receive(c.buf)
		if !ok {
			break
		}
		c.condition(&c.up, c.buf[:n], now)
	}
	p, ok := c.up.pop(now)
	if !ok {
		return 0, false
	}
	defer c.up.recycle(p)
	if len(p) > len(buf) {
		c.extra.Truncated++
		return 0, false
	}
	return copy(buf, p), true
}

// Close closes the socket and forgets what the link held.
func (c *linkConn) Close() error {
	c.mu.Lock()
	c.up, c.down, c.closed = direction{}, direction{}, true
	c.mu.Unlock()
	return c.inner.Close()
}

// Stats returns the socket's counters with the conditioner's: Sent counts
// what the server sent, Lost, Duplicated and Dropped what the link did to
// both directions.
func (c *linkConn) Stats() transport.Stats {
	s := c.inner.Stats()
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Sent, s.SentBytes = c.extra.Sent, c.extra.SentBytes
	s.Lost += c.extra.Lost
	s.Duplicated += c.extra.Duplicated
	s.Dropped += c.extra.Dropped
	s.Truncated += c.extra.Truncated
	return s
}

// isClosed reports whether the link was closed or its socket found closed.
func (c *linkConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
