package systems

import (
	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/internal/protocol"
)

// confirmed delivers a confirmation packet's verdicts: each exactly once
// and in order of their sequence numbers (the order the server judged the
// shots), however the network lost, duplicated or reordered the packets,
// and acknowledges what arrived so the server stops resending it.
func (c *Client) confirmed(p []byte) {
	var err error
	if c.confirms, err = protocol.DecodeConfirms(p, c.confirms[:0]); err != nil {
		c.stats.BadPackets++
		return
	}
	// The server always sends from its oldest unacknowledged verdict: a
	// packet starting past the next one expected means the server gave
	// those up (its queue was full).
	if first := c.confirms[0].Seq; int32(first-c.nextConfirm) > 0 {
		c.stats.ConfirmsMissed += uint64(first - c.nextConfirm)
		c.nextConfirm = first
	}
	for i := range c.confirms {
		v := &c.confirms[i]
		if v.Seq != c.nextConfirm {
			c.stats.ConfirmsDuplicate++
			continue
		}
		c.nextConfirm++
		c.stats.Confirmations++
		if v.Hit {
			c.stats.ConfirmedHits++
		}
		if c.opts.OnConfirm != nil {
			var target ecs.Entity
			if v.Target != 0 {
				target, _ = c.ghosts.Entity(v.Target)
			}
			c.opts.OnConfirm(c.world, v.Shot, v.Hit, protocol.ReasonName(v.Reason), target, v.Part)
		}
	}
	c.tx = protocol.AppendConfirmAck(c.tx[:0], c.nextConfirm)
	_, _ = c.link.pc.SendUnreliable(c.tx)
}
