package systems

import (
	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// maxPendingConfirms bounds the verdicts a connection has not
// acknowledged; past it the oldest is given up (ServerStats.ConfirmsDropped)
// and the client counts it missed.
const maxPendingConfirms = 256

// confirmQueue holds a connection's verdicts until its client
// acknowledges them: each send carries the oldest MaxConfirms, so a lost
// packet is repaired by the next one.
type confirmQueue struct {
	next    uint32 // sequence number of the next verdict
	pending []protocol.Confirm
}

// push queues c under the next sequence number; it reports whether the
// oldest verdict was given up to make room.
func (q *confirmQueue) push(c protocol.Confirm) (dropped bool) {
	if len(q.pending) == maxPendingConfirms {
		q.pending = append(q.pending[:0], q.pending[1:]...)
		dropped = true
	}
	c.Seq = q.next
	q.next++
	q.pending = append(q.pending, c)
	return dropped
}

// ack forgets every verdict before sequence number next (wrap-safe).
// An acknowledgement of verdicts never sent is ignored.
func (q *confirmQueue) ack(next uint32) {
	if int32(q.next-next) < 0 {
		return
	}
	i := 0
	for i < len(q.pending) && int32(next-q.pending[i].Seq) > 0 {
		i++
	}
	q.pending = append(q.pending[:0], q.pending[i:]...)
}

// ConfirmShot queues a judged shot's verdict for the client owning
// shooter, which receives it exactly once and in order through
// ClientOptions.OnConfirm: shot is the shot's input tick, reason a
// lagcomp.Reason key (or "other" for a game's own judge), part the hitbox
// part hit. A shooter no connection owns (a server-side bot, one whose
// client left) is skipped. The target is named by its ghost ID, 0 when it
// is none or not a ghost. A lagcomp.Compensator given the server in its
// options calls it for every verdict; a game with its own judge calls it
// itself. A connection keeps at most 256 unacknowledged verdicts; past
// that the oldest is given up (ServerStats.ConfirmsDropped).
func (s *Server) ConfirmShot(shooter ecs.Entity, shot gw.Tick, hit bool, reason string, target ecs.Entity, part uint8) {
	a := s.world.Arche()
	gid := s.binding.Ghost
	if !a.Alive(shooter) || !a.Has(shooter, gid) {
		return
	}
	owner := (*components.Ghost)(a.Get(shooter, gid)).Owner
	for _, sc := range s.conns {
		if sc.id != owner {
			continue
		}
		c := protocol.Confirm{Shot: shot, Hit: hit, Reason: protocol.ReasonCode(reason), Part: part}
		if !target.IsZero() && a.Alive(target) && a.Has(target, gid) {
			c.Target = (*components.Ghost)(a.Get(target, gid)).ID
		}
		if sc.confirms.push(c) {
			s.stats.ConfirmsDropped++
		}
		s.stats.Confirms++
		return
	}
}

// sendConfirms sends a connection's oldest unacknowledged verdicts.
func (s *Server) sendConfirms(sc *serverConn) {
	if len(sc.confirms.pending) == 0 {
		return
	}
	n := min(len(sc.confirms.pending), protocol.MaxConfirms)
	s.tx = protocol.AppendConfirms(s.tx[:0], sc.confirms.pending[:n])
	_, _ = sc.link.pc.SendUnreliable(s.tx)
}
