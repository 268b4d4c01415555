package systems

import (
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
)

// ConnError is why a server refused or ended a client's connection, or
// why the client ended it, as [Client.Err] returns it.
type ConnError struct {
	// Refused is true when the server refused the connection at its
	// start, false when it ended one.
	Refused bool
	// Local is true when the client ended the connection itself: it
	// heard nothing from the server for its timeout, or it left
	// ([Client.Close]).
	Local  bool
	Reason netsync.RejectReason
	// Detail is the server's explanation, such as the component whose
	// schema differs; "" when the reason says it all.
	Detail string
}

// Error reads like "ghostwire: refused by the server: schema mismatch:
// component game.Position differs", or "ghostwire: disconnected: timeout:
// nothing heard from the server for 5s" when the client ended it.
func (e *ConnError) Error() string {
	msg := "ghostwire: disconnected by the server: "
	switch {
	case e.Refused:
		msg = "ghostwire: refused by the server: "
	case e.Local:
		msg = "ghostwire: disconnected: "
	}
	msg += e.Reason.String()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Err returns nil while the client is connecting or connected, and a
// *[ConnError] saying why once the server refused the connection or ended
// it, or the client timed out. The first refusal or disconnect is kept: later ones change nothing.
func (c *Client) Err() error {
	if c.end == nil {
		return nil
	}
	return c.end
}

// finish ends the connection on a reject or disconnect packet (t) from
// the server.
func (c *Client) finish(t protocol.MsgType, m *protocol.Reject) {
	if c.end != nil {
		return
	}
	c.end = &ConnError{Refused: t == protocol.MsgReject, Reason: netsync.RejectReason(m.Reason), Detail: m.Detail}
	c.stats.Reason = c.end.Reason
	if c.end.Refused {
		c.state = stateRefused
		c.log.Warn("ghostwire: connection refused", "reason", m.Reason.String(), "detail", m.Detail)
		return
	}
	c.state = stateDisconnected
	c.log.Info("ghostwire: disconnected", "reason", m.Reason.String(), "detail", m.Detail)
}
