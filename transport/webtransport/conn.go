package webtransport

import (
	"strconv"
	"sync"
	"time"

	"github.com/ghostwire/ghostwire/transport/internal/ring"

	"github.com/ghostwire/ghostwire/transport"
)

// conn is a transport.Conn over one WebTransport session. A reader
// goroutine moves arriving datagrams into recvq and a writer goroutine
// moves sendq into the session, so Send and Receive only touch memory
// under mu.
type conn struct {
	s            session
	flushTimeout time.Duration
	wake         chan struct{} // capacity 1: the writer has datagrams to write or a Close to perform
	ended        chan struct{} // closed by the reader when the session is over
	onEnd        func()        // called once the session is over; nil when nobody needs telling

	mu        sync.Mutex
	sendq     ring.Ring
	recvq     ring.Ring
	free      [][]byte // spare send buffers of MaxDatagramSize bytes, so steady traffic does not allocate
	limit     bucket   // ReceiveRate
	pace      bucket   // SendRate; only the writer goroutine touches it
	stats     transport.Stats
	closed    bool        // Close was called on this end
	over      bool        // the session is over, or the peer said it closed
	flushStop *time.Timer // ends the session if the peer does not confirm a Close in time
}

// newConn starts the goroutines of a Conn over s; they end once the
// session is over, whichever end closes it. onEnd, when not nil, runs once
// then.
func newConn(s session, opts Options, onEnd func()) *conn {
	opts = opts.withDefaults()
	c := &conn{
		s:            s,
		flushTimeout: opts.FlushTimeout,
		wake:         make(chan struct{}, 1),
		ended:        make(chan struct{}),
		onEnd:        onEnd,
		sendq:        ring.New(opts.SendQueue),
		recvq:        ring.New(opts.ReceiveQueue),
		limit:        bucket{rate: opts.ReceiveRate},
		pace:         bucket{rate: opts.SendRate},
	}
	go c.readLoop()
	go c.writeLoop()
	return c
}

// Send queues p for the writer goroutine. It never blocks.
func (c *conn) Send(p []byte) error {
	c.mu.Lock()
	if c.closed || c.over {
		c.mu.Unlock()
		return transport.ErrClosed
	}
	if err := checkSize(len(p)); err != nil {
		c.mu.Unlock()
		return err
	}
	c.stats.Sent++
	c.stats.SentBytes += uint64(len(p))
	if c.sendq.Full() {
		c.stats.Dropped++
		c.mu.Unlock()
		return nil
	}
	var b []byte
	if k := len(c.free); k > 0 {
		b, c.free = c.free[k-1], c.free[:k-1]
	} else {
		b = make([]byte, transport.MaxDatagramSize)
	}
	c.sendq.Push(b[:copy(b, p)])
	c.mu.Unlock()
	c.nudge()
	return nil
}

// nudge wakes the writer without blocking; a wake-up already pending covers this one.
func (c *conn) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Receive returns the oldest queued datagram that fits buf.
func (c *conn) Receive(buf []byte) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, false
	}
	for {
		b, ok := c.recvq.Pop()
		if !ok {
			return 0, false
		}
		if len(b) > len(buf) {
			c.stats.Truncated++
			continue
		}
		n := copy(buf, b)
		c.stats.Received++
		c.stats.ReceivedBytes += uint64(n)
		return n, true
	}
}

// Close stops this end at once and leaves the writer goroutine to flush
// what Send queued and to tell the peer.
func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return transport.ErrClosed
	}
	c.closed = true
	for c.recvq.Len() > 0 { // nobody will receive on this end again
		c.recvq.Pop()
	}
	if !c.over {
		c.flushStop = time.AfterFunc(c.flushTimeout, c.s.close)
	}
	c.nudge()
	return nil
}

func (c *conn) Stats() transport.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// writeLoop hands queued datagrams to the session until it is over, or
// until this end is closed, its queue flushed and the close marker sent.
func (c *conn) writeLoop() {
	pause := time.NewTimer(time.Hour)
	pause.Stop()
	for {
		select {
		case <-c.wake:
		case <-c.ended:
			return
		}
		for {
			c.mu.Lock()
			b, ok := c.sendq.Pop()
			closing := c.closed
			c.mu.Unlock()
			if !ok {
				if closing {
					// The close marker: an empty datagram, which Send never
					// sends. It follows every datagram queued before it, so
					// the peer ends the session once it has them all;
					// closing the session here instead could overtake them.
					// Lost on the way, it is replaced by flushStop.
					if c.s.send(nil) != nil {
						c.s.close()
					}
					return
				}
				break
			}
			for wait := c.pace.wait(time.Now(), len(b)); wait > 0; wait = c.pace.wait(time.Now(), len(b)) {
				pause.Reset(wait)
				select {
				case <-pause.C:
				case <-c.ended:
					return
				}
			}
			// A stalled session blocks this goroutine only: Sends drop once
			// sendq is full, and Close's timer ends the session.
			err := c.s.send(b)
			c.mu.Lock()
			c.free = append(c.free, b[:transport.MaxDatagramSize])
			if err == errTooLarge {
				c.stats.Dropped++
				err = nil
			}
			c.mu.Unlock()
			if err != nil {
				c.s.close() // the reader sees it and records that the session is over
				return
			}
		}
	}
}

// readLoop moves arriving datagrams into recvq until the session is over.
func (c *conn) readLoop() {
	defer c.end()
	for {
		p, err := c.s.receive()
		if err != nil {
			return
		}
		if c.deliver(p) {
			// The peer closed and everything it sent before is queued:
			// ending the session confirms the close, so the peer's
			// goroutines end at once rather than at its FlushTimeout.
			c.s.close()
		}
	}
}

// deliver queues an arrived datagram for Receive, or drops it, counted
// unless this end is closed. It reports whether p is the peer's close
// marker.
func (c *conn) deliver(p []byte) (marker bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case len(p) == 0:
		c.over = true
		return true
	case c.closed:
	case len(p) > transport.MaxDatagramSize:
		c.stats.Truncated++ // no Conn sends it: never delivered, in whole or in part
	case !c.limit.allow(time.Now(), len(p)):
		c.stats.Dropped++
	case c.recvq.Full():
		c.stats.Dropped++
	default:
		c.recvq.Push(p)
	}
	return false
}

// end records that the session is over: Sends are refused from now on,
// and what arrived stays receivable until this end is closed.
func (c *conn) end() {
	c.s.close()
	c.mu.Lock()
	c.over = true
	if c.flushStop != nil {
		c.flushStop.Stop()
	}
	c.mu.Unlock()
	close(c.ended)
	if c.onEnd != nil {
		c.onEnd()
	}
}

// sizeError reports a datagram length outside 1..MaxDatagramSize, in the
// words of the transport package's own error, so every Conn reads alike.
type sizeError int

func (e sizeError) Error() string {
	if e == 0 {
		return "transport: empty datagram (0 bytes); a datagram must be 1 to " +
			strconv.Itoa(transport.MaxDatagramSize) + " bytes"
	}
	return "transport: datagram of " + strconv.Itoa(int(e)) + " bytes exceeds MaxDatagramSize " +
		strconv.Itoa(transport.MaxDatagramSize)
}

func (e sizeError) Is(target error) bool { return target == transport.ErrDatagramSize }

// checkSize returns nil when n is a valid datagram length.
func checkSize(n int) error {
	if n == 0 || n > transport.MaxDatagramSize {
		return sizeError(n)
	}
	return nil
}
