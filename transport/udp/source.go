package udp

import (
	"net/netip"
	"time"
)

// sourceKey returns the key the per-source limits count under: an IPv4
// address (an IPv4-mapped IPv6 one unmapped), or an IPv6 address's /64.
// One IPv6 host is routinely given a whole /64 and can send from any
// address in it: keyed by the full address, it would get a budget and a
// pending quota per address, without limit.
func sourceKey(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if ip.Is4() {
		return ip
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return ip // not reached: an IPv6 address has 64 bits to keep
	}
	return p.Addr()
}

// PendingFairAge is how long a handshake waits before another request
// from its source (sourceKey) may take its place when the source has
// MaxPendingPerIP handshakes waiting. An honest client answers its
// challenge within a round trip, well under it, so it is never displaced;
// a source's quota held by handshakes nobody answers (requests with
// spoofed source addresses, or a client that never reads) frees a place
// for a newcomer every time one of them has waited this long.
const PendingFairAge = 500 * time.Millisecond

// sourcePending is the waiting handshakes of one source, oldest first.
type sourcePending struct {
	n              int
	oldest, newest *pending
}

// push appends p, the newest handshake of the source.
func (sp *sourcePending) push(p *pending) {
	p.srcPrev, p.srcNext = sp.newest, nil
	if sp.newest != nil {
		sp.newest.srcNext = p
	} else {
		sp.oldest = p
	}
	sp.newest = p
	sp.n++
}

// remove takes p out.
func (sp *sourcePending) remove(p *pending) {
	if p.srcPrev != nil {
		p.srcPrev.srcNext = p.srcNext
	} else {
		sp.oldest = p.srcNext
	}
	if p.srcNext != nil {
		p.srcNext.srcPrev = p.srcPrev
	} else {
		sp.newest = p.srcPrev
	}
	p.srcPrev, p.srcNext = nil, nil
	sp.n--
}
