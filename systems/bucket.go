package systems

import "time"

// bucket is a token bucket: it fills at a rate of tokens a second up to a
// depth, starts full, and each accepted event takes one token. The rate
// and depth are given at each call, so one type's rules serve every
// connection's bucket without a copy in each.
type bucket struct {
	tokens float64
	at     time.Duration // when tokens was last brought up to date
	used   bool          // tokens and at are set: a fresh bucket is full
}

// take fills the bucket for the time since the last call, then takes a
// token if one is there; it reports whether it took one. A clock that
// went back adds nothing.
func (b *bucket) take(now time.Duration, rate, depth float64) bool {
	if !b.used {
		b.tokens, b.at, b.used = depth, now, true
	}
	if now > b.at {
		b.tokens = min(depth, b.tokens+rate*(now-b.at).Seconds())
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
