package ecs

import (
	"fmt"
	"time"
)

// TimeSource reports elapsed time since an arbitrary origin. Games use
// [RealTime]; tests and simulations use [VirtualTime], so nothing sleeps.
type TimeSource interface {
	Now() time.Duration
}

// VirtualTime is a TimeSource moved only by [VirtualTime.Advance]. The
// zero value reads 0.
type VirtualTime struct{ now time.Duration }

// Now returns the virtual time.
func (v *VirtualTime) Now() time.Duration { return v.now }

// Advance moves the virtual time forward by d. It panics on a negative d,
// because time that runs backwards breaks every accumulator built on it.
func (v *VirtualTime) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("ecs: VirtualTime.Advance(%v): duration must be >= 0", d))
	}
	v.now += d
}

// RealTime is a TimeSource backed by the monotonic wall clock.
type RealTime struct{ start time.Time }

// NewRealTime returns a RealTime whose origin is now.
func NewRealTime() *RealTime { return &RealTime{start: time.Now()} }

// Now returns the wall time elapsed since the origin.
func (r *RealTime) Now() time.Duration { return time.Since(r.start) }

// ClockOptions configures a [FixedClock].
type ClockOptions struct {
	// TickRate in ticks per second; 60 when zero.
	TickRate int
	// MaxCatchUp caps the ticks run for one Advance call after a stall;
	// 8 when zero (seed 000). Time beyond the cap is dropped and counted.
	MaxCatchUp int
}

// FixedClock turns the time of a TimeSource into fixed simulation ticks
// with an accumulator (Glenn Fiedler's "Fix Your Timestep"). The time scale
// lets a client run slightly faster or slower than the server to keep its
// lead, without ever changing the tick length the simulation sees.
type FixedClock struct {
	src        TimeSource
	interval   time.Duration
	maxCatchUp int
	last       time.Duration
	acc        time.Duration
	scale      float64
	dropped    uint64
}

// NewFixedClock returns a clock reading src. It returns an error naming the
// value when TickRate is outside 1..1000 or MaxCatchUp outside 1..1000.
func NewFixedClock(src TimeSource, opts ClockOptions) (*FixedClock, error) {
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
	return &FixedClock{
		src:        src,
		interval:   time.Second / time.Duration(opts.TickRate),
		maxCatchUp: opts.MaxCatchUp,
		last:       src.Now(),
		scale:      1,
	}, nil
}

// Interval returns the fixed length of one tick.
func (c *FixedClock) Interval() time.Duration { return c.interval }

// Advance reads the time source and returns how many ticks to run now
// (0..MaxCatchUp). Whole ticks beyond the cap are dropped and counted in
// [FixedClock.DroppedTicks], so a stall never causes a spiral of death.
func (c *FixedClock) Advance() int {
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
func (c *FixedClock) Alpha() float64 {
	return float64(c.acc) / float64(c.interval)
}

// Pending returns the time accumulated toward the next tick, in ticks,
// including time elapsed since the last Advance: the fractional part of
// "now" on the tick axis. A server uses tick + Pending() to measure how
// early an input arrived.
func (c *FixedClock) Pending() float64 {
	elapsed := c.src.Now() - c.last
	if c.scale != 1 {
		elapsed = time.Duration(float64(elapsed) * c.scale)
	}
	return float64(c.acc+elapsed) / float64(c.interval)
}

// SetScale sets the rate at which time feeds the accumulator: 1.02 runs
// ticks 2 % faster. It panics on a scale outside [0.5, 2], a range no
// clock-sync controller should ever need.
func (c *FixedClock) SetScale(s float64) {
	if !(s >= 0.5 && s <= 2) {
		panic(fmt.Sprintf("ecs: clock scale %v outside 0.5..2", s))
	}
	c.scale = s
}

// Scale returns the current time scale.
func (c *FixedClock) Scale() float64 { return c.scale }

// DroppedTicks returns how many ticks the catch-up cap has dropped.
func (c *FixedClock) DroppedTicks() uint64 { return c.dropped }
