package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// The server spawns three ghosts of the player's own type at its start
// (Game.OnStart), before any player: ghost 1 is not a player, and a client finds its own through
// Player, the ghost OnConnect spawned for its connection, as the server
// does through Server.Player and ConnStats.Player. Once the server
// despawns it, Player says so.
func TestPlayerIsTheGhostOnConnectSpawned(t *testing.T) {
	g := newTestGame()
	opts := g.options(2, link(60*time.Millisecond, 0, 0))
	opts.Game.OnStart = func(s *systems.Server) error {
		m := generic.NewMap2[Pos, Speed](s.World().Arche())
		for i := range 3 {
			if _, err := s.Ghosts().Spawn(m.NewWith(&Pos{X: float32(i)}, &Speed{}), g.player, 0); err != nil {
				return err
			}
		}
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	for i, c := range h.Clients {
		_, ok := c.Player()
		assert.False(t, ok, "client %d: no player before the welcome", i)
		_, ok = c.Conn()
		assert.False(t, ok, "client %d: no connection ID before the welcome", i)
	}
	h.Run(time.Second)

	ghosts := generic.NewMap[components.Ghost](h.Server.World().Arche())
	for i, c := range h.Clients {
		conn, ok := c.Conn()
		require.True(t, ok)
		e, ok := c.Player()
		require.True(t, ok, "client %d has its player", i)
		own := generic.NewMap[components.Ghost](c.World().Arche())
		g := own.Get(e)
		assert.Equal(t, conn, g.Owner, "client %d: its player is its own", i)
		assert.Greater(t, g.ID, components.GhostID(3), "client %d: the crates came first", i)

		se, ok := h.Server.Player(conn)
		require.True(t, ok)
		assert.Equal(t, g.ID, ghosts.Get(se).ID)
		st, ok := h.Server.ConnStats(conn)
		require.True(t, ok)
		assert.Equal(t, g.ID, st.Player)
		assert.Equal(t, conn, st.Conn)
	}
	assert.ElementsMatch(t, h.Server.Conns(), []components.ConnID{1, 2})

	conn, _ := h.Clients[0].Conn()
	se, _ := h.Server.Player(conn)
	require.True(t, h.Server.Ghosts().Despawn(se))
	h.Run(time.Second)
	_, ok := h.Server.Player(conn)
	assert.False(t, ok, "the server despawned it")
	_, ok = h.Clients[0].Player()
	assert.False(t, ok, "the client despawned it")
	_, ok = h.Clients[1].Player()
	assert.True(t, ok, "the other client keeps its own")
}
