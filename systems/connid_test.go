package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/longtest"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// 5,000 connections come and go while one honest client stays: no two
// live connections share an ID, none gets ID 0, and none of them ever
// owns the honest client's ghost.
func TestConnectionIDsAreNeverSharedOrZero(t *testing.T) {
	cycleConnections(t, 5)
}

// The same for 70,000 connections, past 65,536 (IDs were 16 bits once). Long
// tier (17 s); the wrap of the 32-bit counter itself is tested on the
// counter (TestNewConnIDSkipsZeroAndLiveIDsAcrossTheWrap).
func TestSeventyThousandConnectionIDsAreNeverSharedOrZero(t *testing.T) {
	longtest.Skip(t)
	cycleConnections(t, 70)
}

// cycleConnections connects and disconnects rounds×1000 connections, a
// thousand at a time, beside one honest client.
func cycleConnections(t *testing.T, rounds int) {
	g := newTestGame()
	opts := g.options(1, transport.Conditions{})
	opts.Server.MaxClients = 4096
	h, err := harness.New(opts)
	require.NoError(t, err)
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Connections == 1 }, time.Second))
	honest := h.Server.Conns()[0]
	honestGhost, ok := h.Server.Ghosts().Entity(1)
	require.True(t, ok)

	helloPacket := g.hello()
	bye := protocol.AppendReject(nil, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectClosed})
	seen := map[components.ConnID]bool{honest: true}
	const perRound = 1000
	conns := make([]*peer, perRound)
	for round := 0; round < rounds; round++ {
		for i := range conns {
			raw, err := h.Net.Dial("server", transport.Conditions{})
			require.NoError(t, err)
			conns[i] = newPeer(t, raw, h.Time)
			conns[i].send(helloPacket)
		}
		// 16 are welcomed a tick (joinsPerTick): a thousand in 63 ticks.
		before := h.Server.Stats().Accepted
		h.Step()
		require.LessOrEqual(t, h.Server.Stats().Accepted-before, uint64(16), "round %d: 16 welcomed in a tick at most", round)
		require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Connections == perRound+1 }, 2*time.Second), "round %d", round)
		require.Positive(t, h.Server.Stats().JoinsDeferred, "the others waited for later ticks, counted")
		live := map[components.ConnID]bool{}
		for _, id := range h.Server.Conns() {
			require.NotZero(t, id, "round %d: a connection got ID 0", round)
			require.False(t, live[id], "round %d: two live connections share ID %d", round, id)
			live[id] = true
		}
		require.Len(t, live, perRound+1, "round %d", round)
		for i, c := range conns {
			var welcome protocol.Welcome
			got := false
			for {
				p, ok := c.receive()
				if !ok {
					break
				}
				if typ, _ := protocol.PeekType(p); typ == protocol.MsgWelcome {
					require.NoError(t, protocol.DecodeWelcome(p, &welcome))
					got = true
				}
			}
			require.True(t, got, "round %d conn %d: no welcome", round, i)
			require.False(t, seen[welcome.Conn], "round %d: ID %d given out again", round, welcome.Conn)
			seen[welcome.Conn] = true
			c.send(bye)
		}
		h.Step()
		require.Equal(t, []components.ConnID{honest}, h.Server.Conns(), "round %d: every cycled connection is gone", round)
		owned := (*ghostreg.ServerRegister)(h.Server.Ghosts()).Owned(nil, honest)
		require.Equal(t, []ecs.Entity{honestGhost}, owned, "round %d: the honest client still owns its ghost, alone", round)
		for _, c := range conns {
			_ = c.pc.Close()
		}
	}
	assert.Len(t, seen, rounds*perRound+1)
	assert.Equal(t, uint64(rounds*perRound+1), h.Server.Stats().Accepted)
}
