package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// A server that closes tells its clients at once: they end disconnected
// with the reason closed within one trip of the link, long before their
// timeout, and the game's OnDisconnect removes every player.
func TestServerCloseTellsEveryClient(t *testing.T) {
	g := newTestGame()
	opts := g.options(3, link(100*time.Millisecond, 0, 0))
	left := 0
	opts.Game.OnDisconnect = func(w *gw.World, _ components.ConnID, owned []ecs.Entity) {
		for _, e := range owned {
			w.Arche().RemoveEntity(e)
			left++
		}
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(time.Second)
	for i, c := range h.Clients {
		require.Truef(t, c.Connected(), "client %d", i)
	}
	h.Server.Close()
	h.Server.Close() // idempotent
	assert.Equal(t, 3, left, "every player went through OnDisconnect")
	assert.Zero(t, h.Server.Stats().Connections)
	ticks := h.Server.Stats().Ticks
	h.Run(100 * time.Millisecond) // one way of the link is 50 ms
	assert.Equal(t, ticks, h.Server.Stats().Ticks, "a closed server runs no tick")
	for i, c := range h.Clients {
		assert.Falsef(t, c.Connected(), "client %d", i)
		var ce *systems.ConnError
		require.ErrorAsf(t, c.Err(), &ce, "client %d", i)
		assert.Equal(t, netsync.RejectClosed, ce.Reason)
		assert.False(t, ce.Local)
		assert.Equal(t, "ghostwire: disconnected by the server: closed", ce.Error())
	}
}

// A client that leaves tells the server at once: its connection and its
// player are gone within one trip, not after the server's timeout.
func TestClientCloseLeavesAtOnce(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(2, link(100*time.Millisecond, 0, 0)))
	require.NoError(t, err)
	h.Run(time.Second)
	require.Equal(t, 2, h.Server.Stats().Connections)
	h.Clients[0].Close()
	h.Clients[0].Close() // idempotent
	assert.False(t, h.Clients[0].Connected())
	assert.EqualError(t, h.Clients[0].Err(), "ghostwire: disconnected: closed: the client left")
	h.Run(100 * time.Millisecond)
	st := h.Server.Stats()
	assert.Equal(t, 1, st.Connections)
	assert.Equal(t, uint64(1), st.Dropped)
	assert.Zero(t, st.TimedOut, "the server did not wait for its timeout")
	assert.True(t, h.Clients[1].Connected(), "the other client plays on")
}
