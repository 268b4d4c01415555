package udp

// spentTokens remembers every connect token that completed a connection,
// by its MAC, until the token expires: a second connection with the same
// keys would restart the server's packet sequence at zero and repeat AEAD
// nonces under the same key, so a spent token must stay refused for its
// whole lifetime however many connections follow. Its size is capped:
// when it is full of unexpired tokens, new handshakes are refused
// (Stats.SpentTokensFull), never an entry forgotten early.
type spentTokens struct {
	expire map[[macSize]byte]uint64 // unix seconds
	limit  int
	// soonest is the earliest expiry recorded: a full record sweeps only
	// once it has passed, so a record full of live tokens refuses in O(1).
	soonest uint64
}

func newSpentTokens(limit int) *spentTokens {
	return &spentTokens{expire: make(map[[macSize]byte]uint64), limit: limit}
}

// has reports whether the token with mac connected before.
func (s *spentTokens) has(mac [macSize]byte) bool {
	_, ok := s.expire[mac]
	return ok
}

// room reports whether one more token can be recorded at unix. A full
// record forgets its expired tokens first, in one O(n) sweep once the
// soonest expiry has passed; until then it refuses in O(1).
func (s *spentTokens) room(unix uint64) bool {
	if len(s.expire) < s.limit {
		return true
	}
	if s.soonest > unix {
		return false
	}
	s.soonest = 0
	for mac, exp := range s.expire {
		switch {
		case exp <= unix:
			delete(s.expire, mac)
		case s.soonest == 0 || exp < s.soonest:
			s.soonest = exp
		}
	}
	return len(s.expire) < s.limit
}

// add records the token with mac, expiring at unix second expire. The
// caller checked room.
func (s *spentTokens) add(mac [macSize]byte, expire uint64) {
	s.expire[mac] = expire
	if s.soonest == 0 || expire < s.soonest {
		s.soonest = expire
	}
}
