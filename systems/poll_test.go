package systems_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
)

// pollingListener is a Listener that counts its Polls and Flushes, and
// the Accepts that came between a Poll and the Flush after it and those
// that did not.
type pollingListener struct {
	transport.Listener
	polls, flushes, acceptsBetween, acceptsOutside int
	open                                           bool
}

func (l *pollingListener) Poll()  { l.polls++; l.open = true }
func (l *pollingListener) Flush() { l.flushes++; l.open = false }
func (l *pollingListener) Accept() (transport.Conn, bool) {
	if l.open {
		l.acceptsBetween++
	} else {
		l.acceptsOutside++
	}
	return l.Listener.Accept()
}

// pollingConn is a Conn that counts its Polls.
type pollingConn struct {
	transport.Conn
	polls int
}

func (c *pollingConn) Poll() { c.polls++ }

// A server polls a transport.Poller listener at the start of every Update
// and flushes a transport.Flusher at its end, with its reading in between;
// a client polls a transport.Poller connection every Update.
func TestUpdatePollsAndFlushesTheTransport(t *testing.T) {
	g := newTestGame()
	clock := &gw.VirtualTime{}
	net := transport.NewMemoryNetwork(clock, 1)
	inner, err := net.Listen("s")
	require.NoError(t, err)
	l := &pollingListener{Listener: inner}
	srv, err := systems.NewServer(clock, l, g.game(), systems.ServerOptions{})
	require.NoError(t, err)
	dialed, err := net.Dial("s", transport.Conditions{})
	require.NoError(t, err)
	conn := &pollingConn{Conn: dialed}
	cl, err := systems.NewClient(clock, conn, g.game(), systems.ClientOptions{})
	require.NoError(t, err)
	const updates = 120
	for range updates {
		clock.Advance(time.Second / 60)
		srv.Update()
		cl.Update()
	}
	assert.True(t, cl.Connected(), "the client connected through the counting transport")
	assert.Equal(t, updates, l.polls)
	assert.Equal(t, updates, l.flushes)
	assert.Equal(t, updates, conn.polls)
	assert.Positive(t, l.acceptsBetween, "the server accepts after its poll, before its flush")
	assert.Zero(t, l.acceptsOutside, "and never outside")
}
