package packet

import (
	"strconv"
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// Channel says how a message travels.
type Channel uint8

const (
	// Unreliable messages arrive at most once, maybe not at all, in any
	// order: snapshots, inputs.
	Unreliable Channel = iota
	// Reliable messages arrive exactly once and in the order sent: match
	// events, chat, RPCs, hit confirmations.
	Reliable
	// ReliableUnordered messages arrive exactly once, each as soon as a
	// packet carrying it does: none waits for an earlier one that was lost.
	ReliableUnordered
)

// String returns "unreliable", "reliable" or "reliable-unordered".
func (c Channel) String() string {
	switch c {
	case Reliable:
		return "reliable"
	case ReliableUnordered:
		return "reliable-unordered"
	}
	return "unreliable"
}

// Message is one received message.
type Message struct {
	Channel Channel
	// Data aliases the Conn's buffers and stays valid until the next call
	// to Receive or Close; copy it to keep it.
	Data []byte
}

// Conn is the packet layer over one transport.Conn: it numbers packets,
// acknowledges the peer's, carries an unreliable, a reliable ordered and a
// reliable unordered channel, fragments large reliable messages and keeps
// within a send budget.
//
// It is polled from one goroutine (the game loop) and is not safe for
// concurrent use. Nothing happens between calls: SendUnreliable packs
// messages into the open packet, Flush sends it with the reliable messages
// and acks that are due, Receive reads datagrams and returns messages. Time
// comes only from the Clock.
type Conn struct {
	conn  transport.Conn
	clock transport.Clock
	opts  Options

	// Sending.
	out       []byte                   // the open packet; empty when none is open
	units     []unitRef                // reliable units written into out
	nextSeq   Seq                      // sequence of the open or next packet
	history   *[historySize]sentRecord // allocated by the first send, so a peer that never gets an answer costs little
	judged    Seq                      // oldest sent packet not yet counted in the loss estimate
	budget    bucket
	queue     sendQueue // the reliable ordered channel
	unordered sendQueue // the reliable unordered channel
	// left is what Options.ReliableBytesPerFlush still allows before the
	// next Flush ends.
	left       int
	ackOnlyAny bool          // an ack-only packet went out
	lastAckOn  time.Duration // when the last one went out

	// Receiving.
	rx         []byte
	reader     entryReader // unreliable entries of the current datagram not yet returned
	reading    bool
	acks       recvAcks
	known      recvAcks // the acks of our packets taken so far, in the peer's header form
	ackPending bool     // a packet that wants an ack arrived since the last send
	window     recvWindow
	seen       seenWindow // the unordered messages received

	pool      bufferPool
	rtt       time.Duration
	haveRTT   bool
	loss      lossWindow
	stats     Stats
	closed    bool
	errBudget error
}

// NewConn returns a packet layer over conn, reading time from clock. It
// returns an error matching ErrInvalidOptions if opts does not validate, and
// panics if conn or clock is nil. The Conn owns conn from then on. A Conn
// takes about 16 KB, and 40 KB more from its first send (the record of
// sent packets), plus what its traffic holds within the caps.
func NewConn(conn transport.Conn, clock transport.Clock, opts Options) (*Conn, error) {
	if conn == nil || clock == nil {
		panic("packet: NewConn with a nil transport.Conn or Clock")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	now := clock.Now()
	c := &Conn{
		conn:   conn,
		clock:  clock,
		opts:   opts,
		out:    make([]byte, 0, transport.MaxDatagramSize),
		units:  make([]unitRef, 0, maxUnitsPerPacket),
		budget: newBucket(opts.SendBudget, now),
		rx:     make([]byte, transport.MaxDatagramSize),
		window: recvWindow{
			maxHeld:  opts.MaxReceiveBytes,
			maxFrags: (opts.MaxMessageSize + FragmentSize - 1) / FragmentSize,
		},
		errBudget: &wrapped{target: ErrOverBudget, msg: "packet: send budget of " +
			strconv.Itoa(opts.SendBudget) + " bytes/s spent; retry on a later tick"},
	}
	c.unordered.unordered = true
	c.left = c.perFlush()
	return c, nil
}

// Close closes the underlying transport.Conn. Later calls return
// transport.ErrClosed or nothing; closing twice returns transport.ErrClosed.
func (c *Conn) Close() error {
	if c.closed {
		return transport.ErrClosed
	}
	c.closed = true
	return c.conn.Close()
}

// Stats returns a snapshot of the counters and gauges.
func (c *Conn) Stats() Stats {
	s := c.stats
	s.QueuedBytes = c.queue.bytes + c.unordered.bytes
	s.ReliablePending = c.queue.count + c.unordered.count
	s.HeldBytes = c.window.held
	s.ReassemblyBytes = cap(c.window.asm.buf)
	return s
}

// RTT returns the smoothed round-trip time, sampled from the send time of
// the newest packet each arriving packet acknowledges (an exponential mean
// with weight 1/8 on the new sample). It includes the time the peer took to
// answer, at most its Flush interval. It is 0 before the first sample.
func (c *Conn) RTT() time.Duration { return c.rtt }

// Loss returns the fraction of the last 256 judged packets that were lost;
// a packet is judged once acked, or lost when no ack arrived within
// 2×RTT+100ms. Ack-only packets are not judged. It is 0 before any.
func (c *Conn) Loss() float64 { return c.loss.rate() }

// Acked reports whether the packet with sequence s was acknowledged. It
// knows the last 1024 packets sent; older ones report false. It costs an
// array lookup.
func (c *Conn) Acked(s Seq) bool {
	if c.history == nil {
		return false
	}
	r := &c.history[int(s)%historySize]
	return r.inUse && r.seq == s && r.acked && !r.ackOnly
}

// Backlogged returns nil while the reliable channels keep up, and an error
// matching ErrBacklogged when a send queue is full (the next message of the
// largest class would be refused) or the oldest reliable message of either
// channel has waited for its ack longer than Options.BacklogTimeout. Either
// means the peer stopped acknowledging or reading; a server should
// disconnect it.
func (c *Conn) Backlogged() error {
	if c.queue.count >= c.opts.MaxReliablePending || c.unordered.count >= c.opts.MaxReliablePending ||
		c.queue.bytes+c.unordered.bytes+classSizes[len(classSizes)-1] > c.opts.MaxQueuedBytes {
		return c.backlogError("full: " + c.queueState())
	}
	now := c.clock.Now()
	for _, q := range [...]*sendQueue{&c.queue, &c.unordered} {
		if q.count == 0 {
			continue
		}
		if waited := now - q.at(0).queuedAt; waited > c.opts.BacklogTimeout {
			return c.backlogError("oldest message unacknowledged for " + waited.String() +
				" (BacklogTimeout " + c.opts.BacklogTimeout.String() + ")")
		}
	}
	return nil
}

// queueState describes the send queues against their caps.
func (c *Conn) queueState() string {
	return "they hold " + strconv.Itoa(c.queue.count) + " ordered and " + strconv.Itoa(c.unordered.count) +
		" unordered messages (cap " + strconv.Itoa(c.opts.MaxReliablePending) + " each) in " +
		strconv.Itoa(c.queue.bytes+c.unordered.bytes) + " bytes (cap " + strconv.Itoa(c.opts.MaxQueuedBytes) + ")"
}

// perFlush is what Options.ReliableBytesPerFlush allows between two Flush
// calls: unlimited when zero.
func (c *Conn) perFlush() int {
	if c.opts.ReliableBytesPerFlush == 0 {
		return maxBytesLimit
	}
	return c.opts.ReliableBytesPerFlush
}

func (c *Conn) backlogError(what string) error {
	return &wrapped{target: ErrBacklogged, msg: "packet: reliable send queue backlogged: " + what}
}

// rto is how long a reliable unit waits for its ack before it is resent.
func (c *Conn) rto() time.Duration {
	rtt := c.rtt
	if !c.haveRTT {
		rtt = initialRTT
	}
	return rtt + max(rtt/2, 10*time.Millisecond)
}
