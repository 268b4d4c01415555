package systems_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// connectOne builds a harness with one client over lk and waits for it to
// connect; it returns the harness and the client's connection ID.
func connectOne(t *testing.T, g *testGame, lk transport.Conditions, mod func(*harness.Options)) (*harness.Harness, components.ConnID) {
	opts := g.options(1, lk)
	if mod != nil {
		mod(&opts)
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	require.True(t, h.RunUntil(func() bool { return h.Clients[0].Connected() }, 10*time.Second))
	return h, h.Server.Conns()[0]
}

// The packet layer's estimates reach the endpoints: RTT and loss per
// connection, and the newest snapshot tick the client acknowledged, which
// trails the server's tick by about a round trip.
func TestEndpointsReportTheLinkEstimates(t *testing.T) {
	g := newTestGame()
	h, conn := connectOne(t, g, link(100*time.Millisecond, 0, 0.1), nil)
	h.Run(20 * time.Second)
	l, ok := h.Server.ConnStats(conn)
	require.True(t, ok)
	require.True(t, l.HasAcked)
	behind := h.Server.World().Tick().Sub(l.Acked)
	assert.GreaterOrEqual(t, behind, int32(5), "a round trip of 100 ms is 6 ticks")
	assert.LessOrEqual(t, behind, int32(12))
	assert.InDelta(t, 100*time.Millisecond, l.RTT, float64(40*time.Millisecond))
	assert.InDelta(t, 0.1, l.Loss, 0.06)

	ss, cs := h.Server.Stats(), h.Clients[0].Stats()
	assert.Equal(t, l.RTT, ss.LinkRTT, "the mean of one connection")
	assert.Equal(t, l.Loss, ss.LinkLoss)
	assert.InDelta(t, 100*time.Millisecond, cs.LinkRTT, float64(40*time.Millisecond))
	assert.InDelta(t, 0.1, cs.LinkLoss, 0.06)
	_, ok = h.Server.ConnStats(conn + 1)
	assert.False(t, ok)
}

// A client that stops reading while the server keeps sending is dropped,
// counted, and never costs more than the packet layer's caps: its
// reliable queue fills, and the server ends the connection before its
// timeout would.
func TestAClientThatStopsReadingIsDropped(t *testing.T) {
	g := newMessageGame()
	h, conn := connectOne(t, g, link(50*time.Millisecond, 0, 0), nil)
	h.Stall(0, time.Minute)
	msg := &Blob{N: 1000}
	start := h.Time.Now()
	maxQueued := 0
	for h.Server.Stats().Connections == 1 && h.Time.Now()-start < 10*time.Second {
		require.NoError(t, systems.SendToClients(h.Server.World(), systems.ToConn(conn), 0, msg), "the server drops the client before its queue refuses")
		if l, ok := h.Server.ConnStats(conn); ok {
			maxQueued = max(maxQueued, l.Link.QueuedBytes)
		}
		h.Run(16 * time.Millisecond)
	}
	st := h.Server.Stats()
	assert.Equal(t, 0, st.Connections)
	assert.Equal(t, uint64(1), st.Backlogged)
	assert.Equal(t, uint64(1), st.Dropped)
	assert.Zero(t, st.TimedOut, "dropped for its backlog, before the timeout")
	assert.Greater(t, maxQueued, 200<<10, "the queue's cap bit")
	assert.LessOrEqual(t, maxQueued, 256<<10, "the packet layer's default MaxQueuedBytes")
	assert.Less(t, h.Time.Now()-start, 5*time.Second)
}

// Packet sequences are 16 bits: a match of more than 65,536 packets on
// one connection goes on across their wrap, with no packet taken for a
// duplicate or a stale one, and snapshot acks still tracked.
func TestSequencesWrapOnALongConnection(t *testing.T) {
	g := newTestGame()
	h, conn := connectOne(t, g, link(30*time.Millisecond, 0, 0), func(o *harness.Options) { o.Step = 16 * time.Millisecond })
	for {
		l, ok := h.Server.ConnStats(conn)
		require.True(t, ok)
		if l.Link.PacketsSent > 70000 {
			break
		}
		h.Run(time.Minute)
	}
	l, _ := h.Server.ConnStats(conn)
	assert.Zero(t, l.Link.DuplicatePackets+l.Link.StalePackets+l.Link.Malformed)
	assert.Greater(t, l.Link.PacketsReceived, uint64(65536), "the client's packets wrapped too")
	assert.Zero(t, l.Link.PacketsLost)
	require.True(t, l.HasAcked)
	assert.LessOrEqual(t, h.Server.World().Tick().Sub(l.Acked), int32(6), "acks of snapshots still tracked after the wrap")
	st := h.Clients[0].Stats()
	assert.True(t, h.Clients[0].Connected())
	assert.Zero(t, st.BadPackets)
	assert.Zero(t, st.SnapshotsStale)
	assert.Zero(t, h.Server.Stats().BadPackets)
}

// A reject is followed at once by the close of the connection, so nothing
// can be resent: it travels in redundant packets, and a refused client
// learns why through loss instead of waiting for its timeout. Each copy is
// a packet of its own (a new sequence), so the client's packet layer does
// not drop the later ones as duplicates; the client acts on the first.
func TestRejectsReachClientsThroughLoss(t *testing.T) {
	g := newTestGame()
	lossy := transport.Conditions{Up: transport.LinkConfig{Latency: 20 * time.Millisecond},
		Down: transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 0.25, Duplicate: 0.1, Reorder: 0.1}}
	opts := g.options(12, lossy)
	opts.Server.MaxClients, opts.Server.MaxPending = 1, 16
	h, err := harness.New(opts)
	require.NoError(t, err)
	allKnow := func() bool {
		n := 0
		for _, c := range h.Clients {
			if refused(c) {
				n++
			}
		}
		return n == len(h.Clients)-1
	}
	require.True(t, h.RunUntil(allKnow, 2*time.Second), "every refused client knows why before its timeout")
	for _, c := range h.Clients {
		if refused(c) {
			assert.Equal(t, netsync.RejectFull, c.Stats().Reason)
		}
	}
	assert.Equal(t, uint64(11), h.Server.Stats().Refused)
}

// hostileFragment returns a packet of sequence seq carrying fragment 0 of
// count of reliable message id: well formed, but refused by the receive
// caps when count passes the fragments a message may have (64 by
// default) or id is not the next message missing.
func hostileFragment(seq, id uint16, count uint8) []byte {
	p := make([]byte, packet.HeaderSize+7+packet.FragmentSize)
	p[0] = 0x01 // version 1, no acks
	binary.LittleEndian.PutUint16(p[1:], seq)
	e := p[packet.HeaderSize:]
	e[0] = 2 // fragment
	binary.LittleEndian.PutUint16(e[1:], id)
	e[3], e[4] = 0, count
	binary.LittleEndian.PutUint16(e[5:], packet.FragmentSize)
	return p
}

// The packet layer's receive caps bite on the memory link too, counted at
// both endpoints: a fragment flood costs no reassembly memory and keeps
// no connection alive.
func TestFragmentFloodsAreRefusedAndCounted(t *testing.T) {
	g := newTestGame()
	opts := g.options(0, transport.Conditions{})
	opts.Server.Timeout = time.Second
	h, err := harness.New(opts)
	require.NoError(t, err)
	raw, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	newPeer(t, raw, h.Time).send(g.hello())
	h.Run(50 * time.Millisecond)
	conns := h.Server.Conns()
	require.Len(t, conns, 1)
	const flood = 200
	for i := range flood {
		if i%2 == 0 {
			require.NoError(t, raw.Send(hostileFragment(uint16(100+i), 0, 255)))
		} else {
			require.NoError(t, raw.Send(hostileFragment(uint16(100+i), 7, 64)))
		}
		if i%20 == 0 {
			h.Run(10 * time.Millisecond)
		}
	}
	h.Run(10 * time.Millisecond)
	l, ok := h.Server.ConnStats(conns[0])
	require.True(t, ok)
	assert.Equal(t, uint64(flood/2), l.Link.FragmentCap)
	assert.Equal(t, uint64(flood/2), l.Link.FragmentRefused)
	assert.Zero(t, l.Link.ReassemblyBytes, "no reassembly buffer for a refused fragment")
	assert.Zero(t, l.Link.HeldBytes)
	assert.Equal(t, uint64(flood), h.Server.Stats().PacketsRefused)
	h.Run(time.Second)
	assert.Equal(t, uint64(1), h.Server.Stats().TimedOut, "refused packets never refresh the timeout")

	// And at a client.
	now := &gw.VirtualTime{}
	net := transport.NewMemoryNetwork(now, 1)
	conn, server, err := net.Pair(transport.Conditions{})
	require.NoError(t, err)
	c, err := systems.NewClient(now, conn, g.game(), systems.ClientOptions{})
	require.NoError(t, err)
	for i := range flood {
		require.NoError(t, server.Send(hostileFragment(uint16(i), 0, 255)))
	}
	c.Update()
	assert.Equal(t, uint64(flood), c.Stats().PacketsRefused)
	assert.True(t, connecting(c))
}

// A client that keeps sending but stopped reading never acknowledges the
// reliable channel: the server drops it once the oldest reliable message
// has waited for the timeout, although its inputs keep arriving.
func TestAClientThatSendsButNeverReadsIsDropped(t *testing.T) {
	g := newMessageGame()
	opts := g.options(0, transport.Conditions{})
	opts.Server.Timeout = time.Second
	h, err := harness.New(opts)
	require.NoError(t, err)
	raw, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	deaf := newPeer(t, raw, h.Time)
	deaf.send(g.hello())
	h.Run(20 * time.Millisecond)
	conns := h.Server.Conns()
	require.Len(t, conns, 1)
	require.NoError(t, systems.SendToClients(h.Server.World(), systems.ToConn(conns[0]), 0, &Ordered{N: 1}))
	start := h.Time.Now()
	for h.Server.Stats().Connections == 1 && h.Time.Now()-start < 3*time.Second {
		deaf.send(protocol.AppendInputs(nil, (*codec.Schema)(g.schema), &protocol.InputBatch{ClientTime: 1,
			Heads: []components.InputHeader{{Tick: h.Server.World().Tick() + 2}}, Data: make([]byte, (*codec.Schema)(g.schema).InputSize())}))
		h.Run(16 * time.Millisecond)
	}
	st := h.Server.Stats()
	assert.Equal(t, 0, st.Connections)
	assert.Equal(t, uint64(1), st.Backlogged)
	assert.Zero(t, st.TimedOut, "its inputs kept arriving")
	assert.InDelta(t, time.Second, h.Time.Now()-start, float64(100*time.Millisecond), "dropped after the timeout")
	assert.Positive(t, st.InputsApplied)
}
