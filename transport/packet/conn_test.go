package packet_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

type testClock struct{ now time.Duration }

func (c *testClock) Now() time.Duration { return c.now }

func (c *testClock) Advance(d time.Duration) { c.now += d }

// sim is a packet.Conn pair over a memory link on a virtual clock: a is the
// client end, b the server end.
type sim struct {
	t     testing.TB
	clock *testClock
	a, b  *packet.Conn
}

func newSim(t testing.TB, seed uint64, c transport.Conditions, oa, ob packet.Options) *sim {
	t.Helper()
	clock := &testClock{}
	rawA, rawB, err := transport.NewMemoryNetwork(clock, seed).Pair(c)
	require.NoError(t, err)
	a, err := packet.NewConn(rawA, clock, oa)
	require.NoError(t, err)
	b, err := packet.NewConn(rawB, clock, ob)
	require.NoError(t, err)
	return &sim{t: t, clock: clock, a: a, b: b}
}

// drain returns every message c has by now to fn (which may be nil).
func drain(c *packet.Conn, fn func(packet.Message)) {
	for {
		m, ok := c.Receive()
		if !ok {
			return
		}
		if fn != nil {
			fn(m)
		}
	}
}

// step advances the clock by dt, then each end drains and flushes.
func (s *sim) step(dt time.Duration, onA, onB func(packet.Message)) {
	s.t.Helper()
	s.clock.Advance(dt)
	drain(s.a, onA)
	drain(s.b, onB)
	require.NoError(s.t, s.a.Flush())
	require.NoError(s.t, s.b.Flush())
}

// settle steps for a simulated second, so what is in flight lands and is acked.
func (s *sim) settle(onA, onB func(packet.Message)) {
	s.t.Helper()
	for range 100 {
		s.step(10*time.Millisecond, onA, onB)
	}
}

// lossy drops 20% both ways, duplicates and reorders 10%.
var lossy = transport.Conditions{
	Up:   transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Duplicate: 0.1, Reorder: 0.1},
	Down: transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Duplicate: 0.1, Reorder: 0.1},
}

// numbered returns message i: its index, then i%300 bytes derived from i, so
// a mixed-up or damaged message is caught.
func numbered(i int) []byte {
	m := binary.LittleEndian.AppendUint32(nil, uint32(i))
	for k := range i % 300 {
		m = append(m, byte(i+k))
	}
	return m
}

// inOrder checks that reliable messages arrive as 0, 1, 2, ... exactly once.
type inOrder struct {
	t    testing.TB
	next int
}

func (o *inOrder) check(m packet.Message) {
	if m.Channel != packet.Reliable {
		return
	}
	require.GreaterOrEqual(o.t, len(m.Data), 4)
	i := int(binary.LittleEndian.Uint32(m.Data))
	require.Equal(o.t, o.next, i, "reliable messages arrive exactly once and in order")
	require.Equal(o.t, numbered(i), m.Data)
	o.next++
}

func TestReliableExactlyOnceInOrderThroughLoss(t *testing.T) {
	const total = 3000
	for _, seed := range []uint64{1, 2, 3, 4} {
		s := newSim(t, seed, lossy, packet.Options{}, packet.Options{})
		toB, toA := &inOrder{t: t}, &inOrder{t: t}
		sentA, sentB := 0, 0
		noise := make([]byte, 200)
		for tick := 0; (toB.next < total || toA.next < total) && tick < 20000; tick++ {
			// Ten a tick each way, as far as the queue takes them, with
			// unreliable traffic beside.
			for range 10 {
				if sentA < total && s.a.SendReliable(numbered(sentA)) == nil {
					sentA++
				}
				if sentB < total && s.b.SendReliable(numbered(sentB)) == nil {
					sentB++
				}
			}
			_, err := s.a.SendUnreliable(noise)
			require.NoError(t, err)
			s.step(10*time.Millisecond, toA.check, toB.check)
		}
		require.Equal(t, total, toB.next, "seed %d: a to b", seed)
		require.Equal(t, total, toA.next, "seed %d: b to a", seed)
		st := s.a.Stats()
		assert.Positive(t, st.ReliableResent, "seed %d: 20%% loss makes resends", seed)
		assert.Positive(t, s.b.Stats().ReliableDuplicates+s.b.Stats().DuplicatePackets, "seed %d: duplication is seen", seed)
		assert.Positive(t, s.b.Stats().UnreliableDelivered)
	}
}

func TestReliableMessageIDsWrap(t *testing.T) {
	const total = 70000 // past 65535
	s := newSim(t, 7, transport.Conditions{
		Up:   transport.LinkConfig{Latency: 5 * time.Millisecond, Loss: 0.05, Reorder: 0.05},
		Down: transport.LinkConfig{Latency: 5 * time.Millisecond, Loss: 0.05},
	}, packet.Options{}, packet.Options{})
	got := &inOrder{t: t}
	sent := 0
	for tick := 0; got.next < total && tick < 100000; tick++ {
		for range 100 {
			if sent < total && s.a.SendReliable(numbered(sent)[:4]) == nil {
				sent++
			}
		}
		s.step(5*time.Millisecond, nil, func(m packet.Message) {
			require.Equal(t, packet.Reliable, m.Channel)
			require.Equal(t, uint32(got.next), binary.LittleEndian.Uint32(m.Data))
			got.next++
		})
	}
	require.Equal(t, total, got.next)
	s.settle(nil, nil)
	assert.Zero(t, s.a.Stats().ReliablePending)
}

func TestFragmentedMessage(t *testing.T) {
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i * 31 >> 3)
	}
	for _, tc := range []struct {
		name string
		c    transport.Conditions
	}{
		{"perfect", transport.Conditions{}},
		{"lossy", lossy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, 11, tc.c, packet.Options{}, packet.Options{})
			// Small messages before and after the big one, and a second
			// big one, stay in order around it.
			require.NoError(t, s.a.SendReliable([]byte("before")))
			require.NoError(t, s.a.SendReliable(big))
			require.NoError(t, s.a.SendReliable([]byte("after")))
			require.NoError(t, s.a.SendReliable(big[:5000]))
			var got [][]byte
			for tick := 0; len(got) < 4 && tick < 2000; tick++ {
				s.step(10*time.Millisecond, nil, func(m packet.Message) {
					got = append(got, append([]byte(nil), m.Data...))
				})
			}
			require.Len(t, got, 4)
			s.settle(nil, nil)
			assert.Equal(t, "before", string(got[0]))
			assert.Equal(t, big, got[1])
			assert.Equal(t, "after", string(got[2]))
			assert.Equal(t, big[:5000], got[3])
			st := s.b.Stats()
			assert.GreaterOrEqual(t, st.FragmentsReceived, uint64(64+5))
			assert.Equal(t, 64*packet.FragmentSize, st.ReassemblyBytes, "one buffer of MaxMessageSize")
			assert.Zero(t, st.HeldBytes)
			assert.Zero(t, s.a.Stats().QueuedBytes, "all acked and released")
		})
	}
}

func TestMessageSizeLimits(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{MaxMessageSize: 4000}, packet.Options{})
	_, err := s.a.SendUnreliable(make([]byte, packet.MaxUnreliableSize+1))
	require.ErrorIs(t, err, packet.ErrMessageSize)
	assert.Equal(t, "packet: unreliable message of 1189 bytes exceeds the limit of 1188 bytes", err.Error())
	_, err = s.a.SendUnreliable(make([]byte, packet.MaxUnreliableSize))
	require.NoError(t, err)
	err = s.a.SendReliable(make([]byte, 4001))
	require.ErrorIs(t, err, packet.ErrMessageSize)
	assert.Contains(t, err.Error(), "4001 bytes exceeds the limit of 4000")
	require.NoError(t, s.a.SendReliable(make([]byte, 4000)))
	// Empty messages are messages too.
	require.NoError(t, s.a.SendReliable(nil))
	_, err = s.a.SendUnreliable(nil)
	require.NoError(t, err)
	lens := map[packet.Channel][]int{}
	s.settle(nil, func(m packet.Message) { lens[m.Channel] = append(lens[m.Channel], len(m.Data)) })
	assert.Equal(t, []int{4000, 0}, lens[packet.Reliable], "in order")
	assert.ElementsMatch(t, []int{packet.MaxUnreliableSize, 0}, lens[packet.Unreliable])
}

func TestUnreliablePacking(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{}, packet.Options{})
	msg := make([]byte, 100)
	seqs := map[packet.Seq]int{}
	for range 25 {
		seq, err := s.a.SendUnreliable(msg)
		require.NoError(t, err)
		seqs[seq]++
	}
	// 10 entries of 103 bytes fit beside the 9-byte header; the 11th opens a new packet.
	require.Equal(t, map[packet.Seq]int{0: 11, 1: 11, 2: 3}, seqs)
	n := 0
	s.settle(nil, func(m packet.Message) {
		assert.Equal(t, packet.Unreliable, m.Channel)
		n++
	})
	assert.Equal(t, 25, n)
	assert.Equal(t, uint64(3), s.a.Stats().PacketsSent)
}

func TestAcksReportedExactlyOnceAcrossWrap(t *testing.T) {
	const packets = 70000 // the sequence wraps past 65535
	reported := make(map[packet.Seq]int)
	var order []packet.Seq
	clock := &testClock{}
	rawA, rawB, err := transport.NewMemoryNetwork(clock, 3).Pair(transport.Conditions{
		Up:   transport.LinkConfig{Latency: 10 * time.Millisecond, Loss: 0.1, Duplicate: 0.3, Reorder: 0.1},
		Down: transport.LinkConfig{Latency: 10 * time.Millisecond, Loss: 0.1, Duplicate: 0.3, Reorder: 0.1},
	})
	require.NoError(t, err)
	a, err := packet.NewConn(rawA, clock, packet.Options{OnAck: func(s packet.Seq) {
		reported[s]++
		order = append(order, s)
	}})
	require.NoError(t, err)
	b, err := packet.NewConn(rawB, clock, packet.Options{})
	require.NoError(t, err)
	wrapped := false
	for i := range packets {
		seq, err := a.SendUnreliable([]byte{1})
		require.NoError(t, err)
		require.Equal(t, packet.Seq(i), seq, "sequences count up and wrap")
		require.NoError(t, a.Flush())
		clock.Advance(time.Millisecond)
		drain(b, nil)
		require.NoError(t, b.Flush())
		drain(a, nil)
		if seq == 65535 {
			// Start the next lap: every report so far was once.
			for s, n := range reported {
				require.Equal(t, 1, n, "seq %d reported %d times", s, n)
			}
			clear(reported)
			wrapped = true
		}
	}
	require.True(t, wrapped)
	for s, n := range reported {
		require.Equal(t, 1, n, "seq %d reported %d times", s, n)
	}
	assert.Greater(t, len(reported), (packets-65536)*8/10, "acks keep coming after the wrap")
	st := a.Stats()
	assert.Equal(t, st.PacketsAcked, uint64(len(order)), "OnAck once per acked packet")
	// 10% loss of the packet, and its acks ride 33 later packets: about 90% are acked.
	assert.InDelta(t, 0.9, float64(st.PacketsAcked)/packets, 0.02)
	last := order[len(order)-1]
	assert.True(t, a.Acked(last))
	assert.False(t, a.Acked(last+1), "not sent yet")
}

func TestRTTAndLossEstimates(t *testing.T) {
	const latency = 50 * time.Millisecond
	for _, loss := range []float64{0, 0.1, 0.25} {
		s := newSim(t, 5, transport.Conditions{
			Up:   transport.LinkConfig{Latency: latency, Loss: loss},
			Down: transport.LinkConfig{Latency: latency},
		}, packet.Options{}, packet.Options{})
		msg := make([]byte, 50)
		for range 3000 { // 30 s at 100 Hz
			_, err := s.a.SendUnreliable(msg)
			require.NoError(t, err)
			_, err = s.b.SendUnreliable(msg)
			require.NoError(t, err)
			s.step(10*time.Millisecond, nil, nil)
		}
		assert.InDelta(t, 2*latency, s.a.RTT(), float64(5*time.Millisecond), "loss %v: RTT = 2 × latency", loss)
		assert.InDelta(t, 2*latency, s.b.RTT(), float64(5*time.Millisecond), "loss %v: RTT = 2 × latency", loss)
		assert.InDelta(t, loss, s.a.Loss(), 0.06, "loss %v: recent estimate", loss)
		st := s.a.Stats()
		assert.InDelta(t, loss, float64(st.PacketsLost)/float64(st.PacketsLost+st.PacketsAcked), 0.02, "loss %v: over the run", loss)
		assert.InDelta(t, 0, s.b.Loss(), 0.001, "the way down loses nothing")
	}
}

func TestSendBudget(t *testing.T) {
	const budget = 20000 // bytes/s
	s := newSim(t, 1, transport.Conditions{
		Up:   transport.LinkConfig{Latency: 20 * time.Millisecond},
		Down: transport.LinkConfig{Latency: 20 * time.Millisecond},
	}, packet.Options{SendBudget: budget}, packet.Options{})
	msg := make([]byte, 1000)
	refused := 0
	for range 12000 { // one simulated minute at 200 Hz, offering 10× the budget
		if _, err := s.a.SendUnreliable(msg); err != nil {
			require.ErrorIs(t, err, packet.ErrOverBudget)
			refused++
		}
		if s.a.Stats().ReliablePending < 100 {
			require.NoError(t, s.a.SendReliable(msg[:300]))
		}
		s.step(5*time.Millisecond, nil, nil)
	}
	st := s.a.Stats()
	assert.LessOrEqual(t, st.BytesSent, uint64(budget*60+transport.MaxDatagramSize), "budget × 60 s plus one packet")
	assert.Greater(t, st.BytesSent, uint64(budget*60*9/10), "the budget is used")
	assert.Equal(t, uint64(refused), st.BudgetRefused)
	assert.Positive(t, st.BudgetRefused)
	assert.Positive(t, st.BudgetDeferred, "reliable data waited for budget")
	assert.Positive(t, s.b.Stats().ReliableDelivered)
	_, err := s.a.SendUnreliable(msg)
	if err != nil {
		assert.Contains(t, err.Error(), "20000 bytes/s")
	}
}

func TestPeerThatStopsReading(t *testing.T) {
	opts := packet.Options{MaxQueuedBytes: 128 << 10, BacklogTimeout: 2 * time.Second}
	s := newSim(t, 1, transport.Conditions{}, opts, packet.Options{})
	msg := make([]byte, 500)
	refusedAt := time.Duration(-1)
	for range 1000 { // 10 s; b never reads
		if err := s.a.SendReliable(msg); err != nil {
			require.ErrorIs(t, err, packet.ErrBacklogged)
			if refusedAt < 0 {
				refusedAt = s.clock.Now()
			}
		}
		s.clock.Advance(10 * time.Millisecond)
		drain(s.a, nil)
		require.NoError(t, s.a.Flush())
		require.LessOrEqual(t, s.a.Stats().QueuedBytes, opts.MaxQueuedBytes)
	}
	st := s.a.Stats()
	assert.Positive(t, st.BacklogRefused)
	assert.GreaterOrEqual(t, refusedAt, time.Duration(0))
	err := s.a.Backlogged()
	require.ErrorIs(t, err, packet.ErrBacklogged)
	assert.Contains(t, err.Error(), "cap 131072")
	assert.Zero(t, st.PacketsAcked)
}

func TestBacklogRefusesALargeMessage(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{MaxQueuedBytes: 70000}, packet.Options{})
	require.NoError(t, s.a.SendReliable(make([]byte, 10000)))
	err := s.a.SendReliable(make([]byte, 64<<10))
	require.ErrorIs(t, err, packet.ErrBacklogged)
	assert.Equal(t, "packet: reliable send queue backlogged: no room for a message of 65536 bytes: "+
		"they hold 1 ordered and 0 unordered messages (cap 1024 each) in 10000 bytes (cap 70000)", err.Error())
	assert.NoError(t, s.a.Backlogged(), "small messages still fit")
	assert.Equal(t, uint64(1), s.a.Stats().BacklogRefused)
	s.settle(nil, nil)
	require.NoError(t, s.a.SendReliable(make([]byte, 64<<10)), "room once the first is acked")
}

func TestBackloggedWhenAcksStop(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{Down: transport.LinkConfig{Loss: 1}}, packet.Options{BacklogTimeout: time.Second}, packet.Options{})
	require.NoError(t, s.a.SendReliable([]byte("hello")))
	for range 50 {
		s.step(10*time.Millisecond, nil, nil)
	}
	require.NoError(t, s.a.Backlogged(), "0.5 s without acks is within the timeout")
	for range 60 {
		s.step(10*time.Millisecond, nil, nil)
	}
	err := s.a.Backlogged()
	require.ErrorIs(t, err, packet.ErrBacklogged)
	assert.Contains(t, err.Error(), "oldest message unacknowledged for 1.1s (BacklogTimeout 1s)")
	assert.Equal(t, uint64(1), s.b.Stats().ReliableDelivered, "b got it; only the acks are lost")
}

func TestAckOnlyPackets(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{}, packet.Options{AckInterval: 50 * time.Millisecond})
	for range 100 { // 1 s; a sends every 10 ms, b only acks
		_, err := s.a.SendUnreliable([]byte("x"))
		require.NoError(t, err)
		s.step(10*time.Millisecond, nil, nil)
	}
	sb := s.b.Stats()
	assert.Equal(t, sb.PacketsSent, sb.AckOnlySent)
	assert.InDelta(t, 20, sb.AckOnlySent, 1, "one per 50 ms")
	assert.Zero(t, s.a.Stats().AckOnlySent, "ack-only packets need no ack")
	assert.InDelta(t, 100, s.a.Stats().PacketsAcked, 5)
}

func TestClose(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{}, packet.Options{})
	require.NoError(t, s.a.Close())
	require.ErrorIs(t, s.a.Close(), transport.ErrClosed)
	_, err := s.a.SendUnreliable([]byte("x"))
	require.ErrorIs(t, err, transport.ErrClosed)
	require.ErrorIs(t, s.a.SendReliable([]byte("x")), transport.ErrClosed)
	require.ErrorIs(t, s.a.Flush(), transport.ErrClosed)
	_, ok := s.a.Receive()
	assert.False(t, ok)
	// The peer's sends fail at the transport once the link is closed.
	_, err = s.b.SendUnreliable([]byte("x"))
	require.NoError(t, err, "queued in the open packet")
	require.True(t, errors.Is(s.b.Flush(), transport.ErrClosed))
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	acked := 0
	s := newSim(t, 1, transport.Conditions{
		Up:   transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 0.05},
		Down: transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 0.05},
	}, packet.Options{OnAck: func(packet.Seq) { acked++ }}, packet.Options{})
	payload, small := make([]byte, 1000), make([]byte, 40)
	cycle := func() {
		_, err := s.a.SendUnreliable(payload)
		require.NoError(t, err)
		require.NoError(t, s.a.SendReliable(small))
		require.NoError(t, s.b.SendReliable(small))
		require.NoError(t, s.a.SendUnordered(small))
		s.step(10*time.Millisecond, nil, nil)
	}
	for range 2000 { // grow the pools, rings and records to the traffic
		cycle()
	}
	before := acked
	allocs := testing.AllocsPerRun(500, cycle)
	assert.Zero(t, allocs, "send, receive and ack allocate nothing in steady state")
	assert.Greater(t, acked, before)
	assert.Positive(t, s.a.Stats().ReliableResent, "resends are part of the steady state")
}

func TestReliableProgressUnderTightReceiveCap(t *testing.T) {
	// The receiver keeps at most one whole message of the largest class
	// out of order, so most packets after a loss are refused unacked and
	// sent again; the channel still delivers everything in order.
	s := newSim(t, 9, lossy, packet.Options{}, packet.Options{MaxReceiveBytes: 1186})
	const total = 1000
	got := &inOrder{t: t}
	sent := 0
	for tick := 0; got.next < total && tick < 20000; tick++ {
		for range 5 {
			if sent < total && s.a.SendReliable(numbered(sent)) == nil {
				sent++
			}
		}
		s.step(10*time.Millisecond, nil, got.check)
	}
	require.Equal(t, total, got.next, "a %+v\nb %+v", s.a.Stats(), s.b.Stats())
	st := s.b.Stats()
	assert.Positive(t, st.ReceiveBytesFull)
	assert.LessOrEqual(t, st.HeldBytes, 2*1186)
}

func TestStatsOfACleanExchange(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{}, packet.Options{})
	_, err := s.a.SendUnreliable([]byte("u1"))
	require.NoError(t, err)
	require.NoError(t, s.a.SendReliable([]byte("r1")))
	require.NoError(t, s.a.SendReliable(make([]byte, 3000))) // 3 fragments
	s.settle(nil, nil)
	a, b := s.a.Stats(), s.b.Stats()
	assert.Equal(t, uint64(1), a.UnreliableSent)
	assert.Equal(t, uint64(1), b.UnreliableDelivered)
	assert.Equal(t, uint64(2), a.ReliableQueued)
	assert.Equal(t, uint64(2), b.ReliableDelivered)
	assert.Equal(t, uint64(3), a.FragmentsSent)
	assert.Equal(t, uint64(3), b.FragmentsReceived)
	// Packets: u1 with r1, then the fragments once r1 is acked (one each).
	assert.Equal(t, uint64(4), a.PacketsSent)
	assert.Equal(t, uint64(4), a.PacketsAcked)
	assert.Zero(t, a.PacketsLost+a.ReliableResent+b.ReliableDuplicates)
	assert.Equal(t, a.BytesSent, b.BytesReceived)
	assert.Equal(t, b.BytesSent, a.BytesReceived)
	assert.Equal(t, b.PacketsSent, b.AckOnlySent)
	assert.Equal(t, a.PacketsSent, b.PacketsReceived)
	assert.Equal(t, uint64(9+3+2+5+2), a.BytesSent-3*(9+7)-3000, "header, u1 and r1 entries")
	assert.Zero(t, a.QueuedBytes+a.ReliablePending+b.HeldBytes)
}

func TestReliablePendingCap(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{MaxReliablePending: 3}, packet.Options{})
	for range 3 {
		require.NoError(t, s.a.SendReliable([]byte("x")))
	}
	err := s.a.SendReliable([]byte("x"))
	require.ErrorIs(t, err, packet.ErrBacklogged)
	assert.Contains(t, err.Error(), "they hold 3 ordered and 0 unordered messages (cap 3 each)")
	require.ErrorIs(t, s.a.Backlogged(), packet.ErrBacklogged)
	assert.Equal(t, uint64(1), s.a.Stats().BacklogRefused)
	s.settle(nil, nil)
	require.NoError(t, s.a.Backlogged(), "acks empty the queue")
	require.NoError(t, s.a.SendReliable([]byte("x")))
	assert.Equal(t, uint64(3), s.b.Stats().ReliableDelivered)
}
