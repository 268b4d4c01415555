package packet

import (
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// reliableWindow is how many message ids past the oldest unacknowledged one
// a sender may have on the wire, and how many past the next one to deliver a
// receiver accepts. It is part of the protocol: both ends use the same.
const reliableWindow = 256

// maxUnitsPerPacket caps the reliable messages and fragments one packet
// carries, which bounds the per-packet record of what to mark acked.
const maxUnitsPerPacket = 64

// unitRef names one reliable unit sent in a packet: a whole message, or one
// fragment of a fragmented one, of the ordered channel, or a message of the
// unordered one.
type unitRef struct {
	id        uint16
	index     uint8
	frag      bool
	unordered bool
}

// sendEntry is one reliable message waiting for its acknowledgement.
type sendEntry struct {
	id         uint16
	data       []byte
	class      int // pool class of data, largeClass for a fragmented message
	cost       int // bytes counted against Options.MaxQueuedBytes
	frags      int // fragment count, 0 when sent whole
	acked      bool
	sent       bool // sent whole at least once
	sentAt     time.Duration
	queuedAt   time.Duration
	fragAcked  bitset256
	fragAckedN int
}

// sendQueue is a reliable channel's sending end: a ring of the messages
// from the oldest unacknowledged one on, in id order. On the ordered channel
// a fragmented message is sent only once it is the oldest, and alone, so the
// receiver reassembles one message at a time and never holds more than one
// reassembly buffer. The unordered channel's messages are never fragmented.
type sendQueue struct {
	unordered bool        // the unordered channel's queue
	ring      []sendEntry // allocated on the first SendReliable
	head      int         // ring index of the oldest message
	count     int
	oldest    uint16 // id of the oldest message; the next id when count is 0
	bytes     int

	// Send times of the fragments of the oldest message, when fragmented.
	fragFor   uint16
	fragValid bool
	fragEver  bitset256
	fragSent  [MaxFragments]time.Duration
}

// at returns the i-th message from the oldest.
func (q *sendQueue) at(i int) *sendEntry { return &q.ring[(q.head+i)%len(q.ring)] }

// push queues a copy of msg as the next message. The caller has checked the
// caps and the size.
func (q *sendQueue) push(msg []byte, now time.Duration, pending int, pool *bufferPool) {
	if q.ring == nil {
		q.ring = make([]sendEntry, pending)
	}
	e := q.at(q.count)
	*e = sendEntry{id: q.oldest + uint16(q.count), class: classOf(len(msg)), queuedAt: now}
	if e.class == largeClass {
		e.data = append([]byte(nil), msg...)
		e.cost = len(msg)
		e.frags = (len(msg) + FragmentSize - 1) / FragmentSize
	} else {
		e.data = append(pool.get(e.class), msg...)
		e.cost = classSizes[e.class]
	}
	q.bytes += e.cost
	q.count++
}

// cost returns what a message of n bytes counts against MaxQueuedBytes.
func cost(n int) int {
	if c := classOf(n); c != largeClass {
		return classSizes[c]
	}
	return n
}

// ack marks one unit acknowledged. Units of messages already released, and
// references that match nothing, are ignored.
func (q *sendQueue) ack(u unitRef) {
	d := int(u.id - q.oldest)
	if d >= q.count {
		return
	}
	e := q.at(d)
	if e.acked {
		return
	}
	switch {
	case !u.frag && e.frags == 0:
		e.acked = true
	case u.frag && int(u.index) < e.frags && !e.fragAcked.has(int(u.index)):
		e.fragAcked.set(int(u.index))
		e.fragAckedN++
		e.acked = e.fragAckedN == e.frags
	}
}

// release drops the acknowledged messages at the front of the queue and
// returns their buffers to pool.
func (q *sendQueue) release(pool *bufferPool) {
	for q.count > 0 {
		e := q.at(0)
		if !e.acked {
			return
		}
		if e.class != largeClass {
			pool.put(e.class, e.data)
		}
		q.bytes -= e.cost
		*e = sendEntry{}
		q.head = (q.head + 1) % len(q.ring)
		q.count--
		q.oldest++
	}
}

// due reports whether a unit last sent at sentAt (ever: sent at all) should
// go out now.
func due(ever bool, sentAt, now, rto time.Duration) bool {
	return !ever || now-sentAt >= rto
}

// inWindow is how many messages from the oldest may be on the wire.
func (q *sendQueue) inWindow() int { return min(q.count, reliableWindow) }

// fragmentsFor prepares the fragment send times for the oldest message.
func (q *sendQueue) fragmentsFor(e *sendEntry) {
	if !q.fragValid || q.fragFor != e.id {
		q.fragFor, q.fragValid, q.fragEver = e.id, true, bitset256{}
	}
}

// fragment returns fragment f of e.
func (e *sendEntry) fragment(f int) []byte {
	return e.data[f*FragmentSize : min((f+1)*FragmentSize, len(e.data))]
}

// hasDue reports whether fill would write anything into an empty packet.
func (q *sendQueue) hasDue(now, rto time.Duration) bool {
	if q.count > 0 && q.at(0).frags > 0 {
		e := q.at(0)
		q.fragmentsFor(e)
		for f := range e.frags {
			if !e.fragAcked.has(f) && due(q.fragEver.has(f), q.fragSent[f], now, rto) {
				return true
			}
		}
		return false
	}
	for i := range q.inWindow() {
		if e := q.at(i); !e.acked && e.frags == 0 && due(e.sent, e.sentAt, now, rto) {
			return true
		}
	}
	return false
}

// fill appends to packet b the due units that fit, oldest first, while
// *left is positive, takes their size from *left and records them in units.
// It returns b and units extended.
//
// While the oldest ordered message is fragmented, the ordered channel's
// units in a packet are its fragments only. A packet that carries the
// oldest ordered message carries after it only an unbroken run: every
// message between the oldest and one it carries is acknowledged or in the
// packet too. The receiver always admits such a packet, whatever its caps,
// so the message everything waits for cannot be locked out by the ones
// after it. The unordered channel's receiver holds nothing back, so its
// messages go in any order that fits.
func (q *sendQueue) fill(b []byte, units []unitRef, left *int, now, rto time.Duration, st *Stats) ([]byte, []unitRef) {
	if q.count > 0 && q.at(0).frags > 0 {
		return q.fillFragments(b, units, left, now, rto, st)
	}
	k := kindReliable
	if q.unordered {
		k = kindUnordered
	}
	withOldest := false
	for i := range q.inWindow() {
		if *left <= 0 || len(units) == cap(units) || transport.MaxDatagramSize-len(b) <= reliableOverhead {
			break
		}
		e := q.at(i)
		if e.acked {
			continue
		}
		if e.frags > 0 || !due(e.sent, e.sentAt, now, rto) || len(b)+reliableOverhead+len(e.data) > transport.MaxDatagramSize {
			if withOldest {
				break // the run would break
			}
			continue
		}
		withOldest = !q.unordered && (withOldest || i == 0)
		if e.sent {
			st.ReliableResent++
		}
		b = appendEntry(b, entry{kind: k, id: e.id, data: e.data})
		*left -= reliableOverhead + len(e.data)
		e.sent, e.sentAt = true, now
		units = append(units, unitRef{id: e.id, unordered: q.unordered})
	}
	return b, units
}

// fillFragments is fill while the oldest message is fragmented.
func (q *sendQueue) fillFragments(b []byte, units []unitRef, left *int, now, rto time.Duration, st *Stats) ([]byte, []unitRef) {
	e := q.at(0)
	q.fragmentsFor(e)
	for f := 0; f < e.frags && len(units) < cap(units) && *left > 0; f++ {
		chunk := e.fragment(f)
		ever := q.fragEver.has(f)
		if e.fragAcked.has(f) || !due(ever, q.fragSent[f], now, rto) ||
			len(b)+fragmentOverhead+len(chunk) > transport.MaxDatagramSize {
			continue
		}
		*left -= fragmentOverhead + len(chunk)
		if ever {
			st.ReliableResent++
		}
		b = appendEntry(b, entry{kind: kindFragment, id: e.id, index: uint8(f), count: uint8(e.frags), data: chunk})
		q.fragEver.set(f)
		q.fragSent[f] = now
		st.FragmentsSent++
		units = append(units, unitRef{id: e.id, index: uint8(f), frag: true})
	}
	return b, units
}

// bitset256 is a set of fragment indices.
type bitset256 [4]uint64

func (s *bitset256) has(i int) bool { return s[i>>6]&(1<<(i&63)) != 0 }
func (s *bitset256) set(i int)      { s[i>>6] |= 1 << (i & 63) }
