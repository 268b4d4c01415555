package systems

import (
	"fmt"

	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
)

// skipStall takes the n ticks the clock says are due and returns how many
// to run. When the clock's catch-up cap dropped ticks, the client stalled
// (a loading hitch, a debugger, a closed laptop lid): running the capped
// ticks would send a burst of inputs for ticks the server has already run
// without them, and the dropped ones would leave the client behind for
// good, every later input late. Instead it skips every due tick but the
// newest, counted in SkippedTicks: its tick jumps to where it would be
// without the stall, as at the welcome, so its next input arrives in
// time; the next snapshot corrects the state the skipped ticks did not
// simulate, by a rollback within the history or a hard correction.
func (c *Client) skipStall(n int) int {
	d := c.clock.DroppedTicks()
	if d == c.dropped {
		return n
	}
	skip := int(d-c.dropped) + n - 1
	c.dropped = d
	c.world.SetTick(c.world.Tick().Add(skip))
	c.stats.SkippedTicks += uint64(skip)
	return 1
}

// timeout ends a connection the server has sent nothing on for the
// timeout: the server is gone, or dropped this client and its disconnect
// was lost. The server is told, in case it is still there.
func (c *Client) timeout() {
	m := protocol.Reject{Reason: protocol.RejectTimeout}
	c.tx = c.link.goodbye(c.tx, protocol.MsgDisconnect, &m)
	m.Detail = fmt.Sprintf("nothing heard from the server for %v", c.opts.Timeout)
	c.end = &ConnError{Local: true, Reason: netsync.RejectReason(m.Reason), Detail: m.Detail}
	c.state, c.stats.Reason = stateDisconnected, c.end.Reason
	c.log.Info("ghostwire: disconnected", "reason", m.Reason.String(), "detail", m.Detail)
}
