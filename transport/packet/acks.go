package packet

import "time"

// historySize is how many sent packets are remembered for acks, RTT and
// loss. It divides 65536, so a sequence always maps to the same slot.
const historySize = 1024

// initialRTT stands in for the RTT until the first sample.
const initialRTT = 100 * time.Millisecond

// lossJudgeMargin is added to twice the RTT to decide that a packet without
// an ack is lost.
const lossJudgeMargin = 100 * time.Millisecond

// sentRecord remembers one sent packet.
type sentRecord struct {
	seq     Seq
	inUse   bool
	acked   bool
	judged  bool // counted as delivered or lost in the loss estimate
	ackOnly bool
	sentAt  time.Duration
	units   []unitRef // reliable units carried; capacity reused
}

// recvAcks is what this end tells the peer it received: the newest sequence
// and a bit for each of the 32 before it.
type recvAcks struct {
	newest Seq
	bits   uint32 // bit i: newest-1-i received
	any    bool
}

// seen classifies an arriving sequence without recording it.
func (r *recvAcks) seen(s Seq) (duplicate, stale bool) {
	if !r.any {
		return false, false
	}
	d := int(int16(s - r.newest))
	switch {
	case d == 0:
		return true, false
	case d > 0:
		return false, false
	case d < -32:
		return false, true
	default:
		return r.bits&(1<<(-d-1)) != 0, false
	}
}

// record marks s received; seen has cleared it.
func (r *recvAcks) record(s Seq) {
	if !r.any {
		r.newest, r.bits, r.any = s, 0, true
		return
	}
	d := int(int16(s - r.newest))
	if d > 0 {
		r.bits = r.bits<<d | 1<<(d-1) // shifts of 32 or more give 0 in Go
		r.newest = s
		return
	}
	r.bits |= 1 << (-d - 1)
}

// header returns the packet header announcing these acks.
func (r *recvAcks) header(seq Seq) header {
	return header{seq: seq, ack: r.newest, ackBits: r.bits, hasAck: r.any}
}

// lossWindow holds the fates of the last 256 judged packets.
type lossWindow struct {
	fates bitset256 // set: lost
	pos   int
	n     int
	lost  int
}

func (w *lossWindow) push(lost bool) {
	if w.n == len(w.fates)*64 {
		if w.fates.has(w.pos) {
			w.lost--
		}
	} else {
		w.n++
	}
	w.fates[w.pos>>6] &^= 1 << (w.pos & 63)
	if lost {
		w.fates.set(w.pos)
		w.lost++
	}
	w.pos = (w.pos + 1) % (len(w.fates) * 64)
}

func (w *lossWindow) rate() float64 {
	if w.n == 0 {
		return 0
	}
	return float64(w.lost) / float64(w.n)
}
