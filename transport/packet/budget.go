package packet

import "time"

// budgetBurst is how much unused budget the bucket keeps, as a time at the
// budget's rate: enough to absorb a tick's jitter, too little for a burst
// that would fill a router queue.
const budgetBurst = 100 * time.Millisecond

// bucket is a token bucket of bytes. A packet may go out while the bucket
// is not negative and then takes its whole size, so the overshoot is at most
// one packet.
type bucket struct {
	rate   float64 // bytes per second; 0 = unlimited
	tokens float64
	last   time.Duration
}

func newBucket(rate int, now time.Duration) bucket {
	return bucket{rate: float64(rate), last: now}
}

// refill adds the budget earned since the last refill, up to the burst.
func (b *bucket) refill(now time.Duration) {
	if b.rate == 0 || now <= b.last {
		return
	}
	b.tokens = min(b.tokens+b.rate*(now-b.last).Seconds(), b.rate*budgetBurst.Seconds())
	b.last = now
}

// allows reports whether a packet may go out now.
func (b *bucket) allows() bool { return b.rate == 0 || b.tokens >= 0 }

// spend takes n bytes from the bucket.
func (b *bucket) spend(n int) {
	if b.rate != 0 {
		b.tokens -= float64(n)
	}
}
