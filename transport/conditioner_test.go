package transport_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

func TestLinkConfigValidate(t *testing.T) {
	valid := []transport.LinkConfig{
		{},
		{Latency: 50 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Duplicate: 0.1, Reorder: 0.1},
		{Latency: transport.MaxLinkDelay, Jitter: transport.MaxLinkDelay, Loss: 1, Duplicate: 1, Reorder: 1},
		{Jitter: time.Second}, // jitter larger than latency is clamped at send time, not refused
	}
	for _, c := range valid {
		assert.NoError(t, transport.ValidateLink(c), "%+v", c)
	}

	invalid := []struct {
		cfg  transport.LinkConfig
		want string
	}{
		{transport.LinkConfig{Latency: -time.Millisecond}, "transport: invalid LinkConfig.Latency = -1ms, want a value in [0s, 1h0m0s]"},
		{transport.LinkConfig{Jitter: -1}, "transport: invalid LinkConfig.Jitter = -1ns, want a value in [0s, 1h0m0s]"},
		{transport.LinkConfig{Latency: 2 * time.Hour}, "transport: invalid LinkConfig.Latency = 2h0m0s, want a value in [0s, 1h0m0s]"},
		{transport.LinkConfig{Loss: 1.5}, "transport: invalid LinkConfig.Loss = 1.5, want a value in [0, 1]"},
		{transport.LinkConfig{Loss: -0.1}, "transport: invalid LinkConfig.Loss = -0.1, want a value in [0, 1]"},
		{transport.LinkConfig{Duplicate: math.NaN()}, "transport: invalid LinkConfig.Duplicate = NaN, want a value in [0, 1]"},
		{transport.LinkConfig{Reorder: math.Inf(1)}, "transport: invalid LinkConfig.Reorder = +Inf, want a value in [0, 1]"},
		{transport.LinkConfig{Bandwidth: -1}, "transport: invalid LinkConfig.Bandwidth = -1, want a value in [0, 10000000000]"},
		{transport.LinkConfig{Bandwidth: 10_000_000_001}, "transport: invalid LinkConfig.Bandwidth = 10000000001, want a value in [0, 10000000000]"},
	}
	for _, tc := range invalid {
		err := transport.ValidateLink(tc.cfg)
		require.ErrorIs(t, err, transport.ErrInvalidConfig, "%+v", tc.cfg)
		assert.Equal(t, tc.want, err.Error())
	}
}

func TestConditionsValidateNamesTheDirection(t *testing.T) {
	require.NoError(t, transport.ValidateConditions(transport.Conditions{}))

	err := transport.ValidateConditions(transport.Conditions{Down: transport.LinkConfig{Reorder: 2}})
	require.ErrorIs(t, err, transport.ErrInvalidConfig)
	assert.Equal(t, "transport: invalid Conditions.Down.Reorder = 2, want a value in [0, 1]", err.Error())

	err = transport.ValidateConditions(transport.Conditions{Up: transport.LinkConfig{Latency: -1}, Down: transport.LinkConfig{Loss: 2}})
	assert.Equal(t, "transport: invalid Conditions.Up.Latency = -1ns, want a value in [0s, 1h0m0s]", err.Error(), "Up is reported first")

	n := transport.NewMemoryNetwork(&testClock{}, 1)
	_, _, err = n.Pair(transport.Conditions{Up: transport.LinkConfig{Loss: math.NaN()}})
	require.ErrorIs(t, err, transport.ErrInvalidConfig, "Pair validates")
	_, err = n.Listen("srv")
	require.NoError(t, err)
	_, err = n.Dial("srv", transport.Conditions{Down: transport.LinkConfig{Jitter: -1}})
	require.ErrorIs(t, err, transport.ErrInvalidConfig, "Dial validates")
}

// arrival is one received datagram: its sequence number (the first 4 bytes)
// and the virtual time it was received.
type arrival struct {
	seq uint32
	at  time.Duration
}

// flow sends count numbered datagrams client→server, perTick of them every
// tick, then keeps ticking until drained, and returns what arrived in order,
// with the send time of each sequence number. The link is conditioned Up only.
func flow(t *testing.T, up transport.LinkConfig, count, perTick int, tick time.Duration, seed uint64) (sent []time.Duration, got []arrival, client transport.Conn) {
	t.Helper()
	clock := &testClock{}
	client, server, err := transport.NewMemoryNetwork(clock, seed).Pair(transport.Conditions{Up: up})
	require.NoError(t, err)
	msg := make([]byte, 8)
	buf := make([]byte, transport.MaxDatagramSize)
	drain := func() {
		for {
			n, ok := server.Receive(buf)
			if !ok {
				return
			}
			require.Equal(t, len(msg), n)
			got = append(got, arrival{seq: binary.LittleEndian.Uint32(buf), at: clock.Now()})
		}
	}
	for len(sent) < count {
		for range perTick {
			if len(sent) == count {
				break
			}
			binary.LittleEndian.PutUint32(msg, uint32(len(sent)))
			require.NoError(t, client.Send(msg))
			sent = append(sent, clock.Now())
		}
		clock.Advance(tick)
		drain()
	}
	// Longest possible delay: latency + jitter + the reorder extra delay.
	for end := clock.Now() + 2*up.Latency + up.Jitter + 2*time.Millisecond; clock.Now() <= end; clock.Advance(tick) {
		drain()
	}
	return sent, got, client
}

func TestZeroConditionsDeliverAtOnceInOrder(t *testing.T) {
	_, got, _ := flow(t, transport.LinkConfig{}, 100, 10, time.Millisecond, 1)
	require.Len(t, got, 100)
	for i, a := range got {
		assert.Equal(t, uint32(i), a.seq, "order kept")
		assert.Equal(t, time.Duration(i/10+1)*time.Millisecond, a.at, "received on the first tick after the send")
	}
}

func TestLatencyIsExact(t *testing.T) {
	clock := &testClock{}
	client, server, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{
		Up: transport.LinkConfig{Latency: 30 * time.Millisecond}, Down: transport.LinkConfig{Latency: 70 * time.Millisecond},
	})
	require.NoError(t, err)
	buf := make([]byte, 64)

	clock.Advance(5 * time.Millisecond)
	require.NoError(t, client.Send([]byte("first")))
	require.NoError(t, client.Send([]byte("second")))
	require.NoError(t, server.Send([]byte("down")))

	clock.Advance(30*time.Millisecond - 1)
	_, ok := server.Receive(buf)
	require.False(t, ok, "not before the latency")
	clock.Advance(1)
	n, ok := server.Receive(buf)
	require.True(t, ok, "exactly at the latency")
	assert.Equal(t, "first", string(buf[:n]))
	n, ok = server.Receive(buf)
	require.True(t, ok)
	assert.Equal(t, "second", string(buf[:n]), "equal delivery times keep send order")
	_, ok = server.Receive(buf)
	assert.False(t, ok)

	clock.Advance(40*time.Millisecond - 1)
	_, ok = client.Receive(buf)
	require.False(t, ok, "Down has its own latency")
	clock.Advance(1)
	n, ok = client.Receive(buf)
	require.True(t, ok)
	assert.Equal(t, "down", string(buf[:n]))
}

// With a bandwidth, datagrams leave one after another, each taking its
// size over the bandwidth: a burst queues, and a datagram sent once the
// link is idle again goes at once. Lost datagrams took their time on the
// link too.
func TestBandwidthQueuesABurst(t *testing.T) {
	clock := &testClock{}
	const latency = 10 * time.Millisecond
	client, server, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{
		Up: transport.LinkConfig{Latency: latency, Bandwidth: 100_000}})
	require.NoError(t, err)
	msg := make([]byte, 1000) // 10 ms at 100,000 bytes/s
	for i := range 5 {
		msg[0] = byte(i)
		require.NoError(t, client.Send(msg))
	}
	buf := make([]byte, transport.MaxDatagramSize)
	var at []time.Duration
	for clock.Now() < 200*time.Millisecond {
		clock.Advance(time.Millisecond)
		for {
			_, ok := server.Receive(buf)
			if !ok {
				break
			}
			require.Equal(t, byte(len(at)), buf[0], "in order")
			at = append(at, clock.Now())
		}
		if clock.Now() == 100*time.Millisecond { // idle since 50 ms
			msg[0] = 5
			require.NoError(t, client.Send(msg[:500]))
		}
	}
	assert.Equal(t, []time.Duration{20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond,
		50 * time.Millisecond, 60 * time.Millisecond, 115 * time.Millisecond}, at, "each waits for the ones before it")

	// A lost datagram spent its time on the link: the ones after it leave
	// when they would have.
	client, server, err = transport.NewMemoryNetwork(clock, 3).Pair(transport.Conditions{
		Up: transport.LinkConfig{Bandwidth: 100_000, Loss: 0.5}})
	require.NoError(t, err)
	start := clock.Now()
	for i := range 20 {
		msg[0] = byte(i)
		require.NoError(t, client.Send(msg))
	}
	got := 0
	for clock.Now() < start+time.Second {
		clock.Advance(time.Millisecond)
		for {
			if _, ok := server.Receive(buf); !ok {
				break
			}
			got++
			assert.Equal(t, time.Duration(buf[0]+1)*10*time.Millisecond, clock.Now()-start, "datagram %d", buf[0])
		}
	}
	assert.Equal(t, int(client.Stats().Lost), 20-got)
	assert.Positive(t, client.Stats().Lost)
}

func TestJitterStaysInBoundsAndKeepsOrder(t *testing.T) {
	const latency, jitter = 50 * time.Millisecond, 10 * time.Millisecond
	sent, got, _ := flow(t, transport.LinkConfig{Latency: latency, Jitter: jitter}, 10_000, 1, time.Millisecond, 7)
	require.Len(t, got, len(sent))
	var minDelay, maxDelay time.Duration = math.MaxInt64, 0
	for i, a := range got {
		require.Equal(t, uint32(i), a.seq, "jitter alone never reorders")
		d := a.at - sent[a.seq]
		require.GreaterOrEqual(t, d, latency-jitter, "datagram %d", i)
		require.LessOrEqual(t, d, latency+jitter, "datagram %d", i)
		minDelay, maxDelay = min(minDelay, d), max(maxDelay, d)
	}
	// The FIFO rule raises many early draws, but the delays must still reach
	// both sides of the latency, or the jitter is not applied.
	assert.Less(t, minDelay, latency-2*time.Millisecond)
	assert.Greater(t, maxDelay, latency+jitter-2*time.Millisecond)
}

func TestJitterLargerThanLatencyIsNeverEarly(t *testing.T) {
	sent, got, _ := flow(t, transport.LinkConfig{Latency: time.Millisecond, Jitter: 20 * time.Millisecond}, 1000, 1, time.Millisecond, 3)
	require.Len(t, got, len(sent))
	for i, a := range got {
		require.Equal(t, uint32(i), a.seq)
		require.Greater(t, a.at, sent[a.seq], "received on a later tick than sent")
	}
}

// fractionTolerance is ±1 percentage point: about 8 standard deviations at
// 100,000 samples, so a correct implementation does not fail by chance while a
// wrong probability still does.
const fractionTolerance = 0.01

func TestLossFraction(t *testing.T) {
	const count = 100_000
	_, got, client := flow(t, transport.LinkConfig{Latency: 10 * time.Millisecond, Loss: 0.2}, count, 10, time.Millisecond, 11)
	lost := count - len(got)
	assert.InDelta(t, 0.2, float64(lost)/count, fractionTolerance)
	st := client.Stats()
	assert.Equal(t, uint64(lost), st.Lost)
	assert.Equal(t, uint64(count), st.Sent, "lost datagrams still count as sent")
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].seq, got[i].seq, "loss alone never reorders or duplicates")
	}
}

func TestDuplicateFraction(t *testing.T) {
	const count = 100_000
	_, got, client := flow(t, transport.LinkConfig{Latency: 10 * time.Millisecond, Jitter: 2 * time.Millisecond, Duplicate: 0.1}, count, 10, time.Millisecond, 13)
	seen := make(map[uint32]int, count)
	for _, a := range got {
		seen[a.seq]++
	}
	require.Len(t, seen, count, "every datagram arrives at least once")
	extra := len(got) - count
	for _, k := range seen {
		require.LessOrEqual(t, k, 2, "at most one extra copy")
	}
	assert.InDelta(t, 0.1, float64(extra)/count, fractionTolerance)
	assert.Equal(t, uint64(extra), client.Stats().Duplicated)
}

func TestReorderFraction(t *testing.T) {
	// No jitter, so only the reorder path can put a datagram behind a later one
	// and the observed count must equal Stats.Reordered exactly. Ten sends per
	// 0.5ms tick put the next in-order datagram well within the least reorder
	// delay (1ms) of any reordered one, so every reordered datagram is
	// overtaken (short of ten reordered in a row).
	const count = 100_000
	const trailing = 20 // sent after the snapshot, so the last counted datagrams are overtaken too
	up := transport.LinkConfig{Latency: 20 * time.Millisecond, Reorder: 0.1}
	clock := &testClock{}
	client, server, err := transport.NewMemoryNetwork(clock, 17).Pair(transport.Conditions{Up: up})
	require.NoError(t, err)
	msg, buf := make([]byte, 4), make([]byte, 16)
	var order []uint32
	drain := func() {
		for {
			n, ok := server.Receive(buf)
			if !ok {
				return
			}
			require.Equal(t, 4, n)
			order = append(order, binary.LittleEndian.Uint32(buf))
		}
	}
	var reordered uint64
	for seq := range uint32(count + trailing) {
		if seq == count {
			reordered = client.Stats().Reordered
		}
		binary.LittleEndian.PutUint32(msg, seq)
		require.NoError(t, client.Send(msg))
		if seq%10 == 9 {
			clock.Advance(time.Millisecond / 2)
			drain()
		}
	}
	clock.Advance(up.Latency*2 + 2*time.Millisecond)
	drain()
	require.Len(t, order, count+trailing, "reordering neither loses nor duplicates")

	// A datagram is out of order when a later-sent one was received before it.
	var outOfOrder uint64
	maxSeen := -1
	for _, seq := range order {
		if int(seq) < maxSeen && seq < count {
			outOfOrder++
		}
		maxSeen = max(maxSeen, int(seq))
	}
	assert.Positive(t, outOfOrder)
	assert.Equal(t, reordered, outOfOrder)
	assert.InDelta(t, 0.1, float64(reordered)/count, fractionTolerance)
}
