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
// connection's bucket allows while ghosts wait.
func (s *Server) send(w *gw.World) {
	tick := w.Tick()
	if s.untilSend--; s.untilSend > 0 {
		return
	}
	s.untilSend = s.opts.SendInterval
	now := s.src.Now()
	bps := float64(s.opts.BytesPerSecond)
	burst := float64(protocol.MaxSnapshotParts * s.opts.SnapshotBytes)
	fill := bps * float64(s.opts.SendInterval) / float64(s.rate)
	floor := min(partFloor, s.opts.SnapshotBytes)
	for _, sc := range s.conns {
		parts := 1
		if bps > 0 {
			sc.tokens = min(sc.tokens+fill, burst)
			parts = protocol.MaxSnapshotParts
		}
		deferred := 0
		for part := range parts {
			size := s.opts.SnapshotBytes
			if bps > 0 {
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
