package udp

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// A polled Listener and a polled Client have no goroutines: nothing
// connects until the listener is polled, the client connects while
// WaitConnected polls it, payloads arrive in Poll and leave batched at
// Flush, and a round of polling, sending and receiving allocates nothing.
func TestPolledListenerAndClient(t *testing.T) {
	l := listen(t, func(o *Options) { o.Polled, o.SendBatch = true, 16 })
	c, err := Dial(tokenFor(t, 1, l.Addr()), ClientOptions{BindAddress: "127.0.0.1:0", Polled: true})
	require.NoError(t, err)
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err = c.WaitConnected(ctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "an unpolled listener answers nothing")
	assert.Equal(t, StateConnecting, c.State())

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the server's loop
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				l.Poll()
			}
		}
	}()
	waitConnected(t, c)
	close(stop)
	wg.Wait()
	sc := acceptN(t, l, 1)[0]

	const n = 20
	buf := make([]byte, transport.MaxDatagramSize)
	up, down := 0, 0
	before := l.Stats()
	for i := range n {
		require.NoError(t, sc.Send([]byte{byte(i)}))
		require.NoError(t, c.Send([]byte{byte(i), 1}))
	}
	l.Flush()
	require.Eventually(t, func() bool {
		l.Poll()
		c.Poll()
		for k, ok := sc.Receive(buf); ok; k, ok = sc.Receive(buf) {
			require.Equal(t, []byte{byte(up), 1}, buf[:k])
			up++
		}
		for k, ok := c.Receive(buf); ok; k, ok = c.Receive(buf) {
			require.Equal(t, []byte{byte(down)}, buf[:k])
			down++
		}
		return up == n && down == n
	}, deadline, poll)
	after := l.Stats()
	written, writes := after.Written-before.Written, after.Writes-before.Writes
	t.Logf("%d datagrams in %d writes", written, writes)
	assert.GreaterOrEqual(t, written, uint64(n))
	if sendmmsg {
		assert.Less(t, writes, written, "batched")
	}

	allocs := testing.AllocsPerRun(100, func() {
		_ = sc.Send(buf[:100])
		l.Flush()
		c.Poll()
		c.Receive(buf)
		_ = c.Send(buf[:100])
		l.Poll()
		sc.Receive(buf)
	})
	if !raceDetector {
		assert.Zero(t, allocs)
	}
}

// Poll on a Listener or Client without Polled is harmless: their
// goroutines read.
func TestPollWithoutPolledDoesNothing(t *testing.T) {
	l := listen(t, nil)
	c := dial(t, tokenFor(t, 1, l.Addr()))
	waitConnected(t, c)
	sc := acceptN(t, l, 1)[0]
	l.Poll()
	c.Poll()
	buf := make([]byte, 16)
	require.NoError(t, sc.Send([]byte{7}))
	require.Eventually(t, func() bool {
		n, ok := c.Receive(buf)
		return ok && n == 1 && buf[0] == 7
	}, deadline, poll, "the client's goroutine read it")
}

// A flood cannot hold a Poll: it reads at most its limit of batches,
// counts the stop, and the next Poll reads the rest.
func TestPollStopsAtItsLimit(t *testing.T) {
	if !pollable {
		t.Skip("this platform reads on a goroutine")
	}
	l := listen(t, func(o *Options) { o.Polled = true })
	l.maxPollBatches = 1
	send, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(l.Addr()))
	require.NoError(t, err)
	defer send.Close()
	for range readBatch + 8 {
		_, err := send.Write([]byte{0xff, 1, 2})
		require.NoError(t, err)
	}
	l.Poll()
	assert.Equal(t, uint64(1), l.Stats().PollCapped, "one full batch, then the limit")
	l.Poll()
	st := l.Stats()
	assert.Equal(t, uint64(1), st.PollCapped, "the rest fit")
	assert.Equal(t, uint64(readBatch+8), st.Malformed+st.UnknownClient+st.RateLimited, "every datagram read and counted")
}
