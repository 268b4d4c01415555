package transport_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// rough is a link with every effect on, both ways, so determinism tests cover
// every random draw.
var rough = transport.Conditions{
	Up:   transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 15 * time.Millisecond, Loss: 0.1, Duplicate: 0.05, Reorder: 0.1},
	Down: transport.LinkConfig{Latency: 25 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.05, Duplicate: 0.1, Reorder: 0.05},
}

// exchange runs ticks of traffic both ways on a pair: each tick both ends
// send perTick numbered datagrams, the clock advances 1ms, and both ends
// drain. It returns the log of receptions, one line per tick and end, with
// times relative to the start of the exchange.
func exchange(t *testing.T, clock *testClock, client, server transport.Conn, ticks, perTick int) []string {
	t.Helper()
	var log []string
	msg, buf := make([]byte, 4), make([]byte, 64)
	start := clock.Now()
	for tick := range ticks {
		for i := range perTick {
			binary.LittleEndian.PutUint32(msg, uint32(tick*perTick+i))
			require.NoError(t, client.Send(msg))
			require.NoError(t, server.Send(msg))
		}
		clock.Advance(time.Millisecond)
		for _, end := range []struct {
			name string
			c    transport.Conn
		}{{"server", server}, {"client", client}} {
			line := fmt.Sprintf("t=%v %s:", clock.Now()-start, end.name)
			for {
				n, ok := end.c.Receive(buf)
				if !ok {
					break
				}
				line += fmt.Sprintf(" %d", binary.LittleEndian.Uint32(buf[:n]))
			}
			log = append(log, line)
		}
	}
	return log
}

func runRough(t *testing.T, seed uint64) []string {
	clock := &testClock{}
	client, server, err := transport.NewMemoryNetwork(clock, seed).Pair(rough)
	require.NoError(t, err)
	return exchange(t, clock, client, server, 500, 3)
}

func TestSameSeedSameDeliveries(t *testing.T) {
	a, b := runRough(t, 42), runRough(t, 42)
	require.Equal(t, a, b, "tick by tick")
	assert.NotEqual(t, a, runRough(t, 43), "another seed draws differently")
}

func TestLinksDoNotShareDraws(t *testing.T) {
	// Link B is the second link in both networks; only the first has traffic
	// in one of them, and B must not notice.
	linkB := func(trafficOnA bool) []string {
		clock := &testClock{}
		n := transport.NewMemoryNetwork(clock, 99)
		aClient, aServer, err := n.Pair(rough)
		require.NoError(t, err)
		ln, err := n.Listen("b")
		require.NoError(t, err)
		bClient, err := n.Dial("b", rough)
		require.NoError(t, err)
		bServer, ok := ln.Accept()
		require.True(t, ok)
		if trafficOnA {
			exchange(t, clock, aClient, aServer, 100, 5)
		}
		return exchange(t, clock, bClient, bServer, 500, 3)
	}
	assert.Equal(t, linkB(false), linkB(true))

	// And the two links of one network do not draw the same numbers either.
	clock := &testClock{}
	n := transport.NewMemoryNetwork(clock, 99)
	c1, s1, err := n.Pair(rough)
	require.NoError(t, err)
	c2, s2, err := n.Pair(rough)
	require.NoError(t, err)
	assert.NotEqual(t, exchange(t, clock, c1, s1, 200, 3), exchange(t, clock, c2, s2, 200, 3))
}

func TestMaxInFlightDropsAndCounts(t *testing.T) {
	clock := &testClock{}
	n := transport.NewMemoryNetworkWithMaxInFlight(clock, 1, 8)
	client, server, err := n.Pair(transport.Conditions{Up: transport.LinkConfig{Latency: 10 * time.Millisecond}})
	require.NoError(t, err)
	for i := range 12 {
		require.NoError(t, client.Send([]byte{byte(i)}), "overflow is silent, like a full socket buffer")
	}
	st := client.Stats()
	assert.Equal(t, uint64(12), st.Sent)
	assert.Equal(t, uint64(4), st.Dropped)

	clock.Advance(10 * time.Millisecond)
	buf := make([]byte, 4)
	var got []byte
	for {
		n, ok := server.Receive(buf)
		if !ok {
			break
		}
		got = append(got, buf[:n]...)
	}
	assert.Equal(t, []byte{0, 1, 2, 3, 4, 5, 6, 7}, got, "the first MaxInFlight are kept")

	// Receiving freed the queue, so sending works again.
	require.NoError(t, client.Send([]byte{42}))
	assert.Equal(t, uint64(4), client.Stats().Dropped)
}

func TestMaxInFlightCountsDuplicateCopies(t *testing.T) {
	clock := &testClock{}
	n := transport.NewMemoryNetworkWithMaxInFlight(clock, 1, 3)
	client, _, err := n.Pair(transport.Conditions{Up: transport.LinkConfig{Latency: time.Millisecond, Duplicate: 1}})
	require.NoError(t, err)
	require.NoError(t, client.Send([]byte{1})) // original and copy: 2 in flight
	require.NoError(t, client.Send([]byte{2})) // original fits, copy does not
	st := client.Stats()
	assert.Equal(t, uint64(2), st.Duplicated)
	assert.Equal(t, uint64(1), st.Dropped)
}

func TestDefaultMaxInFlight(t *testing.T) {
	clock := &testClock{}
	client, _, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{Up: transport.LinkConfig{Latency: time.Second}})
	require.NoError(t, err)
	for range transport.DefaultMaxInFlight + 1 {
		require.NoError(t, client.Send([]byte{0}))
	}
	assert.Equal(t, uint64(1), client.Stats().Dropped)
}

func TestNilClockPanics(t *testing.T) {
	assert.PanicsWithValue(t, "transport: NewMemoryNetwork with a nil Clock", func() {
		transport.NewMemoryNetwork(nil, 1)
	})
}

func TestListenDialAccept(t *testing.T) {
	n := transport.NewMemoryNetwork(&testClock{}, 1)

	_, err := n.Dial("game", transport.Conditions{})
	require.ErrorIs(t, err, transport.ErrNoListener)
	assert.Equal(t, `transport: no listener at address: "game"`, err.Error())

	_, err = n.Listen("")
	require.ErrorIs(t, err, transport.ErrInvalidAddr)

	ln, err := n.Listen("game")
	require.NoError(t, err)
	_, err = n.Listen("game")
	require.ErrorIs(t, err, transport.ErrAddrInUse)
	assert.Equal(t, `transport: address already in use: "game"`, err.Error())

	_, ok := ln.Accept()
	assert.False(t, ok, "nobody dialled yet")

	clients := make([]transport.Conn, 3)
	for i := range clients {
		clients[i], err = n.Dial("game", transport.Conditions{})
		require.NoError(t, err)
		require.NoError(t, clients[i].Send([]byte{byte(i)}))
	}
	buf := make([]byte, 4)
	for i := range clients {
		server, ok := ln.Accept()
		require.True(t, ok)
		n, ok := server.Receive(buf)
		require.True(t, ok)
		assert.Equal(t, []byte{byte(i)}, buf[:n], "accepted in dial order")
		require.NoError(t, server.Send([]byte{byte(10 + i)}))
		n, ok = clients[i].Receive(buf)
		require.True(t, ok)
		assert.Equal(t, []byte{byte(10 + i)}, buf[:n], "the accepted end talks to its own client")
	}
	_, ok = ln.Accept()
	assert.False(t, ok)
}

func TestListenerClose(t *testing.T) {
	n := transport.NewMemoryNetwork(&testClock{}, 1)
	ln, err := n.Listen("game")
	require.NoError(t, err)
	unaccepted, err := n.Dial("game", transport.Conditions{})
	require.NoError(t, err)

	require.NoError(t, ln.Close())
	require.ErrorIs(t, ln.Close(), transport.ErrClosed)
	_, ok := ln.Accept()
	assert.False(t, ok)
	require.ErrorIs(t, unaccepted.Send([]byte{1}), transport.ErrClosed, "unaccepted connections are closed with the listener")
	_, err = n.Dial("game", transport.Conditions{})
	require.ErrorIs(t, err, transport.ErrNoListener)

	again, err := n.Listen("game")
	require.NoError(t, err, "the address is free again")
	_, err = n.Dial("game", transport.Conditions{})
	require.NoError(t, err)
	_, ok = again.Accept()
	assert.True(t, ok)
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	for name, c := range map[string]transport.Conditions{"zero": {}, "rough": rough} {
		t.Run(name, func(t *testing.T) {
			clock := &testClock{}
			client, server, err := transport.NewMemoryNetwork(clock, 1).Pair(c)
			require.NoError(t, err)
			msg, buf := make([]byte, 100), make([]byte, transport.MaxDatagramSize)
			step := func() {
				_ = client.Send(msg)
				_ = server.Send(msg)
				clock.Advance(time.Millisecond)
				for _, end := range []transport.Conn{client, server} {
					for {
						if _, ok := end.Receive(buf); !ok {
							break
						}
					}
				}
			}
			for range 1000 { // fill the free lists and grow the queues
				step()
			}
			assert.Zero(t, testing.AllocsPerRun(1000, step))
		})
	}
}

// Datagrams that were in flight together come back to the free list
// together, later, without growing it: it has room for every buffer the
// link ever took.
func TestReturningABurstDoesNotAllocate(t *testing.T) {
	clock := &testClock{}
	client, server, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{})
	require.NoError(t, err)
	msg, buf := make([]byte, 100), make([]byte, transport.MaxDatagramSize)
	for range 64 { // a burst: 64 buffers in flight at once
		require.NoError(t, client.Send(msg))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for {
		if _, ok := server.Receive(buf); !ok {
			break
		}
		n++
	}
	runtime.ReadMemStats(&after)
	assert.Equal(t, 64, n)
	assert.Zero(t, after.Mallocs-before.Mallocs)
}

func TestConcurrentUseDoesNotRace(t *testing.T) {
	// The clock never moves, and a perfect link delivers at once, so the
	// goroutines need no shared virtual time; go test -race checks the locking.
	const count = 5000
	client, server, err := transport.NewMemoryNetwork(&testClock{}, 1).Pair(transport.Conditions{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range count {
			_ = client.Send([]byte{byte(i)})
		}
	}()
	var received uint64
	go func() {
		defer wg.Done()
		buf := make([]byte, 4)
		for received+client.Stats().Dropped < count {
			if _, ok := server.Receive(buf); ok {
				received++
			} else {
				runtime.Gosched()
			}
		}
	}()
	wg.Wait()
	assert.Equal(t, uint64(count), client.Stats().Sent)
	assert.Equal(t, received, server.Stats().Received)
	assert.Equal(t, uint64(count), received+client.Stats().Dropped)
}
