package control

import (
	"fmt"
	"math"

	"github.com/ghostwire/ghostwire/ecs"
)

// LeadTracker is the server's view of how early one client's inputs
// arrive: for each newly arrived tick, lead = tick − server time (in ticks,
// fractional), and the tracker keeps the minimum over a window of the
// last leadWindow arrivals. Late or lost first copies lower the minimum,
// so the client aims its margin at the worst case it actually sees.
// Observe and Lead cost O(1) (amortized): the server asks every
// connection's lead every tick.
type LeadTracker struct {
	// A monotonic queue of the arrivals that can still be the window's
	// minimum: arrival numbers and leads, the leads increasing from the
	// front at head; an arrival with a later one at or below it never
	// is, and leaves.
	seq      [leadWindow]uint64
	lead     [leadWindow]float64
	head, n  int
	arrivals uint64
}

// leadWindow is how many recent arrivals the lead is the minimum of: a
// second at 60 Hz.
const leadWindow = 60

// Observe records the lead of one input tick arriving at serverTime (the
// newest simulated tick plus the fraction of the next tick elapsed, as a
// continuous tick: float64(tick) + fraction will do, the lead is right
// across the wrap).
func (l *LeadTracker) Observe(tick ecs.Tick, serverTime float64) {
	v := tick.Unwrap(serverTime) - serverTime
	l.arrivals++
	for l.n > 0 && l.seq[l.head]+leadWindow <= l.arrivals { // out of the window
		l.head, l.n = (l.head+1)%leadWindow, l.n-1
	}
	for l.n > 0 && l.lead[(l.head+l.n-1)%leadWindow] >= v {
		l.n--
	}
	i := (l.head + l.n) % leadWindow
	l.seq[i], l.lead[i] = l.arrivals, v
	l.n++
}

// Lead returns the minimum lead of the last leadWindow arrivals, and
// false before the first arrival.
func (l *LeadTracker) Lead() (float64, bool) {
	if l.n == 0 {
		return 0, false
	}
	return l.lead[l.head], true
}

// ClockSyncOptions configures a [ClockSync]. The zero value is usable.
type ClockSyncOptions struct {
	// TargetLead is the margin, in ticks, by which the client wants its
	// worst recent input to arrive before the server needs it; 1 when
	// zero. Allowed: 0.25..30.
	TargetLead float64
	// MaxAdjust bounds the time scale to 1 ± MaxAdjust; 0.05 when zero
	// (Overwatch and Netcode for Entities adjust by a few percent).
	// Allowed: 0.001..0.5.
	MaxAdjust float64
	// Gain is the scale change per tick of lead error; 0.02 when zero.
	// Allowed: 0.0001..0.5.
	Gain float64
	// ResetAfter is the lead error, in ticks, beyond which the client jumps
	// instead of drifting; 10 when zero. Allowed: 2..1000.
	ResetAfter float64
}

// ClockSync keeps a client's prediction tick ahead of the server by about
// RTT/2 plus a margin, steering by the server's lead feedback: a small
// change of the client's time scale while the error is small, a jump when
// it is large.
type ClockSync struct {
	opts    ClockSyncOptions
	settle  ecs.Tick // ignore feedback for ticks sent before this tick
	jumped  bool     // settle is set (tick 0 is no bound: the ticks wrap)
	scale   float64
	jumps   uint64
	lastErr float64
}

// NewClockSync returns a controller. It errors naming the value when an
// option is out of range.
func NewClockSync(opts ClockSyncOptions) (*ClockSync, error) {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&opts.TargetLead, 1)
	def(&opts.MaxAdjust, 0.05)
	def(&opts.Gain, 0.02)
	def(&opts.ResetAfter, 10)
	check := func(name string, v, lo, hi float64) error {
		if !(v >= lo && v <= hi) {
			return fmt.Errorf("netsync: clock sync %s %v outside %v..%v", name, v, lo, hi)
		}
		return nil
	}
	for _, err := range []error{
		check("target lead", opts.TargetLead, 0.25, 30),
		check("max adjust", opts.MaxAdjust, 0.001, 0.5),
		check("gain", opts.Gain, 0.0001, 0.5),
		check("reset threshold", opts.ResetAfter, 2, 1000),
	} {
		if err != nil {
			return nil, err
		}
	}
	return &ClockSync{opts: opts, scale: 1}, nil
}

// TargetLead returns the configured margin in ticks.
func (c *ClockSync) TargetLead() float64 { return c.opts.TargetLead }

// Feedback takes the lead the server reported in a snapshot whose
// confirmed input tick is confirmed. It returns the time scale to run the
// client clock at, and a jump in ticks: positive means skip that many ticks
// ahead at once, negative means hold (run no tick) for that many. Feedback
// about inputs sent before a jump took effect is ignored.
func (c *ClockSync) Feedback(lead float64, confirmed, now ecs.Tick) (scale float64, jump int) {
	if c.jumped && confirmed.Before(c.settle) {
		return c.scale, 0
	}
	err := lead - c.opts.TargetLead
	c.lastErr = err
	if math.Abs(err) > c.opts.ResetAfter {
		c.jumps++
		c.scale = 1
		jump := -int(math.Floor(err)) // early: hold
		if err < 0 {
			jump = int(math.Ceil(-err)) // late: skip ahead
		}
		// Leads of inputs sent before the jump stay in the server's window
		// until a window's worth of later inputs has arrived; skipped ticks
		// send none, so a skip ahead delays that by the ticks skipped.
		c.settle, c.jumped = now.Add(1+leadWindow+max(jump, 0)), true
		return 1, jump
	}
	if math.Abs(err) < 0.25 {
		c.scale = 1
	} else {
		c.scale = 1 - max(-c.opts.MaxAdjust, min(c.opts.MaxAdjust, err*c.opts.Gain))
	}
	return c.scale, 0
}

// Scale returns the current time scale.
func (c *ClockSync) Scale() float64 { return c.scale }

// Jumps returns how many times the controller jumped instead of drifting.
func (c *ClockSync) Jumps() uint64 { return c.jumps }

// Error returns the last lead error in ticks (positive: too early).
func (c *ClockSync) Error() float64 { return c.lastErr }
