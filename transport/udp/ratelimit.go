package udp

import (
	"hash/maphash"
	"net/netip"
	"time"
)

// Rate is a token-bucket limit on packets and bytes per second. A zero field
// disables that half of the limit.
type Rate struct {
	Packets float64 // sustained packets per second
	Bytes   float64 // sustained bytes per second
	// Burst is how many seconds of traffic the bucket holds when full; zero
	// means one second.
	Burst float64
}

// bucket is a token bucket for packets and bytes.
type bucket struct {
	packets, bytes float64
	last           int64 // nanoseconds on the limiter's clock; 0 = never used
}

// allow refills b for the time since its last use and takes one packet of n
// bytes, reporting false (and taking nothing) when either half runs dry.
func (b *bucket) allow(r *Rate, now int64, n int) bool {
	burst := r.Burst
	if burst <= 0 {
		burst = 1
	}
	if b.last == 0 {
		b.packets, b.bytes = r.Packets*burst, r.Bytes*burst
	} else if dt := float64(now-b.last) / float64(time.Second); dt > 0 {
		b.packets = min(b.packets+dt*r.Packets, r.Packets*burst)
		b.bytes = min(b.bytes+dt*r.Bytes, r.Bytes*burst)
	}
	b.last = max(now, 1)
	if (r.Packets > 0 && b.packets < 1) || (r.Bytes > 0 && b.bytes < float64(n)) {
		return false
	}
	if r.Packets > 0 {
		b.packets--
	}
	if r.Bytes > 0 {
		b.bytes -= float64(n)
	}
	return true
}

// addressLimiter holds the per-address buckets in a fixed table indexed by a
// keyed hash of the source IP. Memory is fixed however many addresses send
// (spoofed or not); two IPs that share a slot share a budget. The hash key
// is random per start, so a sender cannot aim at a victim's slot.
type addressLimiter struct {
	rate  Rate
	seed  maphash.Seed
	table []bucket
}

func newAddressLimiter(r Rate, slots int) *addressLimiter {
	return &addressLimiter{rate: r, seed: maphash.MakeSeed(), table: make([]bucket, slots)}
}

// allow charges one packet of n bytes from ip to its slot.
func (l *addressLimiter) allow(ip netip.Addr, now int64, n int) bool {
	if l.rate.Packets <= 0 && l.rate.Bytes <= 0 {
		return true
	}
	return l.table[l.slot(ip)].allow(&l.rate, now, n)
}

// slot returns the table index of ip's source (sourceKey: an IPv6
// address's /64 shares one bucket).
func (l *addressLimiter) slot(ip netip.Addr) uint64 {
	b := sourceKey(ip).As16()
	return maphash.Bytes(l.seed, b[:]) % uint64(len(l.table))
}
