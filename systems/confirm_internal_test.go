package systems

import (
	"math"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// The queue of unacknowledged verdicts holds at most 256: the oldest is
// given up past it. Acknowledgements forget what they cover, across the
// sequence wrap; one of verdicts never sent is ignored.
func TestConfirmQueueCapAndAcks(t *testing.T) {
	q := confirmQueue{next: math.MaxUint32 - 10}
	dropped := 0
	for range maxPendingConfirms + 44 {
		if q.push(protocol.Confirm{}) {
			dropped++
		}
	}
	assert.Equal(t, 44, dropped)
	require.Len(t, q.pending, maxPendingConfirms)
	first := q.next - maxPendingConfirms // wrapped past 2³²
	assert.Equal(t, first, q.pending[0].Seq)
	q.ack(q.next + 5) // never sent
	assert.Len(t, q.pending, maxPendingConfirms)
	q.ack(first + 100)
	require.Len(t, q.pending, maxPendingConfirms-100)
	assert.Equal(t, first+100, q.pending[0].Seq)
	q.ack(first) // old
	assert.Len(t, q.pending, maxPendingConfirms-100)
	q.ack(q.next)
	assert.Empty(t, q.pending)
}

// The client delivers each verdict once and in order: copies are dropped,
// a packet ahead of the next expected verdict counts the gap the server
// gave up as missed, and every packet is acknowledged.
func TestClientDeliversConfirmationsOnceInOrder(t *testing.T) {
	clock := &gw.VirtualTime{}
	a, b, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{})
	require.NoError(t, err)
	peer, err := packet.NewConn(b, clock, packet.Options{})
	require.NoError(t, err)
	var got []uint32
	c := &Client{link: newLink(a, clock, linkOptions{})}
	c.opts.OnConfirm = func(_ *gw.World, shot gw.Tick, hit bool, reason string, _ ecs.Entity, _ uint8) {
		got = append(got, uint32(shot))
	}
	packet := func(seq uint32, n int) []byte {
		cs := make([]protocol.Confirm, n)
		for i := range cs {
			cs[i] = protocol.Confirm{Seq: seq + uint32(i), Shot: gw.Tick(seq + uint32(i))}
		}
		return protocol.AppendConfirms(nil, cs)
	}
	c.confirmed(packet(0, 3))
	c.confirmed(packet(0, 3)) // duplicate
	c.confirmed(packet(1, 4)) // overlaps
	c.confirmed(packet(9, 2)) // 5..8 given up by the server
	assert.Equal(t, []uint32{0, 1, 2, 3, 4, 9, 10}, got)
	st := c.stats
	assert.Equal(t, uint64(7), st.Confirmations)
	assert.Equal(t, uint64(5), st.ConfirmsDuplicate)
	assert.Equal(t, uint64(4), st.ConfirmsMissed)
	c.confirmed([]byte{protocol.ProtocolVersion, byte(protocol.MsgConfirm)})
	assert.Equal(t, uint64(1), c.stats.BadPackets)
	require.NoError(t, c.link.pc.Flush())
	var last uint32
	for {
		m, ok := peer.Receive()
		if !ok {
			break
		}
		next, err := protocol.DecodeConfirmAck(m.Data)
		require.NoError(t, err)
		last = next
	}
	assert.Equal(t, uint32(11), last, "the acknowledgement names the next verdict expected")
}
