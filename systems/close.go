package systems

import (
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
)

// Close ends every connection: each client, and each connection still
// waiting for its hello, is told the server is closing (a disconnect with
// the reason closed, so clients end at once instead of waiting for their
// timeout), its players go through OnDisconnect, and its transport
// connection is closed; the players of held places
// (ServerOptions.ReconnectGrace) go through OnDisconnect too, and
// ServerOptions.Spectators are closed. Later
// Update calls do nothing. The listener stays the caller's to close.
// Close is idempotent.
func (s *Server) Close() {
	if s.closing {
		return
	}
	s.closing = true
	bye := &protocol.Reject{Reason: protocol.RejectClosed}
	for _, pc := range s.pending {
		l := pc.say(s.src)
		s.tx = l.goodbye(s.tx, protocol.MsgDisconnect, bye)
		s.retire(l)
	}
	clear(s.pending)
	s.pending = s.pending[:0]
	for len(s.conns) > 0 {
		sc := s.conns[0]
		s.tx = sc.link.goodbye(s.tx, protocol.MsgDisconnect, bye)
		s.drop(sc, protocol.RejectClosed)
	}
	for len(s.held) > 0 {
		s.release(s.unhold(0))
	}
	if sp := s.opts.Spectators; sp != nil {
		sp.Close()
	}
}

// Close leaves the server: it is told at once (a disconnect with the
// reason closed; the server ends the connection and removes the players
// as for a timeout), the transport connection is closed, and the client
// ends disconnected with [Client.Err] saying it left. Later Update calls
// do nothing. Close is idempotent.
func (c *Client) Close() {
	if c.end != nil {
		return
	}
	c.tx = c.link.goodbye(c.tx, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectClosed})
	_ = c.link.pc.Close()
	c.end = &ConnError{Local: true, Reason: netsync.RejectClosed, Detail: "the client left"}
	c.state, c.stats.Reason = stateDisconnected, c.end.Reason
	c.log.Info("ghostwire: disconnected", "reason", c.end.Reason.String(), "detail", c.end.Detail)
}
