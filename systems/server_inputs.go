package systems

import (
	"time"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// handle processes one packet of an open connection; it reports whether
// the connection was closed.
func (s *Server) handle(sc *serverConn, p []byte, now time.Duration, serverTime float64) bool {
	t, err := protocol.PeekType(p)
	if err != nil {
		s.stats.BadPackets++
		return false
	}
	switch t {
	case protocol.MsgHello: // our welcome was lost
		if protocol.DecodeHello(p, &s.hello) != nil {
			s.stats.BadPackets++
			return false
		}
		sc.heard = now
		sc.helloTime, sc.helloAt = s.hello.ClientTime, now
		s.welcome(sc, now)
	case protocol.MsgInputs:
		if err := protocol.DecodeInputs(p, s.binding.Schema(), &s.batch); err != nil {
			s.stats.BadPackets++
			s.stats.InputsRejected++
			return false
		}
		sc.heard = now // only a packet that decodes keeps the connection alive
		sc.view.Ack(s.batch.AckTick, s.batch.AckParts)
		if s.batch.Resync {
			sc.view.Resync(s.world.Tick())
		}
		// Echo the newest client time, held since its first arrival: an
		// older batch overtaken on the way, or a late duplicate, would
		// add its delay to the client's RTT sample.
		if !sc.echoed || int32(s.batch.ClientTime-sc.echo) > 0 {
			sc.echo, sc.echoAt, sc.echoed = s.batch.ClientTime, now, true
		}
		current := s.world.Tick()
		pending := s.clock.Pending()
		sc.viewAge.acknowledged(s.batch.AckTick, current, pending)
		size := s.binding.Schema().InputSize()
		for i, h := range s.batch.Heads {
			if sc.inputs.Add(h, s.batch.Data[i*size:(i+1)*size], current) == control.AddAccepted {
				sc.viewAge.arrived(h.Tick, current, pending)
			}
		}
		// The first arrival of a tick newer than any before says how early
		// the client sends. Late ones too (a negative lead), so the client
		// moves ahead, however late: the input buffer cannot tell a late
		// input older than its capacity from a duplicate, and a lead
		// measured before a client fell behind must not be reported for
		// good. The oldest tick first arriving in the batch is measured,
		// not the newest: when a packet is lost, its tick first arrives
		// in the next one, a send interval later, and that is the lead
		// the client must keep for its redundant copies to be in time.
		if n := len(s.batch.Heads); n > 0 {
			newest := s.batch.Heads[n-1].Tick
			if !sc.measured {
				sc.newest, sc.measured = newest, true
				sc.lead.Observe(newest, serverTime)
			} else if newest.After(sc.newest) {
				first := newest
				for i := n - 2; i >= 0 && s.batch.Heads[i].Tick.After(sc.newest); i-- {
					first = s.batch.Heads[i].Tick
				}
				sc.newest = newest
				sc.lead.Observe(first, serverTime)
			}
		}
	case protocol.MsgConfirmAck:
		next, err := protocol.DecodeConfirmAck(p)
		if err != nil {
			s.stats.BadPackets++
			return false
		}
		sc.confirms.ack(next)
	case protocol.MsgDisconnect:
		s.drop(sc, protocol.RejectClosed)
		return true
	default:
		s.stats.BadPackets++
	}
	return false
}

// applyInputs takes exactly one input per connection for the tick and
// writes it onto the ghosts the connection owns; a held place's ghosts
// get the neutral input (the input type's zero value: nobody is at the
// controls; the rules' substitute is for a gap in a live stream, and
// repeating a last input for the whole grace would walk the player off).
// In a replay of the determinism check it writes the one that tick took.
func (s *Server) applyInputs(w *gw.World) {
	tick := w.Tick()
	if s.play != nil {
		s.play.apply(w)
		return
	}
	rec := s.opts.Recorder
	for _, sc := range s.conns {
		var h components.InputHeader
		var in []byte
		if w.IsReplaying() {
			var ok bool
			if h, in, ok = sc.applied.at(tick); !ok {
				continue // connected after the tick: its ghosts were not there
			}
		} else {
			h, in, _ = sc.inputs.Take(tick)
			var clamped bool
			if h.MaxViewAge, clamped = sc.viewAge.maxViewAge(&h, s.maxInterp, s.viewTolerance); clamped {
				s.stats.InterpolationClaimsClamped++
			}
			h.Acked = sc.viewAge.ackedBefore(h.Tick)
			sc.applied.keep(tick, h, in)
			if rec != nil {
				rec.Applied(tick, sc.id, h, in)
			}
		}
		s.giveInput(w, sc.id, &h, in)
	}
	for _, p := range s.held {
		h, in := components.InputHeader{Tick: tick}, s.neutral
		if w.IsReplaying() {
			var ok bool
			if h, in, ok = p.sc.applied.at(tick); !ok {
				continue
			}
		} else {
			p.sc.applied.keep(tick, h, in)
			if rec != nil {
				rec.Applied(tick, p.sc.id, h, in)
			}
		}
		s.giveInput(w, p.sc.id, &h, in)
	}
}

// giveInput writes input h and rec onto the ghosts connection conn owns.
func (s *Server) giveInput(w *gw.World, conn components.ConnID, h *components.InputHeader, rec []byte) {
	a := w.Arche()
	b := s.binding
	s.owned = s.ghosts.Owned(s.owned[:0], conn)
	for _, e := range s.owned {
		if a.Has(e, b.Header) {
			*(*components.InputHeader)(a.Get(e, b.Header)) = *h
		}
		if b.HasInput && a.Has(e, b.Input) {
			copy(unsafe.Slice((*byte)(a.Get(e, b.Input)), len(rec)), rec)
		}
	}
}
