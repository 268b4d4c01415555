package web

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/transport"
)

// conditioned returns a perfect in-memory pair whose server end is
// conditioned by l, on a virtual clock.
func conditioned(t *testing.T, l Link) (client transport.Conn, server *linkConn, clock *gw.VirtualTime) {
	t.Helper()
	clock = &gw.VirtualTime{}
	net := transport.NewMemoryNetwork(clock, 1)
	client, inner, err := net.Pair(transport.Conditions{})
	require.NoError(t, err)
	return client, newLinkConn(inner, clock, 7, l, false), clock
}

func TestLinkDelaysBothWays(t *testing.T) {
	client, server, clock := conditioned(t, Link{RTTms: 100})
	buf := make([]byte, transport.MaxDatagramSize)

	require.NoError(t, server.Send([]byte("down")))
	_, ok := client.Receive(buf)
	assert.False(t, ok, "held for half the RTT")
	clock.Advance(49 * time.Millisecond)
	server.Receive(buf) // the game loop's poll flushes what is due
	_, ok = client.Receive(buf)
	assert.False(t, ok)
	clock.Advance(time.Millisecond)
	server.Receive(buf)
	n, ok := client.Receive(buf)
	require.True(t, ok)
	assert.Equal(t, "down", string(buf[:n]))

	require.NoError(t, client.Send([]byte("up")))
	_, ok = server.Receive(buf)
	assert.False(t, ok)
	clock.Advance(50 * time.Millisecond)
	n, ok = server.Receive(buf)
	require.True(t, ok)
	assert.Equal(t, "up", string(buf[:n]))
}

func TestLinkSetLinkAppliesToLaterDatagrams(t *testing.T) {
	client, server, clock := conditioned(t, Link{})
	buf := make([]byte, transport.MaxDatagramSize)
	require.NoError(t, server.Send([]byte{1}))
	_, ok := client.Receive(buf)
	assert.True(t, ok, "a perfect link delivers at once")

	server.SetLink(Link{RTTms: 400})
	require.NoError(t, server.Send([]byte{2}))
	clock.Advance(199 * time.Millisecond)
	server.Receive(buf)
	_, ok = client.Receive(buf)
	assert.False(t, ok)
	clock.Advance(time.Millisecond)
	server.Receive(buf)
	_, ok = client.Receive(buf)
	assert.True(t, ok)
}

func TestLinkLossAndDuplicationAreSeeded(t *testing.T) {
	count := func() (received int, st transport.Stats) {
		client, server, _ := conditioned(t, Link{LossPct: 20, DupPct: 10})
		buf := make([]byte, transport.MaxDatagramSize)
		for range 1000 {
			require.NoError(t, server.Send([]byte{1}))
			for {
				if _, ok := client.Receive(buf); !ok {
					break
				}
				received++
			}
		}
		return received, server.Stats()
	}
	got, st := count()
	again, _ := count()
	assert.Equal(t, got, again, "the same seed loses and copies the same datagrams")
	assert.InDelta(t, 200, st.Lost, 50)
	assert.InDelta(t, 80, st.Duplicated, 30)
	assert.Equal(t, 1000-int(st.Lost)+int(st.Duplicated), got)
	assert.Equal(t, uint64(1000), st.Sent)
}

func TestLinkJitterNeverReorders(t *testing.T) {
	client, server, clock := conditioned(t, Link{RTTms: 100, JitterMS: 40})
	buf := make([]byte, transport.MaxDatagramSize)
	var got []byte
	for i := range 200 {
		require.NoError(t, server.Send([]byte{byte(i)}))
		clock.Advance(time.Millisecond)
		for {
			n, ok := client.Receive(buf)
			if !ok {
				break
			}
			got = append(got, buf[:n]...)
		}
	}
	clock.Advance(time.Second)
	server.Receive(buf)
	for {
		n, ok := client.Receive(buf)
		if !ok {
			break
		}
		got = append(got, buf[:n]...)
	}
	require.Len(t, got, 200)
	for i, b := range got {
		assert.Equal(t, byte(i), b)
	}
}

func TestLinkQueueCapDrops(t *testing.T) {
	client, server, clock := conditioned(t, Link{RTTms: 2000})
	for range maxQueued + 10 {
		require.NoError(t, server.Send([]byte{1}))
	}
	assert.Equal(t, uint64(10), server.Stats().Dropped)
	for range maxQueued + 10 {
		require.NoError(t, client.Send([]byte{2}))
	}
	buf := make([]byte, transport.MaxDatagramSize)
	_, ok := server.Receive(buf)
	assert.False(t, ok)
	assert.Equal(t, uint64(20), server.Stats().Dropped)
	clock.Advance(time.Second)
	received := 0
	for {
		if _, ok := server.Receive(buf); !ok {
			break
		}
		received++
	}
	assert.Equal(t, maxQueued, received)
}

func TestLinkTruncatesShortBuffers(t *testing.T) {
	client, server, _ := conditioned(t, Link{})
	require.NoError(t, client.Send([]byte("long datagram")))
	_, ok := server.Receive(make([]byte, 4))
	assert.False(t, ok)
	assert.Equal(t, uint64(1), server.Stats().Truncated)
}

func TestLinkRefusesBadSizesAndClosed(t *testing.T) {
	_, server, _ := conditioned(t, Link{})
	assert.ErrorIs(t, server.Send(nil), transport.ErrDatagramSize)
	assert.ErrorIs(t, server.Send(make([]byte, transport.MaxDatagramSize+1)), transport.ErrDatagramSize)
	require.NoError(t, server.Close())
	assert.ErrorIs(t, server.Send([]byte{1}), transport.ErrClosed)
	assert.ErrorIs(t, server.Close(), transport.ErrClosed)
	assert.True(t, server.isClosed())
}

func TestLinkFindsClosedPeer(t *testing.T) {
	client, server, _ := conditioned(t, Link{})
	require.NoError(t, client.Close())
	require.NoError(t, server.Send([]byte{1}), "the first send finds the socket closed")
	assert.ErrorIs(t, server.Send([]byte{1}), transport.ErrClosed)
}

func TestLinkSteadyStateAllocatesNothing(t *testing.T) {
	client, server, clock := conditioned(t, Link{RTTms: 50, JitterMS: 5, LossPct: 1, DupPct: 1})
	buf := make([]byte, transport.MaxDatagramSize)
	p := make([]byte, 200)
	step := func() {
		_ = server.Send(p)
		_ = client.Send(p)
		clock.Advance(16 * time.Millisecond)
		for {
			if _, ok := server.Receive(buf); !ok {
				break
			}
		}
		for {
			if _, ok := client.Receive(buf); !ok {
				break
			}
		}
	}
	for range 200 {
		step()
	}
	assert.Zero(t, testing.AllocsPerRun(200, step))
}

func TestLinkValidate(t *testing.T) {
	assert.NoError(t, Link{RTTms: 200, JitterMS: 30, LossPct: 10, DupPct: 5}.Validate())
	for _, c := range []struct {
		l    Link
		want string
	}{
		{Link{RTTms: -1}, "link RTTms -1: allowed range is 0..2000"},
		{Link{JitterMS: 501}, "link JitterMS 501: allowed range is 0..500"},
		{Link{LossPct: 51}, "link LossPct 51: allowed range is 0..50"},
		{Link{DupPct: -0.5}, "link DupPct -0.5: allowed range is 0..50"},
	} {
		assert.EqualError(t, c.l.Validate(), c.want)
	}
}

// TestStreamLinkRetransmitsBehindTheLoss: on a WebSocket's link a lost
// datagram is not lost but arrives a retransmission timeout late, and
// those sent after it wait behind it (TCP's head-of-line blocking).
func TestStreamLinkRetransmitsBehindTheLoss(t *testing.T) {
	clock := &gw.VirtualTime{}
	net := transport.NewMemoryNetwork(clock, 1)
	client, inner, err := net.Pair(transport.Conditions{})
	require.NoError(t, err)
	server := newLinkConn(inner, clock, 7, Link{RTTms: 100, LossPct: 50}, true)
	buf := make([]byte, transport.MaxDatagramSize)
	const sent = 20
	for i := range sent {
		require.NoError(t, server.Send([]byte{byte(i)}))
		clock.Advance(time.Millisecond)
	}
	require.Positive(t, server.Stats().Lost, "half of them hit the loss")
	var got []byte
	var firstAt time.Duration
	for step := 0; step < 400 && len(got) < sent; step++ {
		server.Receive(buf)
		for {
			n, ok := client.Receive(buf)
			if !ok {
				break
			}
			if len(got) == 0 {
				firstAt = clock.Now()
			}
			got = append(got, buf[:n]...)
		}
		clock.Advance(time.Millisecond)
	}
	want := make([]byte, sent)
	for i := range want {
		want[i] = byte(i)
	}
	assert.Equal(t, want, got, "every datagram, in order")
	assert.GreaterOrEqual(t, firstAt, minRTO, "the first datagram lost held back all behind it")
}
