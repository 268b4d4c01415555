package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/ghostwire/ghostwire/transport/internal/ring"

	"github.com/coder/websocket"

	"github.com/ghostwire/ghostwire/transport"
)

// DefaultQueueLen is the length of a connection's send and receive queues when
// Options leaves them zero: about four seconds of traffic at 60 datagrams a
// second, at most 300 KB of buffers per queue.
const DefaultQueueLen = 256

// DefaultFlushTimeout is Options.FlushTimeout when it is zero.
const DefaultFlushTimeout = 5 * time.Second

// Options tunes a connection. The zero value gives the defaults.
type Options struct {
	// SendQueue bounds the datagrams Send has queued that the writer
	// goroutine has not yet handed to the socket. A Send that finds it full
	// drops the datagram and counts it in Stats.Dropped, like a full socket
	// buffer. Zero or negative means DefaultQueueLen.
	SendQueue int

	// ReceiveQueue bounds the datagrams that have arrived but not yet been
	// returned by Receive. A datagram that finds it full is dropped and
	// counted in this end's Stats.Dropped. Zero or negative means
	// DefaultQueueLen.
	ReceiveQueue int

	// FlushTimeout bounds how long a closed connection keeps writing its queued
	// datagrams to a peer that does not take them; when it passes, the
	// connection is cut without a close handshake. The handshake after a
	// completed flush has its own bound inside the WebSocket library (5 s to
	// write the close frame, 5 s to wait for the answer). Zero or negative
	// means DefaultFlushTimeout.
	FlushTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.SendQueue <= 0 {
		o.SendQueue = DefaultQueueLen
	}
	if o.ReceiveQueue <= 0 {
		o.ReceiveQueue = DefaultQueueLen
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = DefaultFlushTimeout
	}
	return o
}

// bufferSize is one more than MaxDatagramSize, so a message that fills a
// buffer is known to be too long.
const bufferSize = transport.MaxDatagramSize + 1

// conn is a transport.Conn over one WebSocket connection. A reader goroutine
// moves arriving messages into recvq and a writer goroutine moves sendq onto
// the socket, so Send and Receive only touch memory under mu.
type conn struct {
	ws           *websocket.Conn
	flushTimeout time.Duration
	wake         chan struct{} // capacity 1: the writer has datagrams to write or a Close to perform
	ended        chan struct{} // closed by the reader when the connection is over

	mu        sync.Mutex
	sendq     ring.Ring
	recvq     ring.Ring
	free      [][]byte // spare buffers of bufferSize bytes, so steady traffic does not allocate
	stats     transport.Stats
	closed    bool        // Close was called on this end
	over      bool        // the connection is over: the peer closed it, or it broke
	flushStop *time.Timer // cuts the connection if the flush after Close takes too long
}

// newConn starts the goroutines of a Conn over ws; they end once the
// connection is over, whichever end closes it.
func newConn(ws *websocket.Conn, opts Options) *conn {
	opts = opts.withDefaults()
	ws.SetReadLimit(transport.MaxDatagramSize)
	c := &conn{
		ws:           ws,
		flushTimeout: opts.FlushTimeout,
		wake:         make(chan struct{}, 1),
		ended:        make(chan struct{}),
		sendq:        ring.New(opts.SendQueue),
		recvq:        ring.New(opts.ReceiveQueue),
	}
	go c.readLoop()
	go c.writeLoop()
	return c
}

// buffer returns a spare buffer of bufferSize bytes. c.mu must be held.
func (c *conn) buffer() []byte {
	if k := len(c.free); k > 0 {
		b := c.free[k-1]
		c.free = c.free[:k-1]
		return b
	}
	return make([]byte, bufferSize)
}

// release returns b to the spare buffers. c.mu must be held.
func (c *conn) release(b []byte) { c.free = append(c.free, b[:bufferSize]) }

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
	b := c.buffer()
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
			c.release(b)
			continue
		}
		n := copy(buf, b)
		c.release(b)
		c.stats.Received++
		c.stats.ReceivedBytes += uint64(n)
		return n, true
	}
}

// Close stops this end at once and leaves the writer goroutine to flush
// what Send queued and to close the WebSocket with a handshake.
func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return transport.ErrClosed
	}
	c.closed = true
	// Nobody will receive on this end again.
	for c.recvq.Len() > 0 {
		b, _ := c.recvq.Pop()
		c.release(b)
	}
	if !c.over {
		c.flushStop = time.AfterFunc(c.flushTimeout, c.cut)
	}
	c.nudge()
	return nil
}

// cut ends the connection without a handshake, which unblocks any read or
// write in progress.
func (c *conn) cut() { _ = c.ws.CloseNow() }

func (c *conn) Stats() transport.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// writeLoop writes queued datagrams, one binary message each, until the
// connection is over, or until this end is closed and its queue flushed.
func (c *conn) writeLoop() {
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
					// A clean close tells the peer its Sends are over; the
					// reader ends when the peer answers.
					_ = c.ws.Close(websocket.StatusNormalClosure, "")
					return
				}
				break
			}
			// No deadline: a stalled peer blocks this goroutine only, Sends
			// drop once sendq is full, and Close's timer cuts the write.
			err := c.ws.Write(context.Background(), websocket.MessageBinary, b)
			c.mu.Lock()
			c.release(b)
			c.mu.Unlock()
			if err != nil {
				c.cut() // the reader sees the cut and records that the connection is over
				return
			}
		}
	}
}

// readLoop moves arriving messages into recvq until the connection is over.
// A message no Conn sends ends the connection with a close status that says
// why: one longer than MaxDatagramSize, or a text message.
func (c *conn) readLoop() {
	defer c.end()
	for {
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			return
		}
		c.mu.Lock()
		b := c.buffer()
		c.mu.Unlock()
		n, err := readMessage(r, b)
		switch {
		case errors.Is(err, websocket.ErrMessageTooBig):
			c.discard(b, true)
			_ = c.ws.Close(websocket.StatusMessageTooBig, "datagram over transport.MaxDatagramSize")
			return
		case err != nil:
			c.discard(b, false)
			return
		case typ != websocket.MessageBinary:
			c.discard(b, false)
			_ = c.ws.Close(websocket.StatusUnsupportedData, "binary messages only")
			return
		}
		c.deliver(b[:n])
	}
}

// discard returns an undelivered buffer, counting it in Stats.Truncated
// when count is set.
func (c *conn) discard(b []byte, count bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if count {
		c.stats.Truncated++
	}
	c.release(b)
}

// deliver queues an arrived datagram for Receive, or drops it: unwanted on
// a closed end, counted when it is empty or the queue is full.
func (c *conn) deliver(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		c.release(b)
	case len(b) == 0:
		c.stats.Truncated++ // an empty message is no datagram
		c.release(b)
	case c.recvq.Full():
		c.stats.Dropped++
		c.release(b)
	default:
		c.recvq.Push(b)
	}
}

// readMessage reads one whole message into b, which holds bufferSize bytes,
// and returns its length. It stops with an error matching
// websocket.ErrMessageTooBig as soon as the message proves longer than
// MaxDatagramSize, so a datagram is never half-delivered. (The read limit
// set on the connection makes the WebSocket library fail such a message
// too; this check does not depend on it.)
func readMessage(r io.Reader, b []byte) (int, error) {
	n := 0
	for {
		m, err := r.Read(b[n:])
		n += m
		switch {
		case n > transport.MaxDatagramSize:
			return n, errTooLong
		case err == io.EOF:
			return n, nil
		case err != nil:
			return n, err
		}
	}
}

// errTooLong is readMessage's error for a message over MaxDatagramSize.
var errTooLong = fmt.Errorf("%w: over transport.MaxDatagramSize (%d bytes)", websocket.ErrMessageTooBig, transport.MaxDatagramSize)

// end records that the connection is over: Sends are refused from now on,
// and what arrived stays receivable until this end is closed.
func (c *conn) end() {
	c.cut() // release the socket whatever ended the read
	c.mu.Lock()
	c.over = true
	if c.flushStop != nil {
		c.flushStop.Stop()
	}
	c.mu.Unlock()
	close(c.ended)
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
