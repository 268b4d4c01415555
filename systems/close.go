package systems

import (
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
)

// Close ends every connection: each client, and each connection still
// waiting for its hello, is told the server is closing (a disconnect with
// the reason closed, so clients end at once instead of waiting for their
// timeout), its players go through OnDisconnect, and its transport
// connection is closed. Later Update calls do nothing. The listener stays
// the caller's to close. Close is idempotent.
func (s *Server) Close() {
	if s.closing {
		return
	}
	s.closing = true
	s.tx = protocol.AppendReject(s.tx[:0], protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectClosed})
	for _, pc := range s.pending {
		s.sendTo(pc.conn, nil, s.tx)
		_ = pc.conn.Close()
	}
	clear(s.pending)
	s.pending = s.pending[:0]
	for len(s.conns) > 0 {
		sc := s.conns[0]
		s.sendTo(sc.conn, sc, s.tx)
		s.drop(sc, protocol.RejectClosed)
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
	c.tx = protocol.AppendReject(c.tx[:0], protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectClosed})
	_ = c.conn.Send(c.tx)
	_ = c.conn.Close()
	c.end = &ConnError{Local: true, Reason: netsync.RejectClosed, Detail: "the client left"}
	c.state, c.stats.Reason = stateDisconnected, c.end.Reason
	c.log.Info("ghostwire: disconnected", "reason", c.end.Reason.String(), "detail", c.end.Detail)
}
