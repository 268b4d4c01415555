package game

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/systems"
)

// Under 10 % loss, duplication and reordering each way, every judged shot
// is confirmed to its shooter's client exactly once, in the order of the
// shots, and the hit markers match the server's hits.
func TestEveryVerdictIsConfirmedOnceInOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Loss, cfg.Dup, cfg.Reorder = 4, 20*time.Second, 10, 10, 10
	m, r := run(t, cfg)
	byConn := m.Shots.Stats.ByConn
	var judged uint64
	for i, ps := range m.Players {
		cs := byConn[ownConn(t, m.Harness.Clients[i])]
		require.NotNil(t, cs, "client %d fired", i)
		judged += cs.Judged
		assert.Equal(t, cs.Judged, ps.Confirmations, "client %d: every verdict once", i)
		assert.Equal(t, cs.Hits, ps.ConfirmedHits, "client %d: its hit markers", i)
		assert.Zero(t, ps.ConfirmsOutOfOrder, "client %d", i)
		assert.Equal(t, cs.Hits, r.Clients[i].ConfirmedHits)
	}
	assert.Greater(t, judged, uint64(100))
	var dups uint64
	for _, c := range m.Harness.Clients {
		st := c.Stats()
		dups += st.ConfirmsDuplicate
		assert.Zero(t, st.ConfirmsMissed)
	}
	assert.Positive(t, dups, "the resent and duplicated copies were dropped")
	assert.Equal(t, judged, m.Harness.Server.Stats().Confirms)
	assert.Zero(t, m.Harness.Server.Stats().ConfirmsDropped)
}

// ownConn returns the connection of a client.
func ownConn(t *testing.T, c *systems.Client) components.ConnID {
	conn, ok := c.Conn()
	require.True(t, ok, "the client was welcomed")
	return conn
}
