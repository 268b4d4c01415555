package systems

import (
	"fmt"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
)

// MaxInputDelay is the longest input delay, in ticks (InputDelay's Ticks
// and Max): half a second at 60 Hz, past what any link leaves room for.
const MaxInputDelay = control.MaxInputDelay

// InputDelay says how many ticks after it is sampled the player's input
// is applied: the input sampled while the client predicts tick T is the
// input of tick T + delay, on the client's prediction and on the server
// alike. The player sees its input act that many ticks later; in
// exchange the client predicts that many ticks less far ahead of the
// server, so every rollback replays that many ticks fewer and the
// prediction reads other ghosts that many ticks fresher, which makes
// fewer of them wrong (docs/input-delay.md). The zero value is no delay.
//
// The delay in use never exceeds what the link leaves room for, about
// the round trip in ticks plus ClientOptions.TargetLead minus one: a
// longer one would put the prediction behind the server's snapshots. It
// changes one tick at a time, without dropping or doubling an input:
// one more tick of delay is a tick whose input is sampled and sent while
// the prediction waits; one tick less is a tick predicted at once with
// the input already recorded for it. ClientStats.InputDelay says the
// delay in use.
type InputDelay struct {
	// Ticks is a fixed delay. Allowed: 0..30; 0 with Adaptive.
	Ticks int
	// Adaptive picks the delay from the measured round trip and jitter
	// instead, within Min and Max: enough ticks to cover half the round
	// trip plus twice the jitter, so the own player is predicted about
	// where the server is. It follows the link with a quarter tick of
	// hysteresis, re-evaluated every second.
	Adaptive bool
	// Min and Max bound the adaptive delay, in ticks; Max is 4 when
	// zero. Allowed: 0 ≤ Min ≤ Max ≤ 30; both 0 without Adaptive.
	Min, Max int
}

// check fills Max's default and refuses a bad setting, naming the value
// and the allowed range.
func (d InputDelay) check() (InputDelay, error) {
	const most = MaxInputDelay
	if !d.Adaptive {
		if d.Ticks < 0 || d.Ticks > most {
			return d, fmt.Errorf("systems: input delay %d ticks outside 0..%d", d.Ticks, most)
		}
		if d.Min != 0 || d.Max != 0 {
			return d, fmt.Errorf("systems: input delay bounds %d..%d set without Adaptive", d.Min, d.Max)
		}
		return d, nil
	}
	if d.Ticks != 0 {
		return d, fmt.Errorf("systems: input delay of %d ticks set with Adaptive: bound it with Min and Max", d.Ticks)
	}
	if d.Max == 0 {
		d.Max = 4
	}
	if d.Min < 0 || d.Min > d.Max || d.Max > most {
		return d, fmt.Errorf("systems: adaptive input delay bounds %d..%d outside 0 ≤ min ≤ max ≤ %d", d.Min, d.Max, most)
	}
	return d, nil
}

// most is the longest delay d may ask for.
func (d InputDelay) most() int {
	if d.Adaptive {
		return d.Max
	}
	return d.Ticks
}

// SetInputDelay changes the input delay mid-game (see InputDelay): the
// delay in use moves toward the new one by a tick per tick, no input
// dropped or doubled. It errors naming the value on a bad setting, or when
// InputHistory has no room for the delay beyond HistoryCapacity, and then
// changes nothing. Call it between Updates.
func (c *Client) SetInputDelay(d InputDelay) error {
	d, err := d.check()
	if err != nil {
		return err
	}
	if err := roomForDelay(c.inputs.Capacity(), c.history.Capacity(), d); err != nil {
		return err
	}
	c.opts.InputDelay = d
	c.delayWant = c.delayTarget()
	c.delayEval = c.rate
	return nil
}

// roomForDelay refuses an input stream of capacity inputs that cannot
// hold a history of capacity history plus the delay d asks for at most: a
// rollback's replay needs the inputs of every tick since the oldest one
// the history holds, and the stream also holds the ones sampled ahead.
func roomForDelay(inputs, history int, d InputDelay) error {
	switch {
	case inputs < history:
		return fmt.Errorf("systems: input stream capacity %d is below the history capacity %d: a long rollback would replay without inputs",
			inputs, history)
	case inputs < history+d.most():
		return fmt.Errorf("systems: input stream capacity %d is below the history capacity %d plus the input delay %d: a long rollback would replay without inputs",
			inputs, history, d.most())
	}
	return nil
}

// delayTarget is the delay the client moves toward: the fixed one, or the
// adaptive rule's, limited to what the link leaves room for.
func (c *Client) delayTarget() int {
	d := c.opts.InputDelay
	rtt, interval := c.rtt.Smoothed(), c.clock.Interval()
	want := d.Ticks
	if d.Adaptive {
		want = control.AdaptiveInputDelay(rtt, c.rtt.Variation(), interval, c.delay, d.Min, d.Max)
	}
	return control.LimitInputDelay(want, c.delay, rtt, interval, c.sync.TargetLead())
}

// retarget evaluates the target delay once a second, on due ticks.
func (c *Client) retarget() {
	if c.delayEval--; c.delayEval <= 0 {
		c.delayWant, c.delayEval = c.delayTarget(), c.rate
	}
}

// raiseDelay takes one more tick of delay when the target asks for it:
// this due tick samples and sends the input of the next tick in the
// input stream while the prediction waits, so the stream stays one input
// per tick and the prediction falls one tick further behind it. It
// reports whether it did.
func (c *Client) raiseDelay(w *gw.World) bool {
	if c.delay >= c.delayWant {
		return false
	}
	c.delay++
	c.stats.InputDelayChanges++
	c.sample(w)
	c.send(w)
	return true
}

// lowerDelay takes one tick of delay off when the target asks for it: the
// prediction runs the next tick at once, whose input the stream already
// holds (it samples nothing and sends nothing), before the due tick.
func (c *Client) lowerDelay() {
	if c.delay <= c.delayWant {
		return
	}
	c.delay--
	c.stats.InputDelayChanges++
	c.runTick()
}
