package control

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ghostwire/ghostwire/ecs"
)

// InterpolationOptions configures an [InterpolationClock]. The zero value
// is adaptive.
type InterpolationOptions struct {
	// Delay is a fixed interpolation delay; 0 adapts it to the measured
	// send interval, jitter and loss. Allowed: 0..1s.
	Delay time.Duration
	// MaxExtrapolation caps how far past the newest received state remote
	// ghosts are extrapolated before they hold; 4 ticks when zero.
	// Allowed: 0..60 ticks (a negative value disables extrapolation).
	MaxExtrapolation float64
}

// InterpolationClock estimates the server's tick on the client's clock
// from snapshot arrivals and yields the render tick of interpolated
// ghosts: estimated server tick − delay, fractional, never going back.
// Its ticks are continuous (ecs.Tick.Unwrap): they start at the first
// snapshot's tick and keep counting past 2³² instead of wrapping, so the
// render tick moves smoothly across the wrap; [ecs.TickAt] turns one back
// into a tick and a fraction.
//
// The adaptive delay is what the measured arrivals call for, not a sum of
// worst cases: one send interval (the gap interpolation spans), plus one
// more (so the loss of one snapshot is bridged by interpolating over the
// gap to the next; it is also Netcode for Entities' floor of two), plus
// the latest of the last 64 arrivals against a steady stream (the measured
// arrival spread, the 100th percentile of a window of about one second at
// 60 Hz). Two losses in a row, or an arrival later than any of the last
// 64 and by more than the spare interval, are left to extrapolation,
// capped by MaxExtrapolation. The delay rises toward a larger target
// faster than it falls toward a smaller one (see Advance).
// docs/tuning.md has the figures.
type InterpolationClock struct {
	interval time.Duration
	opts     InterpolationOptions
	offset   float64 // server tick − client time in ticks
	started  bool
	newest   ecs.Tick
	newestU  float64 // newest as a continuous tick
	gapMin   float64 // send interval estimate, ticks
	gaps     [32]float64
	gapN     int
	late     [64]float64 // lateness of recent arrivals against offset, ticks
	lateN    int
	lateP    float64 // high percentile of late, ticks
	jitter   float64 // mean deviation of arrivals, ticks
	loss     float64 // estimated fraction of snapshots lost
	delay    float64 // current delay, ticks
	render   float64
	last     float64 // client time of the last Advance, ticks
}

// NewInterpolationClock returns a clock for ticks of length interval. It
// errors naming the value on a bad option.
func NewInterpolationClock(interval time.Duration, opts InterpolationOptions) (*InterpolationClock, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("netsync: tick interval %v must be > 0", interval)
	}
	if opts.Delay < 0 || opts.Delay > time.Second {
		return nil, fmt.Errorf("netsync: interpolation delay %v outside 0..1s", opts.Delay)
	}
	if opts.MaxExtrapolation == 0 {
		opts.MaxExtrapolation = 4
	}
	if opts.MaxExtrapolation > 60 || math.IsNaN(opts.MaxExtrapolation) {
		return nil, fmt.Errorf("netsync: max extrapolation %v outside 0..60 ticks", opts.MaxExtrapolation)
	}
	opts.MaxExtrapolation = max(opts.MaxExtrapolation, 0)
	return &InterpolationClock{interval: interval, opts: opts, gapMin: 1}, nil
}

// MaxExtrapolation returns the extrapolation cap in ticks.
func (c *InterpolationClock) MaxExtrapolation() float64 { return c.opts.MaxExtrapolation }

func (c *InterpolationClock) ticks(d time.Duration) float64 { return float64(d) / float64(c.interval) }

// Observe notes the arrival at client time at of a snapshot of tick. Only
// snapshots newer than every earlier one count.
func (c *InterpolationClock) Observe(tick ecs.Tick, at time.Duration) {
	now := c.ticks(at)
	if !c.started {
		c.started, c.offset, c.newest, c.newestU = true, float64(tick)-now, tick, float64(tick)
		c.delay = c.target()
		c.render = now + c.offset - c.delay
		c.last = now
		return
	}
	if !tick.After(c.newest) {
		return
	}
	gap := float64(tick.Sub(c.newest))
	o := c.newestU + gap - now
	c.gaps[c.gapN%len(c.gaps)] = gap
	c.gapN++
	c.gapMin = gap
	for _, g := range c.gaps[:min(c.gapN, len(c.gaps))] {
		c.gapMin = min(c.gapMin, g)
	}
	// Deviation of this arrival from a steady stream at the estimated offset.
	dev := math.Abs(o - c.offset)
	c.jitter += (dev - c.jitter) / 16
	c.late[c.lateN%len(c.late)] = c.offset - o
	c.lateN++
	c.lateP = slices.Max(c.late[:min(c.lateN, len(c.late))])
	missing := max(0, gap/c.gapMin-1)
	// One sample per expected snapshot: each missing one lost, this one
	// received. (Averaging missing/(missing+1) per arrival would weigh a
	// gap like one snapshot and read about half the real loss.)
	c.loss = 1 - (1-c.loss)*math.Pow(1-1.0/32, missing)
	c.loss -= c.loss / 32
	c.offset += (o - c.offset) / 32
	c.newest, c.newestU = tick, c.newestU+gap
}

// target is the delay the measurements call for, in ticks.
func (c *InterpolationClock) target() float64 {
	if c.opts.Delay > 0 {
		return c.ticks(c.opts.Delay)
	}
	return 2*c.gapMin + max(0, c.lateP)
}

// How fast the delay follows its target, as a share of the elapsed time:
// remote ghosts are shown at 90 % speed at most while it grows (a wider
// arrival spread was just measured; growing at 2 % took 1.7 s at 60 Hz to
// cover 2 ticks, extrapolating meanwhile) and at 102 % while it shrinks.
// While the first 64 arrivals measure the spread it rises at once and the
// render tick never passes the newest snapshot: it pauses instead, which
// at the start shows nothing wrong.
const (
	delayRise = 0.1
	delayFall = 0.02
)

// Advance returns the render tick at client time now, a continuous tick
// (0 before the first snapshot). The delay follows its target by at most
// 10 % of the elapsed time upward (at once during the first 64 arrivals,
// when the render tick also stays at or behind the newest snapshot) and
// 2 % downward, and the render tick never decreases, so remote ghosts
// never jump back.
func (c *InterpolationClock) Advance(now time.Duration) float64 {
	if !c.started {
		return 0
	}
	t := c.ticks(now)
	if d := c.target() - c.delay; d != 0 {
		el := max(0, t-c.last)
		rise := delayRise * el
		if c.lateN < len(c.late) {
			// The spread is still being measured: the first arrivals
			// only learn it, and showing ghosts late at the start costs
			// nothing, extrapolating them does.
			rise = d
		}
		c.delay += max(-delayFall*el, min(rise, d))
	}
	r := t + c.offset - c.delay
	if c.lateN < len(c.late) {
		// Nor does it run past the newest snapshot then: the offset comes
		// from the first few arrivals, and an early first one would set
		// the render tick ahead of everything the next ones bring.
		r = min(r, c.newestU)
	}
	c.render = max(c.render, r)
	c.last = t
	return c.render
}

// Started reports whether a snapshot was observed: only then is there a
// render tick.
func (c *InterpolationClock) Started() bool { return c.started }

// Delay returns the current interpolation delay in ticks.
func (c *InterpolationClock) Delay() float64 { return c.delay }

// Newest returns the newest snapshot tick observed.
func (c *InterpolationClock) Newest() ecs.Tick { return c.newest }

// ServerTick returns the estimated current server tick at client time
// now, a continuous tick.
func (c *InterpolationClock) ServerTick(now time.Duration) float64 { return c.ticks(now) + c.offset }

// Jitter returns the measured arrival jitter in ticks.
func (c *InterpolationClock) Jitter() float64 { return c.jitter }

// Loss returns the estimated fraction of snapshots lost.
func (c *InterpolationClock) Loss() float64 { return c.loss }
