package packet

import (
	"strconv"
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// SendUnreliable packs msg into the open packet and returns that packet's
// sequence, for Acked and Options.OnAck. msg is copied at once. When msg does
// not fit beside what the open packet holds, that packet is sent first (with
// the reliable messages that are due) and a new one opened. The open packet
// goes out on the next Flush.
//
// It returns an error matching ErrMessageSize (naming the size and
// MaxUnreliableSize) for a message longer than MaxUnreliableSize, one
// matching ErrOverBudget when a new packet must be opened while the send
// budget is spent (counted in Stats.BudgetRefused), transport.ErrClosed after
// Close, and the transport's error if sending the full packet failed.
// It allocates nothing.
func (c *Conn) SendUnreliable(msg []byte) (Seq, error) {
	if c.closed {
		return 0, transport.ErrClosed
	}
	if len(msg) > MaxUnreliableSize {
		return 0, &sizeError{channel: "unreliable", size: len(msg), limit: MaxUnreliableSize}
	}
	e := entry{kind: kindUnreliable, data: msg}
	if len(c.out) > 0 && len(c.out)+e.size() > transport.MaxDatagramSize {
		now := c.clock.Now()
		c.budget.refill(now)
		if err := c.sendOpen(now, true); err != nil {
			return 0, err
		}
	}
	if len(c.out) == 0 {
		c.budget.refill(c.clock.Now())
		if !c.budget.allows() {
			c.stats.BudgetRefused++
			return 0, c.errBudget
		}
		c.out = c.out[:HeaderSize]
	}
	c.out = appendEntry(c.out, e)
	c.stats.UnreliableSent++
	return c.nextSeq, nil
}

// SendReliable queues a copy of msg for the reliable channel. It goes out on
// the next Flush and again after each RTO without an ack, until a packet
// carrying it is acknowledged; the peer's Receive returns it exactly once, in
// order. A message longer than 1186 bytes is sent as fragments of
// FragmentSize, and only once every earlier message is acknowledged, so the
// peer reassembles one message at a time.
//
// It returns an error matching ErrMessageSize for a message longer than
// Options.MaxMessageSize, one matching ErrBacklogged (counted in
// Stats.BacklogRefused) when the message would pass MaxReliablePending or
// MaxQueuedBytes, and transport.ErrClosed after Close. A message of up to
// 1186 bytes reuses a pooled buffer; a larger one costs one allocation of its
// size.
func (c *Conn) SendReliable(msg []byte) error {
	if c.closed {
		return transport.ErrClosed
	}
	if len(msg) > c.opts.MaxMessageSize {
		return &sizeError{channel: "reliable", size: len(msg), limit: c.opts.MaxMessageSize}
	}
	if err := c.queueRoom(&c.queue, len(msg)); err != nil {
		return err
	}
	c.queue.push(msg, c.clock.Now(), c.opts.MaxReliablePending, &c.pool)
	c.stats.ReliableQueued++
	return nil
}

// SendUnordered queues a copy of msg for the reliable unordered channel. It
// goes out on the next Flush and again after each RTO without an ack, until
// a packet carrying it is acknowledged; the peer's Receive returns it
// exactly once, as soon as a packet carrying it arrives, whatever was lost
// before it (Channel ReliableUnordered). It is never fragmented: msg is at
// most 1186 bytes. It shares MaxQueuedBytes with SendReliable, and
// MaxReliablePending caps its own messages as it caps those.
//
// It returns an error matching ErrMessageSize for a message longer than
// 1186 bytes, one matching ErrBacklogged (counted in Stats.BacklogRefused)
// when the message would pass MaxReliablePending or MaxQueuedBytes, and
// transport.ErrClosed after Close. It reuses a pooled buffer.
func (c *Conn) SendUnordered(msg []byte) error {
	if c.closed {
		return transport.ErrClosed
	}
	if len(msg) > maxSmallReliable {
		return &sizeError{channel: "unordered", size: len(msg), limit: maxSmallReliable}
	}
	if err := c.queueRoom(&c.unordered, len(msg)); err != nil {
		return err
	}
	c.unordered.push(msg, c.clock.Now(), c.opts.MaxReliablePending, &c.pool)
	c.stats.UnorderedQueued++
	return nil
}

// queueRoom returns nil when q can take a message of n bytes within the
// caps, and otherwise counts and returns the refusal.
func (c *Conn) queueRoom(q *sendQueue, n int) error {
	if q.count >= c.opts.MaxReliablePending || c.queue.bytes+c.unordered.bytes+cost(n) > c.opts.MaxQueuedBytes {
		c.stats.BacklogRefused++
		return c.backlogError("no room for a message of " + strconv.Itoa(n) + " bytes: " + c.queueState())
	}
	return nil
}

// Flush sends the open packet, then packets for the reliable messages and
// fragments that are due while the send budget and
// Options.ReliableBytesPerFlush allow, then, if nothing went out and a
// packet that wants an ack has arrived, an ack-only packet (at most one per
// Options.AckInterval). The unordered channel's due messages go before the
// ordered channel's, so a large ordered message being fragmented holds back
// only the ordered messages after it. Work the send budget holds back waits
// for a later Flush and is counted in Stats.BudgetDeferred, work
// ReliableBytesPerFlush holds back in Stats.ReliableCapped. Flush returns
// the transport's error (transport.ErrClosed after Close). It allocates
// nothing in steady state.
func (c *Conn) Flush() error {
	defer func() { c.left = c.perFlush() }()
	if c.closed {
		return transport.ErrClosed
	}
	now := c.clock.Now()
	c.budget.refill(now)
	c.judge(now)
	if len(c.out) > 0 {
		if err := c.sendOpen(now, true); err != nil {
			return err
		}
	}
	rto := c.rto()
	for c.reliableDue(now, rto) {
		if c.left <= 0 {
			c.stats.ReliableCapped++
			break
		}
		if !c.budget.allows() {
			c.stats.BudgetDeferred++
			return nil
		}
		c.out, c.units = c.fillReliable(c.out[:HeaderSize], c.units, now, rto)
		if len(c.out) == HeaderSize { // due and fill disagree only if a unit cannot fit an empty packet
			c.out = c.out[:0]
			break
		}
		if err := c.sendOpen(now, false); err != nil {
			return err
		}
	}
	// Every packet carries acks, so ackPending is clear if anything went out.
	if !c.ackPending || (c.ackOnlyAny && now-c.lastAckOn < c.opts.AckInterval) {
		return nil
	}
	if !c.budget.allows() {
		c.stats.BudgetDeferred++
		return nil
	}
	c.out = c.out[:HeaderSize]
	if err := c.sendOpen(now, false); err != nil {
		return err
	}
	c.ackOnlyAny, c.lastAckOn = true, now
	return nil
}

// sendOpen fills the open packet with due reliable units (when fill is
// set), writes its header and sends it. The packet's sequence is spent even
// if the transport fails, so a sequence SendUnreliable returned never names
// another packet.
func (c *Conn) sendOpen(now time.Duration, fill bool) error {
	if fill {
		c.out, c.units = c.fillReliable(c.out, c.units, now, c.rto())
	}
	if c.history == nil {
		c.history = new([historySize]sentRecord)
	}
	seq := c.nextSeq
	c.nextSeq++
	// The record of the packet 1024 sequences back gives way.
	r := &c.history[int(seq)%historySize]
	if r.inUse && !r.judged {
		c.judgeRecord(r)
	}
	if c.judged == seq-historySize {
		c.judged++
	}
	r.inUse = false
	c.acks.header(seq).put(c.out)
	n, ackOnly := len(c.out), len(c.out) == HeaderSize
	err := c.conn.Send(c.out)
	c.out = c.out[:0]
	if err == nil {
		*r = sentRecord{seq: seq, inUse: true, ackOnly: ackOnly, sentAt: now, units: append(r.units[:0], c.units...)}
		c.ackPending = false
		c.budget.spend(n)
		c.stats.PacketsSent++
		c.stats.BytesSent += uint64(n)
		if ackOnly {
			c.stats.AckOnlySent++
		}
	}
	c.units = c.units[:0]
	return err
}

// reliableDue reports whether either reliable channel has a unit due.
func (c *Conn) reliableDue(now, rto time.Duration) bool {
	return c.unordered.hasDue(now, rto) || c.queue.hasDue(now, rto)
}

// fillReliable appends to packet b the due units of the unordered channel,
// then of the ordered one, that fit and that what is left of
// Options.ReliableBytesPerFlush allows.
func (c *Conn) fillReliable(b []byte, units []unitRef, now, rto time.Duration) ([]byte, []unitRef) {
	b, units = c.unordered.fill(b, units, &c.left, now, rto, &c.stats)
	return c.queue.fill(b, units, &c.left, now, rto, &c.stats)
}

// judge counts in the loss estimate the packets acked or old enough to be
// declared lost, oldest first.
func (c *Conn) judge(now time.Duration) {
	rtt := c.rtt
	if !c.haveRTT {
		rtt = initialRTT
	}
	late := 2*rtt + lossJudgeMargin
	for c.judged != c.nextSeq {
		r := &c.history[int(c.judged)%historySize]
		if r.inUse && r.seq == c.judged && !r.judged {
			if !r.acked && now-r.sentAt < late {
				return
			}
			c.judgeRecord(r)
		}
		c.judged++
	}
}

func (c *Conn) judgeRecord(r *sentRecord) {
	r.judged = true
	if r.ackOnly {
		return
	}
	if !r.acked {
		c.stats.PacketsLost++
	}
	c.loss.push(!r.acked)
}
