package systems_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// A connection that sends only junk after its hello is timed out: junk is
// counted, and never refreshes the connection's timeout.
func TestJunkNeverKeepsAConnectionAlive(t *testing.T) {
	g := newTestGame()
	opts := g.options(0, transport.Conditions{})
	opts.Server.Timeout = time.Second
	h, err := harness.New(opts)
	require.NoError(t, err)
	conn, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	p := newPeer(t, conn, h.Time)
	p.send(g.hello())
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Connections == 1 }, time.Second))

	junk := [][]byte{{0xff}, {protocol.ProtocolVersion, byte(protocol.MsgInputs), 1, 2, 3}, {protocol.ProtocolVersion, byte(protocol.MsgHello)}}
	for i := 0; i < 30 && h.Server.Stats().Connections == 1; i++ {
		// Junk below the packet layer, and junk messages in good packets.
		if i%2 == 0 {
			require.NoError(t, conn.Send(junk[i%len(junk)]))
		} else {
			p.send(junk[i%len(junk)])
		}
		h.Run(100 * time.Millisecond)
	}
	st := h.Server.Stats()
	assert.Equal(t, 0, st.Connections, "dropped although junk kept arriving")
	assert.Equal(t, uint64(1), st.TimedOut)
	assert.GreaterOrEqual(t, st.BadPackets, uint64(10), "every junk packet is counted")
}

// 20,000 connections that never say hello: the waiting table stays at its
// cap, each eviction is counted, a server update stays cheap, and an
// honest client dialling after the flood still connects.
func TestSilentConnectionFloodIsBounded(t *testing.T) {
	g := newTestGame()
	opts := g.options(0, transport.Conditions{})
	opts.Server.MaxPending = 256
	h, err := harness.New(opts)
	require.NoError(t, err)
	for i := 0; i < 20000; i++ {
		_, err := h.Net.Dial("server", transport.Conditions{})
		require.NoError(t, err)
		if i%1000 == 999 {
			h.Step()
			st := h.Server.Stats()
			require.LessOrEqual(t, st.Pending, 256, "after %d dials", i+1)
		}
	}
	st := h.Server.Stats()
	assert.Equal(t, 256, st.Pending)
	assert.Equal(t, uint64(20000-256), st.PendingEvicted)
	require.NoError(t, h.AddClient(harness.ClientSpec{Options: g.options(1, transport.Conditions{}).Clients[0].Options}))
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Connections == 1 }, time.Second), "the honest client connects")
}
