package packet

import "time"

// Receive returns the next message: first the reliable messages that are
// next in order, then the unreliable and unordered messages of the datagram
// being read (in the order of the datagram; an unordered message received
// before is skipped and counted in Stats.ReliableDuplicates), then it reads
// the next datagram from the transport. It returns false when no datagram
// is left to read by now, or after Close.
//
// Each datagram is checked whole before anything in it is used. A datagram
// that does not decode is dropped (Stats.Malformed); a duplicate or too old
// packet is dropped (Stats.DuplicatePackets, Stats.StalePackets) after its
// acks are used; a packet with a reliable message no cap lets this end keep
// is dropped unacknowledged, so the peer resends it (the cap's counter in
// Stats). Nothing the peer sends can panic or grow memory past the caps in
// Options. Acks it carries update RTT, Loss, Acked and call Options.OnAck.
// It allocates nothing in steady state.
func (c *Conn) Receive() (Message, bool) {
	if c.closed {
		return Message{}, false
	}
	c.window.release(&c.pool)
	now := c.clock.Now()
	for {
		if data, ok := c.window.deliver(); ok {
			c.stats.ReliableDelivered++
			return Message{Channel: Reliable, Data: data}, true
		}
		for c.reading {
			e, ok, _ := c.reader.next() // validated on arrival
			if !ok {
				c.reading = false
				break
			}
			switch e.kind {
			case kindUnreliable:
				c.stats.UnreliableDelivered++
				return Message{Channel: Unreliable, Data: e.data}, true
			case kindUnordered:
				if c.seen.first(e.id) {
					c.stats.UnorderedDelivered++
					return Message{Channel: ReliableUnordered, Data: e.data}, true
				}
				c.stats.ReliableDuplicates++
			}
		}
		n, ok := c.conn.Receive(c.rx)
		if !ok {
			c.judge(now)
			return Message{}, false
		}
		c.process(c.rx[:n], now)
	}
}

// process checks and applies one datagram.
func (c *Conn) process(d []byte, now time.Duration) {
	c.stats.DatagramsReceived++
	c.stats.BytesReceived += uint64(len(d))
	h, err := validate(d)
	if err != nil {
		c.stats.Malformed++
		return
	}
	c.processAcks(h, now)
	if dup, stale := c.acks.seen(h.seq); dup || stale {
		if dup {
			c.stats.DuplicatePackets++
		} else {
			c.stats.StalePackets++
		}
		return
	}
	if !c.admit(d) {
		return
	}
	c.acks.record(h.seq)
	c.stats.PacketsReceived++
	r := newEntryReader(d)
	for {
		e, ok, _ := r.next()
		if !ok {
			break
		}
		c.ackPending = true
		if e.kind == kindUnreliable || e.kind == kindUnordered { // returned as the datagram is read
			continue
		}
		if !c.window.fresh(e) {
			c.stats.ReliableDuplicates++
			continue
		}
		if e.kind == kindReliable {
			c.window.store(e, &c.pool)
		} else {
			c.window.storeFragment(e)
			c.stats.FragmentsReceived++
		}
	}
	c.reader, c.reading = newEntryReader(d), true
}

// admit reports whether every reliable entry of d can be kept, and counts
// the cap that refuses the packet when one cannot.
func (c *Conn) admit(d []byte) bool {
	a := c.window.begin()
	r := newEntryReader(d)
	for {
		e, ok, _ := r.next()
		if !ok {
			return true
		}
		if e.kind == kindUnreliable || e.kind == kindUnordered { // nothing is held for them
			continue
		}
		switch c.window.admit(e, &a) {
		case accept, duplicate:
			continue
		case outOfWindow:
			c.stats.OutOfWindow++
		case receiveBytesFull:
			c.stats.ReceiveBytesFull++
		case fragmentCap:
			c.stats.FragmentCap++
		case fragmentRefused:
			c.stats.FragmentRefused++
		case fragmentMismatch:
			c.stats.FragmentMismatch++
		}
		return false
	}
}

// processAcks marks acknowledged the packets h acks, oldest first: their
// reliable units are done, the newest gives an RTT sample, OnAck hears of
// each once. Acks already taken from earlier headers are skipped without a
// look at their records, so a steady stream costs about one lookup a packet.
func (c *Conn) processAcks(h header, now time.Duration) {
	if !h.hasAck || c.history == nil { // nothing sent, nothing to acknowledge
		return
	}
	bits, newest := h.ackBits, true
	if k := &c.known; k.any {
		switch d := int(int16(h.ack - k.newest)); {
		case d == 0:
			bits &^= k.bits
			newest = false
			k.bits |= h.ackBits
		case d > 0 && d <= 32:
			seen := k.bits<<d | 1<<(d-1)
			bits &^= seen
			k.newest, k.bits = h.ack, h.ackBits|seen
		case d > 32:
			k.newest, k.bits = h.ack, h.ackBits
		}
	} else {
		*k = recvAcks{newest: h.ack, bits: h.ackBits, any: true}
	}
	for i := 32; i >= 0; i-- {
		if i > 0 && bits&(1<<(i-1)) == 0 || i == 0 && !newest {
			continue
		}
		s := h.ack - Seq(i)
		r := &c.history[int(s)%historySize]
		if !r.inUse || r.seq != s || r.acked {
			continue
		}
		r.acked = true
		if r.ackOnly {
			continue
		}
		c.stats.PacketsAcked++
		if i == 0 {
			c.sampleRTT(now - r.sentAt)
		}
		for _, u := range r.units {
			if u.unordered {
				c.unordered.ack(u)
			} else {
				c.queue.ack(u)
			}
		}
		if c.opts.OnAck != nil {
			c.opts.OnAck(s)
		}
	}
	c.queue.release(&c.pool)
	c.unordered.release(&c.pool)
}

func (c *Conn) sampleRTT(sample time.Duration) {
	if !c.haveRTT {
		c.rtt, c.haveRTT = sample, true
		return
	}
	c.rtt += (sample - c.rtt) / 8
}
