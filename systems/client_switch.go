package systems

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// switchSeed is how many ticks of the history, up to the newest snapshot's
// tick, seed the interpolation of a ghost switched to interpolated.
const switchSeed = 8

// Predict switches ghost id, which this client holds, between predicted
// (on) and interpolated, whatever its type's prediction mode, until the
// ghost is despawned: a ball the player is about to kick is predicted
// while near the player and interpolated when far. The server simulates
// every ghost either way; a server that decides who predicts what tells
// its clients with a message of the game's.
//
//   - To predicted: the entity leaves the interpolation where it is drawn,
//     in the past; the next snapshot holding it rolls back to the
//     snapshot's tick, writes the server's state and replays to the
//     present, as for a spawn. The entity jumps from the past to the
//     present then: a systems.Smoother the game installed (its correction
//     hooks run around that rollback) blends the jump on screen.
//   - To interpolated: the interpolation takes the entity with its
//     history up to the newest snapshot as its first states and fades
//     the display from the predicted present to the interpolated past
//     over ClientOptions.SwitchBlend.
//
// Switching to the mode the ghost has changes nothing. It makes
// structural changes: call it outside any query (a presentation system
// after its queries, or between Updates), never in a replay. It errors
// naming id when this client does not hold the ghost.
func (c *Client) Predict(id components.GhostID, on bool) error {
	if c.world.IsReplaying() {
		return fmt.Errorf("systems: Predict(%d) during a replay", id)
	}
	e, ok := c.ghosts.Entity(id)
	if !ok {
		return fmt.Errorf("systems: ghost %d is not on this client", id)
	}
	a := c.world.Arche()
	g := *(*components.Ghost)(a.Get(e, c.binding.Ghost))
	if c.ghosts.Predicts(&g) == on {
		_, _ = c.ghosts.SetPredicted(id, on) // pin the mode
		return nil
	}
	c.check.restart() // the history's windows do not reach across a switch
	if on {
		c.interpolator.Release(id)
		c.ghosts.SetPredicted(id, true)
		c.switchedIn[id] = true
		c.stats.SwitchedToPredicted++
		return nil
	}
	delete(c.switchedIn, id)
	ticks, states := c.seedStates(e, g)
	c.ghosts.SetPredicted(id, false)
	c.interpolator.Take(g, e, ticks, states, float64(c.opts.SwitchBlend)/float64(c.clock.Interval()))
	c.stats.SwitchedToInterpolated++
	return nil
}

// seedStates returns the history's states of e at the newest switchSeed
// ticks it holds up to the newest snapshot's tick, oldest first: what the
// server sent of it, or the prediction it confirmed.
func (c *Client) seedStates(e ecs.Entity, g components.Ghost) ([]gw.Tick, [][]unsafe.Pointer) {
	if !c.hasLatest {
		return nil, nil
	}
	ids, _ := c.binding.ComponentIDs(codec.GhostTypeID(g.Type))
	var ticks []gw.Tick
	var states [][]unsafe.Pointer
	for k := switchSeed - 1; k >= 0; k-- {
		t := c.latest.Tick.Add(-k)
		vals := make([]unsafe.Pointer, 0, len(ids))
		for _, id := range ids {
			p, err := c.history.Lookup(t, e, id)
			if err != nil || p == nil {
				vals = nil
				break
			}
			vals = append(vals, p)
		}
		if vals != nil {
			ticks, states = append(ticks, t), append(states, vals)
		}
	}
	return ticks, states
}

// defaultSwitchBlend is ClientOptions.SwitchBlend's default.
const defaultSwitchBlend = 100 * time.Millisecond
