package systems

import (
	"math"
	"time"

	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport/packet"
)

func (c *Client) poll(now time.Duration) {
	for {
		m, ok := c.link.pc.Receive()
		if !ok {
			return
		}
		c.heard = now
		p := m.Data
		t, err := protocol.PeekType(p)
		if err != nil {
			c.stats.BadPackets++
			continue
		}
		if t == protocol.MsgGame {
			if c.state == stateConnected {
				c.msgs.receive(&c.msgPeer, m.Channel, p, 0, now)
			}
			continue
		}
		if m.Channel != packet.Unreliable { // the reliable channels carry events and game messages only
			if m.Channel == packet.Reliable && t == protocol.MsgEvents && c.events.schema != nil {
				c.takeEvents(p)
			} else {
				c.stats.BadPackets++
			}
			continue
		}
		switch t {
		case protocol.MsgWelcome:
			if c.state != stateConnecting {
				continue
			}
			var w protocol.Welcome
			if err := protocol.DecodeWelcome(p, &w); err != nil || int(w.TickRate) != c.rate {
				c.stats.BadPackets++
				continue
			}
			c.welcome = w
			c.start(now)
		case protocol.MsgReject, protocol.MsgDisconnect:
			var m protocol.Reject
			if err := protocol.DecodeReject(p, t, &m); err != nil {
				c.stats.BadPackets++
				continue
			}
			c.finish(t, &m)
		case protocol.MsgSnapshot:
			if c.state != stateConnected {
				continue
			}
			if err := protocol.DecodeSnapshot(p, c.binding.Schema(), c.scratch); err != nil {
				c.stats.BadPackets++
				continue
			}
			c.stats.SnapshotsReceived++
			part := uint8(1) << c.scratch.Part
			if c.hasLatest && c.scratch.Tick == c.latest.Tick && c.latestParts&part == 0 {
				c.extraPart(part)
				continue
			}
			if c.hasLatest && !c.scratch.Tick.After(c.latest.Tick) {
				c.stats.SnapshotsStale++
				continue
			}
			// Accepted snapshots complete their delta records in tick
			// order: each is the baseline the next ones build on.
			c.ghosts.Complete(c.scratch)
			c.latestParts = part
			c.latest, c.scratch = c.scratch, c.latest
			c.hasLatest, c.fresh = true, true
			// The interpolated ghosts' states are buffered on arrival, when
			// the clock counts the snapshot in, not at the next tick's
			// reconcile: the render tick assumes them from now on, and a
			// frame without a tick between (a held tick, a slow clock)
			// would otherwise extrapolate past states already received.
			c.iclock.Observe(c.latest.Tick, now)
			c.pushInterpolated(c.latest)
			if rtt := now - time.Duration(c.latest.EchoTime)*time.Millisecond - time.Duration(c.latest.Hold)*time.Millisecond; c.latest.EchoTime != 0 && rtt >= 0 {
				c.rtt.Sample(rtt)
			}
		case protocol.MsgConfirm:
			if c.state == stateConnected {
				c.confirmed(p)
			}
		default:
			c.stats.BadPackets++
		}
	}
}

// extraPart takes in another part of the newest snapshot's tick (the
// server sends more than one when the connection's budget allows): its
// ghosts complete their deltas and feed the interpolation, and its
// despawns apply; the tick's reconciliation, run on the part that came
// first, does not see its predicted ghosts (the next snapshot's does).
func (c *Client) extraPart(part uint8) {
	c.stats.SnapshotParts++
	c.latestParts |= part
	c.ghosts.Complete(c.scratch)
	c.pushInterpolated(c.scratch)
	c.ghosts.Despawn(c.scratch)
}

// start adopts the server's clock: the client's tick is set ahead of the
// server's by the round trip plus the target margin, so its first inputs
// arrive just before the server needs them.
func (c *Client) start(now time.Duration) {
	c.state = stateConnected
	c.heard, c.dropped = now, c.clock.DroppedTicks()
	c.ghosts.SetConn(c.welcome.Conn)
	rtt := now - time.Duration(c.welcome.EchoTime)*time.Millisecond - time.Duration(c.welcome.Hold)*time.Millisecond
	c.rtt.Sample(rtt)
	interval := c.clock.Interval()
	ahead := math.Ceil(float64(rtt)/float64(interval) + c.sync.TargetLead() + 1)
	// The inputs are stamped that far ahead; the prediction runs the input
	// delay behind them.
	c.delay = c.delayTarget()
	c.delayWant, c.delayEval = c.delay, c.rate
	c.world.SetTick(c.welcome.ServerTick.Add(int(ahead) - c.delay))
	c.log.Debug("ghostwire: connected", "conn", c.welcome.Conn, "tick", c.world.Tick(), "rtt", rtt)
}
