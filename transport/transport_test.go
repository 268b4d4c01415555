package transport_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// testClock is the virtual clock of every test: time moves only when the test
// says so, so nothing sleeps and every run is the same.
type testClock struct{ now time.Duration }

func (c *testClock) Now() time.Duration { return c.now }

func (c *testClock) Advance(d time.Duration) { c.now += d }

var _ transport.Clock = (*testClock)(nil)

// connMaker builds a connected client/server pair; the Conn contract tests
// run against every way of making one.
type connMaker struct {
	name string
	make func(t *testing.T, n *transport.MemoryNetwork, c transport.Conditions) (client, server transport.Conn)
}

var connMakers = []connMaker{
	{"Pair", func(t *testing.T, n *transport.MemoryNetwork, c transport.Conditions) (transport.Conn, transport.Conn) {
		client, server, err := n.Pair(c)
		require.NoError(t, err)
		return client, server
	}},
	{"Dial", func(t *testing.T, n *transport.MemoryNetwork, c transport.Conditions) (transport.Conn, transport.Conn) {
		ln, err := n.Listen("server")
		require.NoError(t, err)
		client, err := n.Dial("server", c)
		require.NoError(t, err)
		server, ok := ln.Accept()
		require.True(t, ok)
		return client, server
	}},
}

func forEachConnMaker(t *testing.T, test func(t *testing.T, clock *testClock, client, server transport.Conn)) {
	for _, m := range connMakers {
		t.Run(m.name, func(t *testing.T) {
			clock := &testClock{}
			client, server := m.make(t, transport.NewMemoryNetwork(clock, 1), transport.Conditions{})
			test(t, clock, client, server)
		})
	}
}

func TestConnSendRefusesBadSizes(t *testing.T) {
	forEachConnMaker(t, func(t *testing.T, _ *testClock, client, server transport.Conn) {
		err := client.Send(make([]byte, 1500))
		require.ErrorIs(t, err, transport.ErrDatagramSize)
		assert.Equal(t, "transport: datagram of 1500 bytes exceeds MaxDatagramSize 1200", err.Error())

		err = client.Send(make([]byte, transport.MaxDatagramSize+1))
		require.ErrorIs(t, err, transport.ErrDatagramSize)
		assert.Contains(t, err.Error(), "1201 bytes")

		err = server.Send(nil)
		require.ErrorIs(t, err, transport.ErrDatagramSize)
		assert.Equal(t, "transport: empty datagram (0 bytes); a datagram must be 1 to 1200 bytes", err.Error())

		require.NoError(t, client.Send(make([]byte, transport.MaxDatagramSize)), "exactly MaxDatagramSize is allowed")
		assert.Equal(t, uint64(1), client.Stats().Sent, "refused datagrams are not counted as sent")
		assert.Equal(t, uint64(0), server.Stats().Sent)
	})
}

func TestConnSendCopiesTheBytes(t *testing.T) {
	forEachConnMaker(t, func(t *testing.T, _ *testClock, client, server transport.Conn) {
		p := []byte("hello")
		require.NoError(t, client.Send(p))
		copy(p, "XXXXX")
		buf := make([]byte, 16)
		n, ok := server.Receive(buf)
		require.True(t, ok)
		assert.Equal(t, "hello", string(buf[:n]))
	})
}

func TestConnReceiveDropsWhatDoesNotFit(t *testing.T) {
	forEachConnMaker(t, func(t *testing.T, _ *testClock, client, server transport.Conn) {
		require.NoError(t, client.Send([]byte("too long")))
		require.NoError(t, client.Send([]byte("fits")))
		buf := []byte("????????")[:4]
		n, ok := server.Receive(buf)
		require.True(t, ok, "the datagram after a truncated one is still delivered")
		assert.Equal(t, "fits", string(buf[:n]))
		assert.Equal(t, "fits????", string(buf[:8]), "nothing beyond n was written")

		require.NoError(t, client.Send([]byte("too long")))
		n, ok = server.Receive(buf)
		assert.False(t, ok)
		assert.Zero(t, n)
		assert.Equal(t, "fits", string(buf), "a truncated datagram is never half-delivered")

		st := server.Stats()
		assert.Equal(t, uint64(2), st.Truncated)
		assert.Equal(t, uint64(1), st.Received)
		assert.Equal(t, uint64(4), st.ReceivedBytes)
	})
}

func TestConnCloseStopsSendsAndLetsThePeerDrain(t *testing.T) {
	forEachConnMaker(t, func(t *testing.T, _ *testClock, client, server transport.Conn) {
		for i := range 3 {
			require.NoError(t, client.Send([]byte{byte(i)}))
		}
		require.NoError(t, server.Send([]byte("never read")))
		require.NoError(t, client.Close())

		require.ErrorIs(t, client.Send([]byte("x")), transport.ErrClosed)
		require.ErrorIs(t, server.Send([]byte("x")), transport.ErrClosed)
		_, ok := client.Receive(make([]byte, 16))
		assert.False(t, ok, "a closed end receives nothing")

		buf := make([]byte, 16)
		var got []byte
		for {
			n, ok := server.Receive(buf)
			if !ok {
				break
			}
			require.Equal(t, 1, n)
			got = append(got, buf[0])
		}
		assert.Equal(t, []byte{0, 1, 2}, got, "the peer drains what was in flight")

		require.ErrorIs(t, client.Close(), transport.ErrClosed, "second Close")
		require.NoError(t, server.Close(), "first Close of the other end")
		require.ErrorIs(t, server.Close(), transport.ErrClosed)
		assert.Equal(t, uint64(3), server.Stats().Received, "stats survive Close")
	})
}

func TestStatsCountBytesBothWays(t *testing.T) {
	forEachConnMaker(t, func(t *testing.T, _ *testClock, client, server transport.Conn) {
		require.NoError(t, client.Send([]byte("abc")))
		require.NoError(t, client.Send([]byte("de")))
		require.NoError(t, server.Send([]byte("f")))
		buf := make([]byte, 16)
		for _, c := range []transport.Conn{client, server} {
			for {
				if _, ok := c.Receive(buf); !ok {
					break
				}
			}
		}
		assert.Equal(t, transport.Stats{Sent: 2, SentBytes: 5, Received: 1, ReceivedBytes: 1}, client.Stats())
		assert.Equal(t, transport.Stats{Sent: 1, SentBytes: 1, Received: 2, ReceivedBytes: 5}, server.Stats())
	})
}
