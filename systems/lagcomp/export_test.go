package lagcomp

import (
	"math"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/raycast"
)

// What the external tests of this package reach that games do not.

func (c *Compensator) Record(tick gw.Tick) { c.record(tick) }
func (c *Compensator) Window() float64     { return c.window }

// SetBroadphase turns the test of a shot against the recorded poses
// before rewinding on (the default) or off.
func (c *Compensator) SetBroadphase(on bool) { c.noBroadphase = !on }

// SetGrid turns a shot's walk of its view tick's grid on (the default,
// from gridMin entities) or off: off, a shot tests every entity's reach.
func (c *Compensator) SetGrid(on bool) {
	c.minGrid = math.MaxInt
	if on {
		c.minGrid = gridMin
	}
}

// SetGridMin sets the fewest entities a shot walks its tick's grid for.
func (c *Compensator) SetGridMin(n int) { c.minGrid = n }

// Near is an entity a ray may hit: its row at the view tick and where the
// ray enters its reach.
type Near struct {
	Row int32
	At  float64
}

// Near returns the entities at t plus f that ray may hit, in the order a
// shot rewinds them.
func (c *Compensator) Near(t gw.Tick, f float32, ray raycast.Ray) ([]Near, error) {
	if err := c.aim(t, f, &ray); err != nil {
		return nil, err
	}
	out := make([]Near, len(c.near))
	for i, n := range c.near {
		out[i] = Near{Row: n.row, At: n.near}
	}
	return out, nil
}

// Rewind returns every recorded entity at t plus f, blended between the
// two neighbouring ticks, as a shot rewinds those near its ray.
func (c *Compensator) Rewind(t gw.Tick, f float32) ([]Rewound, error) {
	if err := c.aim(t, f, nil); err != nil {
		return nil, err
	}
	for _, n := range c.near {
		c.rewindRow(int(n.row))
	}
	return c.targets, nil
}
