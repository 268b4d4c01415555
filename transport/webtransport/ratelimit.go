package webtransport

import "time"

// bucket is a connection's token bucket for Rate: it refills by the time
// since its last use, so it needs no goroutine.
type bucket struct {
	rate            Rate
	datagrams, size float64
	last            time.Time // zero until first used
}

// allow refills b for the time since its last use and takes one datagram
// of n bytes, reporting false (and taking nothing) when either half of the
// limit has run dry. A negative half is no limit.
func (b *bucket) allow(now time.Time, n int) bool { return b.wait(now, n) == 0 }

// wait refills b for the time since its last use and takes one datagram
// of n bytes, returning 0, or returns how long until it can (taking
// nothing).
func (b *bucket) wait(now time.Time, n int) time.Duration {
	r := b.rate
	burst := r.Burst
	if burst == 0 {
		burst = 1
	}
	if b.last.IsZero() {
		b.datagrams, b.size = r.Datagrams*burst, r.Bytes*burst
	} else if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.datagrams = min(b.datagrams+dt*r.Datagrams, r.Datagrams*burst)
		b.size = min(b.size+dt*r.Bytes, r.Bytes*burst)
	}
	b.last = now
	var short float64 // seconds until both halves hold enough
	if r.Datagrams >= 0 && b.datagrams < 1 {
		short = (1 - b.datagrams) / r.Datagrams
	}
	if r.Bytes >= 0 && b.size < float64(n) {
		short = max(short, (float64(n)-b.size)/r.Bytes)
	}
	if short > 0 {
		return max(time.Duration(short*float64(time.Second)), 1)
	}
	b.datagrams--
	b.size -= float64(n)
	return 0
}
