package harness

import "github.com/ghostwire/ghostwire/transport"

// identityListener is the server's listener in a harness: the memory
// network's, whose connections dialled by AddClient carry the identity
// of their ClientSpec, as a udp connection carries its token's claims.
// Connections dialled otherwise (a test's raw connection) carry none.
type identityListener struct {
	transport.Listener
	// queue holds connections taken from the network's listener and not
	// yet accepted, in dial order.
	queue []transport.Conn
}

// identityConn is the server's end of a client's link, with its identity.
type identityConn struct {
	transport.Conn
	identity string
}

// tag marks the connection just dialled (the newest the network's
// listener holds) with identity: the ones dialled before it wait in the
// queue untagged, so the server still accepts them in dial order.
func (l *identityListener) tag(identity string) {
	for {
		c, ok := l.Listener.Accept()
		if !ok {
			break
		}
		l.queue = append(l.queue, c)
	}
	if n := len(l.queue); n > 0 {
		l.queue[n-1] = &identityConn{Conn: l.queue[n-1], identity: identity}
	}
}

// Accept returns the oldest connection dialled and not accepted yet.
func (l *identityListener) Accept() (transport.Conn, bool) {
	if len(l.queue) == 0 {
		return l.Listener.Accept()
	}
	c := l.queue[0]
	l.queue[0] = nil
	l.queue = l.queue[1:]
	return c, true
}

// Identity returns the identity of the ClientSpec that dialled c (the
// harness server's ServerOptions.Identity when the test sets none), for
// the server's hooks that read who a connection is
// (ServerOptions.Spectator); ok is false for a connection without one.
func Identity(c transport.Conn) (identity string, ok bool) { return identityOf(c) }

// identityOf is Identity.
func identityOf(c transport.Conn) (string, bool) {
	ic, ok := c.(*identityConn)
	if !ok || ic.identity == "" {
		return "", false
	}
	return ic.identity, true
}

// Close closes the listener and the connections it never handed out, as
// the network's listener does with those it holds.
func (l *identityListener) Close() error {
	for _, c := range l.queue {
		_ = c.Close()
	}
	l.queue = nil
	return l.Listener.Close()
}
