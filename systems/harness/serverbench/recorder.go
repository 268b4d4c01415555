package serverbench

import (
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// Recorder keeps every datagram the clients of a harness run send, in the
// order they were sent.
type Recorder struct {
	// Now is the run's virtual time; it must be set before the first
	// client sends.
	Now   func() time.Duration
	links []transport.Conditions // per link, in dial order
	dials []time.Duration        // when each link was dialled (0 before Now is set)
	sends []sent
	data  []byte
}

type sent struct {
	at        time.Duration
	link      int
	off, size int
}

// Wrap returns a harness.ClientSpec.Wrap for a client whose link has
// conditions c. The links are numbered in the order the returned
// functions are called, which is the order the harness dials them, and
// each is dialled again by a Twin at the time it was called (a client
// added to a running harness, Harness.AddClient, joins the twin as late).
func (r *Recorder) Wrap(c transport.Conditions) func(transport.Conn) transport.Conn {
	return func(conn transport.Conn) transport.Conn {
		at := time.Duration(0)
		if r.Now != nil {
			at = r.Now()
		}
		r.links, r.dials = append(r.links, c), append(r.dials, at)
		return &recordedConn{Conn: conn, r: r, link: len(r.links) - 1}
	}
}

// Sends returns how many datagrams were recorded.
func (r *Recorder) Sends() int { return len(r.sends) }

// recordedConn is a client's end of its link, recording what it sends.
type recordedConn struct {
	transport.Conn
	r    *Recorder
	link int
}

func (c *recordedConn) Send(p []byte) error {
	r := c.r
	r.sends = append(r.sends, sent{at: r.Now(), link: c.link, off: len(r.data), size: len(p)})
	r.data = append(r.data, p...)
	return c.Conn.Send(p)
}
