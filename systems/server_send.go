package systems

import (
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// partFloor is the least budget a snapshot packet is written with: the
// first packet of a tick gets at least this much, and a further one is not
// worth sending with less.
const partFloor = 128

// packetOverhead is what the packet layer adds to every message: the
// budget counts it.
const packetOverhead = 12

// send writes one snapshot per connection every SendInterval ticks: one
// packet, or with ServerOptions.BytesPerSecond as many as the
// connection's bucket allows while ghosts wait. The bucket fills at the
// connection's budget (see CongestionOptions); with neither a
// BytesPerSecond nor congestion control, every snapshot is one packet of
// SnapshotBytes.
func (s *Server) send(w *gw.World) {
	tick := w.Tick()
	if s.untilSend--; s.untilSend > 0 {
		return
	}
	s.untilSend = s.opts.SendInterval
	s.ghosts.Encode(tick) // with no connection too: change ticks stay true for those who join
	now := s.src.Now()
	sends := float64(s.rate) / float64(s.opts.SendInterval) // snapshots a second
	floor := min(partFloor, s.opts.SnapshotBytes)
	top, parts, burst := s.budgetTop()
	least := float64(s.opts.Congestion.Floor)
	if least == 0 {
		least = float64(floor+packetOverhead) * sends
	}
	bucket := s.opts.BytesPerSecond > 0 || !s.opts.Congestion.Off
	for _, sc := range s.conns {
		if bucket {
			rate := top
			if !s.opts.Congestion.Off {
				st := sc.link.pc.Stats()
				rate = sc.budget.update(now, sc.link.pc.RTT(), st.PacketsAcked, st.PacketsLost, least, top)
			}
			sc.tokens = min(sc.tokens+rate/sends, burst)
		}
		deferred := 0
		for part := range parts {
			size := s.opts.SnapshotBytes
			if bucket {
				size = min(size, int(sc.tokens)-packetOverhead)
				if part > 0 && size < floor {
					break
				}
				size = max(size, floor)
			}
			if err := s.sw.Budget(size); err != nil {
				panic(err) // partFloor..SnapshotBytes, checked in NewServer: a bug
			}
			s.sw.Begin(tick)
			deferred = s.ghosts.WritePart(s.sw, sc.view, tick, part)
			h := protocol.SnapshotHeader{Tick: tick, Part: uint8(part), EchoTime: sc.echo,
				Hold: uint16(min(ms(now-sc.echoAt), 65535))}
			if confirmed, ok := sc.inputs.Confirmed(); ok {
				h.Confirmed, h.HasConfirmed = confirmed, true
			}
			if lead, ok := sc.lead.Lead(); ok {
				h.Lead = float32(lead)
			}
			p := s.sw.Finish(&h)
			if seq, err := sc.link.pc.SendUnreliable(p); err == nil && part == 0 {
				sc.link.sentSnapshot(seq, tick)
			}
			// A debt of more than a burst is forgiven: the first packet
			// of each tick goes however far the budget is behind.
			sc.tokens = max(sc.tokens-float64(len(p)+packetOverhead), -burst)
			sc.budget.sent += uint64(len(p) + packetOverhead)
			s.stats.SnapshotsSent++
			if part > 0 {
				s.stats.SnapshotParts++
			}
			if deferred == 0 {
				break
			}
		}
		s.stats.GhostsDeferred += uint64(deferred)
		s.sendConfirms(sc)
	}
	s.sendEvents(tick)
}

// budgetTop returns the most a connection's snapshot budget allows, in
// bytes per second (ServerOptions.BytesPerSecond, or one packet of
// SnapshotBytes a send), the packets a snapshot may take and the most
// its bucket holds, in bytes.
func (s *Server) budgetTop() (top float64, parts int, burst float64) {
	if s.opts.BytesPerSecond > 0 {
		return float64(s.opts.BytesPerSecond), protocol.MaxSnapshotParts, float64(protocol.MaxSnapshotParts * s.opts.SnapshotBytes)
	}
	packet := float64(s.opts.SnapshotBytes + packetOverhead)
	return packet * float64(s.rate) / float64(s.opts.SendInterval), 1, packet
}

// budget returns connection sc's snapshot budget in bytes per second.
func (s *Server) budget(sc *serverConn) int {
	top, _, _ := s.budgetTop()
	if s.opts.Congestion.Off || sc.budget.rate == 0 {
		return int(top)
	}
	return int(sc.budget.rate)
}
