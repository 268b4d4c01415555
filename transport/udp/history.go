package udp

import "net/netip"

// tokenHistory remembers which source address each recent connect token
// (by its MAC) was first used from, in a fixed ring: when full, the oldest
// entry makes room. Memory is fixed whatever the traffic. Forgetting a token
// early only lets its request be replayed from a second address, which gains
// nothing without the client's keys: the challenge it earns cannot be
// answered.
type tokenHistory struct {
	ring  []tokenUse
	next  int // ring slot the next entry takes
	index map[[macSize]byte]int
}

// tokenUse is one remembered token.
type tokenUse struct {
	mac    [macSize]byte
	addr   netip.AddrPort
	expire uint64 // unix seconds; 0 = slot unused
	spent  bool   // the token completed a connection
}

func newTokenHistory(n int) *tokenHistory {
	return &tokenHistory{ring: make([]tokenUse, n), index: make(map[[macSize]byte]int, n)}
}

// check reports whether the token with mac may be used from addr: it was
// never seen, or was seen from addr and has not connected yet.
func (h *tokenHistory) check(mac [macSize]byte, addr netip.AddrPort) bool {
	i, ok := h.index[mac]
	return !ok || (h.ring[i].addr == addr && !h.ring[i].spent)
}

// spend marks the token with mac as having connected: a second connection
// with the same keys would restart the server's sequence at zero and so
// repeat AEAD nonces under the same key.
func (h *tokenHistory) spend(mac [macSize]byte) {
	if i, ok := h.index[mac]; ok {
		h.ring[i].spent = true
	}
}

// add records the token's first use, if it is not recorded yet. It reports
// whether it pushed out an entry whose token had not expired at unix, which
// means the cap bit.
func (h *tokenHistory) add(mac [macSize]byte, addr netip.AddrPort, expire, unix uint64) (evictedLive bool) {
	if _, ok := h.index[mac]; ok {
		return false
	}
	old := &h.ring[h.next]
	if old.expire != 0 {
		delete(h.index, old.mac)
		evictedLive = old.expire > unix
	}
	*old = tokenUse{mac: mac, addr: addr, expire: max(expire, 1)}
	h.index[mac] = h.next
	h.next = (h.next + 1) % len(h.ring)
	return evictedLive
}
