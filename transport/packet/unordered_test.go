package packet_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// The unordered channel delivers every message exactly once through 20 %
// loss, duplication and reordering, each as its packet arrives: some
// overtake messages sent before them, which the ordered channel beside
// them never lets happen.
func TestUnorderedExactlyOnceThroughLoss(t *testing.T) {
	const total = 3000
	for _, seed := range []uint64{1, 2, 3} {
		s := newSim(t, seed, lossy, packet.Options{}, packet.Options{})
		got := make(map[int]int)
		overtaken, last := 0, -1
		ordered := &inOrder{t: t}
		onB := func(m packet.Message) {
			if m.Channel == packet.Reliable {
				ordered.check(m)
				return
			}
			require.Equal(t, packet.ReliableUnordered, m.Channel)
			i := int(binary.LittleEndian.Uint32(m.Data))
			require.Equal(t, numbered(i), m.Data)
			got[i]++
			if i < last {
				overtaken++
			}
			last = max(last, i)
		}
		sent, sentOrdered := 0, 0
		for tick := 0; (len(got) < total || ordered.next < total) && tick < 20000; tick++ {
			for range 10 {
				if sent < total && s.a.SendUnordered(numbered(sent)) == nil {
					sent++
				}
				if sentOrdered < total && s.a.SendReliable(numbered(sentOrdered)) == nil {
					sentOrdered++
				}
			}
			s.step(10*time.Millisecond, nil, onB)
		}
		s.settle(nil, onB)
		require.Len(t, got, total, "seed %d", seed)
		for i, n := range got {
			require.Equal(t, 1, n, "seed %d: message %d delivered %d times", seed, i, n)
		}
		assert.Equal(t, total, ordered.next)
		assert.Positive(t, overtaken, "seed %d: later messages overtook lost ones", seed)
		a, b := s.a.Stats(), s.b.Stats()
		assert.Equal(t, uint64(total), a.UnorderedQueued)
		assert.Equal(t, uint64(total), b.UnorderedDelivered)
		assert.Positive(t, a.ReliableResent)
		assert.Zero(t, a.ReliablePending+a.QueuedBytes, "seed %d: all acknowledged and released", seed)
	}
}

// A large ordered message holds back the ordered messages after it, not
// the unordered ones: those go first in every Flush.
func TestUnorderedMessagesPassALargeOrderedOne(t *testing.T) {
	link := transport.LinkConfig{Latency: 20 * time.Millisecond}
	s := newSim(t, 1, transport.Conditions{Up: link, Down: link}, packet.Options{ReliableBytesPerFlush: 2048}, packet.Options{})
	require.NoError(t, s.a.SendReliable(make([]byte, 64<<10)))
	require.NoError(t, s.a.SendReliable([]byte("after the big one")))
	var order []string
	onB := func(m packet.Message) {
		if len(m.Data) > 100 {
			order = append(order, "big")
			return
		}
		order = append(order, string(m.Data))
	}
	for i := range 10 {
		require.NoError(t, s.a.SendUnordered([]byte{'u', byte('0' + i)}))
		s.step(10*time.Millisecond, nil, onB)
	}
	s.settle(nil, onB)
	assert.Equal(t, []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "big", "after the big one"}, order)
}

func TestUnorderedSizeAndCaps(t *testing.T) {
	s := newSim(t, 1, transport.Conditions{}, packet.Options{MaxReliablePending: 2, MaxQueuedBytes: 64 << 10}, packet.Options{})
	err := s.a.SendUnordered(make([]byte, 1187))
	require.ErrorIs(t, err, packet.ErrMessageSize)
	assert.Equal(t, "packet: unordered message of 1187 bytes exceeds the limit of 1186 bytes", err.Error())
	require.NoError(t, s.a.SendUnordered(make([]byte, 1186)))
	require.NoError(t, s.a.SendUnordered(nil))
	err = s.a.SendUnordered([]byte("x"))
	require.ErrorIs(t, err, packet.ErrBacklogged, "MaxReliablePending caps each channel")
	assert.Contains(t, err.Error(), "they hold 0 ordered and 2 unordered messages (cap 2 each)")
	require.ErrorIs(t, s.a.Backlogged(), packet.ErrBacklogged)
	require.NoError(t, s.a.SendReliable([]byte("x")), "the ordered channel has its own count")
	// The bytes are shared: a large ordered message takes what is left.
	err = s.a.SendReliable(make([]byte, 64<<10-1000))
	require.ErrorIs(t, err, packet.ErrBacklogged)
	assert.Equal(t, uint64(2), s.a.Stats().BacklogRefused)
	s.settle(nil, nil)
	assert.Equal(t, uint64(2), s.b.Stats().UnorderedDelivered)
	require.NoError(t, s.a.Backlogged())

	// A peer that stops acknowledging stalls the unordered channel too.
	s = newSim(t, 1, transport.Conditions{Down: transport.LinkConfig{Loss: 1}}, packet.Options{BacklogTimeout: time.Second}, packet.Options{})
	require.NoError(t, s.a.SendUnordered([]byte("ready")))
	for range 110 {
		s.step(10*time.Millisecond, nil, nil)
	}
	err = s.a.Backlogged()
	require.ErrorIs(t, err, packet.ErrBacklogged)
	assert.Contains(t, err.Error(), "oldest message unacknowledged for 1.1s")
}

// ReliableBytesPerFlush spreads a large message over many Flushes: each
// sends at most the cap plus one entry of reliable data, while the
// unreliable messages of each Flush go out at once.
func TestReliableBytesPerFlushSpreadsALargeMessage(t *testing.T) {
	const perFlush = 2048
	s := newSim(t, 1, transport.Conditions{}, packet.Options{ReliableBytesPerFlush: perFlush}, packet.Options{})
	require.NoError(t, s.a.SendReliable(make([]byte, 64<<10)))
	flushes, delivered, unreliable := 0, false, 0
	for !delivered && flushes < 1000 {
		_, err := s.a.SendUnreliable(make([]byte, 1000))
		require.NoError(t, err)
		before := s.a.Stats().BytesSent
		s.step(time.Millisecond, nil, func(m packet.Message) {
			if m.Channel == packet.Reliable {
				delivered = true
			} else {
				unreliable++
			}
		})
		sent := int(s.a.Stats().BytesSent - before)
		// The unreliable message's packet, then fragments within the cap
		// and one entry more, each in a packet of its own.
		require.LessOrEqual(t, sent, packet.HeaderSize+3+1000+perFlush+2*(packet.HeaderSize+7+packet.FragmentSize), "flush %d", flushes)
		flushes++
	}
	require.True(t, delivered)
	assert.InDelta(t, 32, flushes, 2, "two fragments a flush: 64 fragments in 32")
	assert.Equal(t, flushes-1, unreliable, "every flush's unreliable message went beside (the last is on its way)")
	assert.Positive(t, s.a.Stats().ReliableCapped)
	assert.Equal(t, uint64(64), s.a.Stats().FragmentsSent, "nothing resent on a perfect link")
}
