package systems

import (
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// send writes one snapshot per connection every SendInterval ticks.
func (s *Server) send(w *gw.World) {
	tick := w.Tick()
	if s.untilSend--; s.untilSend > 0 {
		return
	}
	s.untilSend = s.opts.SendInterval
	now := s.src.Now()
	for _, sc := range s.conns {
		s.sw.Begin(tick)
		s.stats.GhostsDeferred += uint64(s.ghosts.WriteSnapshot(s.sw, sc.view, tick))
		h := protocol.SnapshotHeader{Tick: tick, EchoTime: sc.echo,
			Hold: uint16(min(ms(now-sc.echoAt), 65535))}
		if confirmed, ok := sc.inputs.Confirmed(); ok {
			h.Confirmed, h.HasConfirmed = confirmed, true
		}
		if lead, ok := sc.lead.Lead(); ok {
			h.Lead = float32(lead)
		}
		if seq, err := sc.link.pc.SendUnreliable(s.sw.Finish(&h)); err == nil {
			sc.link.sentSnapshot(seq, tick)
		}
		s.stats.SnapshotsSent++
	}
}
