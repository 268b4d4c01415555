package systems

import (
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// interpolate advances the render tick and shows the interpolated ghosts
// at it, once per frame.
func (c *Client) interpolate(w *gw.World) {
	now := c.src.Now()
	frame := float64(now-c.lastFrame) / float64(c.clock.Interval())
	c.lastFrame = now
	if c.state != stateConnected {
		return
	}
	if !c.iclock.Started() {
		return
	}
	c.render, c.rendered = c.iclock.Advance(now), true
	c.interpolator.Update(c.render, frame)
}

// pushInterpolated gives the interpolator the states of the ghosts of s
// this client does not predict, after completing the records sent without
// their identity (see ClientRegister.Resolve).
func (c *Client) pushInterpolated(s *protocol.Snapshot) {
	c.ghosts.Resolve(s)
	for gi := range s.Ghosts {
		if !c.ghosts.Predicts(&s.Ghosts[gi].Ghost) {
			c.interpolator.Push(s, gi)
		}
	}
}

// poseOthers shows the interpolated ghosts to the prediction of the tick
// as the server saw them at that tick (or last known before it), so a
// shove is predicted against where the others were then, not against
// where they are drawn (see ghostreg.Interpolator.Pose). The first run of
// a tick and a correction's replay record what they used; the determinism
// check's replays reuse it.
func (c *Client) poseOthers(w *gw.World) {
	first := !c.posed || w.Tick().After(c.posedTo)
	if first {
		c.posed, c.posedTo = true, w.Tick()
	}
	c.interpolator.Pose(w.Tick(), first || c.correcting)
}

// restoreOthers puts the interpolated ghosts back where they are drawn.
func (c *Client) restoreOthers(*gw.World) { c.interpolator.Restore() }
