package game

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverOwnedMatch plays a minute at 150 ms and 5 % loss, the issue's
// link, with Health server-owned or, for comparison, predicted.
func serverOwnedMatch(t *testing.T, healthPredicted bool) *Report {
	t.Helper()
	cfg := DefaultConfig()
	cfg.RTT, cfg.Loss, cfg.Duration = 150*time.Millisecond, 5, time.Minute
	cfg.healthPredicted = healthPredicted
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	return m.Run(nil)
}

// TestServerOwnedHealthNeverMispredicts: with Health server-owned, no
// client mispredicts it over a minute of hits, and the rollbacks fall by
// every one Health caused but the deaths. A death still costs one: the
// dead stop on the server the tick after the hit, and the client, which
// predicted them running, learns it only from the snapshot (the
// misprediction is then the Position, Velocity or Facing of the next
// one); a hit that does not kill changes nothing the prediction computes.
func TestServerOwnedHealthNeverMispredicts(t *testing.T) {
	before, after := serverOwnedMatch(t, true), serverOwnedMatch(t, false)
	require.Greater(t, after.Server.Shots.Hits, uint64(100), "hits must land for the test to mean anything")
	require.Greater(t, after.Server.Shots.Kills, uint64(20))
	var rollbacksBefore, rollbacksAfter, health uint64
	for i, c := range after.Clients {
		assert.NotContainsf(t, c.MispredictionsBy, "game.Health", "client %d", c.ID)
		assert.Truef(t, c.Converged, "client %d: %s", c.ID, c.Divergence)
		b := before.Clients[i]
		rollbacksBefore += b.Rollbacks
		rollbacksAfter += c.Rollbacks
		health += b.MispredictionsBy["game.Health"]
		t.Logf("client %d: %d rollbacks with Health predicted (%d of Health), %d server-owned",
			c.ID, b.Rollbacks, b.MispredictionsBy["game.Health"], c.Rollbacks)
	}
	kills := after.Server.Shots.Kills + after.Server.Rockets.Kills
	t.Logf("all clients: %d rollbacks, %d of Health, %d deaths (%d by rockets); %d server-owned", rollbacksBefore, health, kills,
		after.Server.Rockets.Kills, rollbacksAfter)
	require.Positive(t, health)
	require.Positive(t, after.Server.Rockets.Hits, "splash damage lands too")
	assert.Equal(t, before.Server.Shots.Kills, after.Server.Shots.Kills, "the same match: the server decides alike")
	assert.Equal(t, before.Server.Rockets, after.Server.Rockets)
	assert.LessOrEqual(t, rollbacksAfter, rollbacksBefore-health+kills)
}

// The report's mispredictions_by_component never names Health, which
// hits and rockets' splashes change.
func TestReportNamesNoHealthMisprediction(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 10 * time.Second
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	r := m.Run(nil)
	require.Positive(t, r.Server.Shots.Hits)
	require.Positive(t, r.Server.Rockets.Hits, "rockets' splash damage, the server's too")
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var decoded struct {
		Clients []struct {
			By map[string]uint64 `json:"mispredictions_by_component"`
		} `json:"clients"`
	}
	require.NoError(t, json.Unmarshal(b, &decoded))
	named := 0
	for _, c := range decoded.Clients {
		assert.NotContains(t, c.By, "game.Health")
		named += len(c.By)
	}
	assert.Positive(t, named, "the clients mispredict other components: the key is there")
}
