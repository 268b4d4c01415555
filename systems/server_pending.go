package systems

import (
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// pendingConn is an accepted connection still waiting for its hello. Its
// packet layer (about 16 KB) is made when its first datagram arrives, so a
// flood of silent connections costs a transport connection each.
type pendingConn struct {
	raw  transport.Conn
	link *link         // nil until the first datagram
	at   time.Duration // when it was accepted
}

// open returns the connection's packet layer, made around its first
// datagram (read into rx) when none exists yet, or nil when nothing has
// arrived.
func (pc *pendingConn) open(clock transport.Clock, rx []byte, o linkOptions) *link {
	if pc.link == nil {
		n, ok := pc.raw.Receive(rx)
		if !ok {
			return nil
		}
		pc.link = newLink(&primed{Conn: pc.raw, first: append([]byte(nil), rx[:n]...)}, clock, o)
	}
	return pc.link
}

// say returns the connection's packet layer, made now if none exists, to
// say goodbye through.
func (pc *pendingConn) say(clock transport.Clock) *link {
	if pc.link == nil {
		pc.link = newLink(pc.raw, clock, linkOptions{})
	}
	return pc.link
}

// primed is a transport connection whose first datagram was read before
// its packet layer existed: Receive hands that one out first.
type primed struct {
	transport.Conn
	first []byte
}

func (p *primed) Receive(buf []byte) (int, bool) {
	if p.first == nil {
		return p.Conn.Receive(buf)
	}
	d := p.first
	p.first = nil
	if len(d) > len(buf) { // as a transport.Conn drops a datagram too long for buf
		return p.Conn.Receive(buf)
	}
	return copy(buf, d), true
}
