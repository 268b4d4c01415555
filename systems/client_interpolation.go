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
