// Package fixedclock turns wall or virtual time into fixed simulation
// ticks for the endpoints: an accumulator with a catch-up cap, a render
// alpha and a time scale for clock synchronization.
package fixedclock

import (
	"fmt"
	"time"

	"github.com/ghostwire/ghostwire/ecs"
)

// Options configures a [Clock].
type Options struct {
	// TickRate in ticks per second; 60 when zero.
	TickRate int
	// MaxCatchUp caps the ticks run for one Advance call after a stall;
	// 8 when zero (seed 000). Time beyond the cap is dropped and counted.
	MaxCatchUp int
}

// Clock turns the time of an [ecs.TimeSource] into fixed simulation ticks
// with an accumulator (Glenn Fiedler's "Fix Your Timestep"). The time scale
// lets a client run slightly faster or slower than the server to keep its
// lead, without ever changing the tick length the simulation sees.
type Clock struct {
	src        ecs.TimeSource
	interval   time.Duration
	maxCatchUp int
	last       time.Duration
	acc        time.Duration
	scale      float64
	dropped    uint64
}

// New returns a clock reading src. It returns an error naming the
// value when TickRate is outside 1..1000 or MaxCatchUp outside 1..1000.
func New(src ecs.TimeSource, opts Options) (*Clock, error) {
	if opts.TickRate == 0 {
		opts.TickRate = 60
	}
	if opts.MaxCatchUp == 0 {
		opts.MaxCatchUp = 8
	}
	if opts.TickRate < 1 || opts.TickRate > 1000 {
		return nil, fmt.Errorf("ecs: tick rate %d outside 1..1000", opts.TickRate)
	}
	if opts.MaxCatchUp < 1 || opts.MaxCatchUp > 1000 {
		return nil, fmt.Errorf("ecs: max catch-up %d outside 1..1000", opts.MaxCatchUp)
	}
	return &Clock{
		src:        src,
		interval:   time.Second / time.Duration(opts.TickRate),
		maxCatchUp: opts.MaxCatchUp,
		last:       src.Now(),
		scale:      1,
	}, nil
}

// Interval returns the fixed length of one tick.
func (c *Clock) Interval() time.Duration { return c.interval }

// Advance reads the time source and returns how many ticks to run now
// (0..MaxCatchUp). Whole ticks beyond the cap are dropped and counted in
// [Clock.DroppedTicks], so a stall never causes a spiral of death.
func (c *Clock) Advance() int {
	now := c.src.Now()
	elapsed := now - c.last
	c.last = now
	if c.scale != 1 {
		elapsed = time.Duration(float64(elapsed) * c.scale)
	}
	c.acc += elapsed
	n := int(c.acc / c.interval)
	c.acc -= time.Duration(n) * c.interval
	if n > c.maxCatchUp {
		c.dropped += uint64(n - c.maxCatchUp)
		n = c.maxCatchUp
	}
	return n
}

// Alpha returns how far the time is between the last tick and the next,
// in [0, 1): the blend factor for rendering between two tick states.
func (c *Clock) Alpha() float64 {
	return float64(c.acc) / float64(c.interval)
}

// Pending returns the time accumulated toward the next tick, in ticks,
// including time elapsed since the last Advance: the fractional part of
// "now" on the tick axis. A server uses tick + Pending() to measure how
// early an input arrived.
func (c *Clock) Pending() float64 {
	elapsed := c.src.Now() - c.last
	if c.scale != 1 {
		elapsed = time.Duration(float64(elapsed) * c.scale)
	}
	return float64(c.acc+elapsed) / float64(c.interval)
}

// SetScale sets the rate at which time feeds the accumulator: 1.02 runs
// ticks 2 % faster. It panics on a scale outside [0.5, 2], a range no
// clock-sync controller should ever need.
func (c *Clock) SetScale(s float64) {
	if !(s >= 0.5 && s <= 2) {
		panic(fmt.Sprintf("ecs: clock scale %v outside 0.5..2", s))
	}
	c.scale = s
}

// Scale returns the current time scale.
func (c *Clock) Scale() float64 { return c.scale }

// DroppedTicks returns how many ticks the catch-up cap has dropped.
func (c *Clock) DroppedTicks() uint64 { return c.dropped }
