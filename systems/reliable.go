package systems

import (
	"strconv"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/endpoint"
)

// The reliable channel and the packet layer's estimates are not public
// yet: ghostwire's own layers reach them through package endpoint (hit
// confirmations will travel on the reliable channel, delta snapshots
// build on the acked tick).
func init() {
	endpoint.ServerLink = func(s any, conn components.ConnID) (endpoint.Link, bool) {
		return s.(*Server).linkOf(conn)
	}
	endpoint.ServerSendReliable = func(s any, conn components.ConnID, msg []byte) error {
		return s.(*Server).sendReliable(conn, msg)
	}
	endpoint.ClientOnReliable = func(c any, f func(msg []byte)) { c.(*Client).onReliable = f }
}

// conn returns the open connection with the ID, or nil.
func (s *Server) conn(id components.ConnID) *serverConn {
	for _, c := range s.conns {
		if c.id == id {
			return c
		}
	}
	return nil
}

// linkOf returns what the packet layer of an open connection knows.
func (s *Server) linkOf(id components.ConnID) (endpoint.Link, bool) {
	sc := s.conn(id)
	if sc == nil {
		return endpoint.Link{}, false
	}
	l := sc.link
	return endpoint.Link{RTT: l.pc.RTT(), Loss: l.pc.Loss(), Acked: l.acked, HasAcked: l.hasAcked, Stats: l.pc.Stats()}, true
}

// sendReliable queues msg on the reliable channel of an open connection;
// it goes out with the next flush and again until acknowledged.
func (s *Server) sendReliable(id components.ConnID, msg []byte) error {
	sc := s.conn(id)
	if sc == nil {
		return &connNotOpen{id: id}
	}
	return sc.link.pc.SendReliable(msg)
}

// connNotOpen names a connection ID that is not open.
type connNotOpen struct{ id components.ConnID }

func (e *connNotOpen) Error() string {
	return "systems: no open connection " + strconv.FormatUint(uint64(e.id), 10)
}
