package systems

import (
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// goodbyeCopies is how many packets carry a reject or a disconnect. The
// connection closes right after, so nothing can be resent: redundant
// copies, as netcode sends its disconnect packets, are what let one arrive
// through loss. The receiver acts on the first and ignores the rest.
const goodbyeCopies = 3

// ackInterval is the least time between two ack-only packets. The
// endpoints flush once per tick, so acks ride snapshots and inputs; an
// ack-only packet goes out only when a tick sends nothing (a send
// interval above one tick), at most this often, well within the packet
// layer's 33-packet ack window and its 2×RTT+100ms loss verdict.
const ackInterval = 50 * time.Millisecond

// snapshotRing is how many of the newest snapshots a connection remembers
// by packet sequence, to learn which tick an ack confirms. It divides
// 65536, so a sequence always maps to the same slot across the wrap.
const snapshotRing = 64

// link is the packet layer of one connection: every message of the
// endpoints goes through it, on the memory link as over UDP or WebSocket.
type link struct {
	pc *packet.Conn
	// snaps maps the sequences of recent snapshot packets to their ticks;
	// acked is the newest snapshot tick the peer acknowledged, when
	// hasAcked. Delta snapshots build their baselines on it.
	snaps    [snapshotRing]sentSnapshot
	acked    gw.Tick
	hasAcked bool
}

// sentSnapshot is one snapshot sent on a link.
type sentSnapshot struct {
	seq  packet.Seq
	tick gw.Tick
	ok   bool
}

// linkOptions are what an endpoint sets of its links' packet layers; the
// zero value means the packet layer's defaults.
type linkOptions struct {
	// backlog is how long a reliable message may wait for its ack before
	// the peer counts as stalled (see packet.Conn.Backlogged).
	backlog time.Duration
	// maxMessage is the largest reliable message (the schema's largest
	// message type), perFlush the reliable bytes a flush sends (the
	// message budget of one tick); see messageLink.
	maxMessage, perFlush int
}

// newLink wraps c in a packet layer reading time from clock.
func newLink(c transport.Conn, clock transport.Clock, o linkOptions) *link {
	l := &link{}
	pc, err := packet.NewConn(c, clock, packet.Options{AckInterval: ackInterval, BacklogTimeout: o.backlog, OnAck: l.onAck,
		MaxMessageSize: o.maxMessage, ReliableBytesPerFlush: o.perFlush})
	if err != nil {
		panic(err) // the options are checked when the endpoint is made: a bug, not a runtime condition
	}
	l.pc = pc
	return l
}

// sentSnapshot records that the packet seq carries the snapshot of tick.
func (l *link) sentSnapshot(seq packet.Seq, tick gw.Tick) {
	l.snaps[int(seq)%snapshotRing] = sentSnapshot{seq: seq, tick: tick, ok: true}
}

// onAck learns from the ack of packet s which snapshot tick arrived.
func (l *link) onAck(s packet.Seq) {
	e := &l.snaps[int(s)%snapshotRing]
	if !e.ok || e.seq != s {
		return
	}
	e.ok = false
	if !l.hasAcked || e.tick.After(l.acked) {
		l.acked, l.hasAcked = e.tick, true
	}
}

// goodbye sends a reject or disconnect (t) in goodbyeCopies packets, each
// sent at once, so they are on the way before the connection closes.
func (l *link) goodbye(buf []byte, t protocol.MsgType, m *protocol.Reject) []byte {
	buf = protocol.AppendReject(buf[:0], t, m)
	for range goodbyeCopies {
		if _, err := l.pc.SendUnreliable(buf); err != nil {
			break
		}
		if l.pc.Flush() != nil {
			break
		}
	}
	return buf
}

// wire adds up the packet-layer counters the endpoints report.
type wire struct {
	sent, received, malformed, refused uint64
}

func (w *wire) add(s packet.Stats) {
	w.sent += s.BytesSent
	w.received += s.BytesReceived
	w.malformed += s.Malformed
	w.refused += s.OutOfWindow + s.ReceiveBytesFull + s.FragmentCap + s.FragmentRefused + s.FragmentMismatch
}
