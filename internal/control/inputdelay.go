package control

import (
	"math"
	"time"
)

// MaxInputDelay bounds an input delay, in ticks: half a second at 60 Hz,
// far past what any link makes useful (see InputDelayCap).
const MaxInputDelay = 30

// inputDelayBand is how far, in ticks, the adaptive rule's raw value may
// stray past the current delay's range before the delay follows: a link
// near a boundary does not flip the delay back and forth, each flip a
// tick the prediction pauses or skips.
const inputDelayBand = 0.25

// AdaptiveInputDelay returns the input delay, in ticks, that the adaptive
// mode wants from the measured round trip and its variation (jitter),
// between lo and hi: enough ticks to cover the input's trip to the server,
// half the round trip, plus twice the jitter, rounded up, so the player's
// own prediction starts about where the server is. The current delay cur
// is kept while the raw value lies within a quarter tick of its range
// (cur−1, cur].
func AdaptiveInputDelay(rtt, jitter, interval time.Duration, cur, lo, hi int) int {
	raw := (float64(rtt)/2 + 2*float64(jitter)) / float64(interval)
	want := cur
	if raw > float64(cur)+inputDelayBand || raw < float64(cur)-1-inputDelayBand {
		want = int(math.Ceil(raw - 1e-6)) // a tick length in whole nanoseconds is a hair short
	}
	return max(lo, min(hi, want))
}

// LimitInputDelay returns want, or less when the link has no room for
// it: a client's inputs are stamped about RTT + targetLead ticks past the
// newest snapshot it holds, its prediction runs the delay behind them, and
// it must stay at least a tick ahead of the snapshots, or it would predict
// ticks the server already sent (and adopt every snapshot as a hard
// correction). So the delay is at most RTT/interval + targetLead − 1
// ticks, with the same quarter-tick band around that limit as
// AdaptiveInputDelay has around its own: the current delay cur stays
// until the limit falls a quarter tick below it, and rises only to a
// quarter tick below the limit. Never negative.
func LimitInputDelay(want, cur int, rtt, interval time.Duration, targetLead float64) int {
	limit := float64(rtt)/float64(interval) + targetLead - 1
	keep := int(math.Floor(limit + inputDelayBand))
	raise := int(math.Floor(limit - inputDelayBand))
	if want > cur {
		want = min(want, max(cur, raise))
	}
	return max(0, min(want, keep))
}
