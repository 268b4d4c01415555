package web

import (
	"fmt"
	"slices"
)

// MaxSessions bounds the pages whose link settings the server remembers;
// the least recently used one is forgotten to make room (counted in
// Stats.SessionsEvicted).
const MaxSessions = 256

// session is one page: its link settings and its open connections (a page
// reconnects when it changes the interpolation delay).
type session struct {
	id    string
	link  Link
	conns []*linkConn
}

// sessions holds the pages' settings, most recently used last. The
// Server's mu guards it.
type sessions struct {
	list    []*session
	evicted uint64
}

// validSession reports an error unless id is 1..64 letters, digits or
// dashes.
func validSession(id string) error {
	if len(id) == 0 || len(id) > 64 {
		return fmt.Errorf("session %q: want 1..64 letters, digits or dashes", id)
	}
	for _, r := range id {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("session %q: want 1..64 letters, digits or dashes", id)
		}
	}
	return nil
}

// get returns the session id, created with a perfect link if new, and
// marks it most recently used.
func (ss *sessions) get(id string) *session {
	i := slices.IndexFunc(ss.list, func(s *session) bool { return s.id == id })
	var s *session
	if i >= 0 {
		s = ss.list[i]
		ss.list = slices.Delete(ss.list, i, i+1)
	} else {
		s = &session{id: id}
		if len(ss.list) == MaxSessions {
			ss.list = slices.Delete(ss.list, 0, 1)
			ss.evicted++
		}
	}
	ss.list = append(ss.list, s)
	return s
}

// link returns the link of session id, the perfect one for a session the
// server does not know (never seen, or forgotten), without remembering it.
func (ss *sessions) link(id string) Link {
	for _, s := range ss.list {
		if s.id == id {
			return s.link
		}
	}
	return Link{}
}

// add records a new connection of s, forgetting the closed ones.
func (s *session) add(c *linkConn) {
	s.conns = slices.DeleteFunc(s.conns, (*linkConn).isClosed)
	s.conns = append(s.conns, c)
}

// setLink changes the link of s and of its open connections.
func (s *session) setLink(l Link) {
	s.link = l
	for _, c := range s.conns {
		c.SetLink(l)
	}
}
