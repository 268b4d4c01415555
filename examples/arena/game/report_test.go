package game

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTickTimeIsTheMeanAndThe99thPercentile(t *testing.T) {
	assert.Nil(t, tickTime(nil))
	var ts []time.Duration
	for i := 100; i >= 1; i-- {
		ts = append(ts, time.Duration(i)*time.Microsecond)
	}
	assert.Equal(t, &TickTime{Mean: 50.5, P99: 99}, tickTime(ts))
	assert.Equal(t, &TickTime{Mean: 7, P99: 7}, tickTime([]time.Duration{7 * time.Microsecond}))
}

// The report names each client's rockets and ball switches as the issue
// asks: projectiles {predicted, matched, unmatched_removed,
// max_spawn_error} and ball {switched_to_predicted,
// switched_to_interpolated}, and the server's rockets; every predicted
// rocket matched or removed once the match settled.
func TestReportNamesProjectilesAndBallSwitches(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 15 * time.Second
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	b, err := json.Marshal(m.Run(nil))
	require.NoError(t, err)
	var r struct {
		Server struct {
			Rockets map[string]uint64 `json:"rockets"`
		} `json:"server"`
		Clients []struct {
			Projectiles map[string]float64 `json:"projectiles"`
			Ball        map[string]uint64  `json:"ball"`
		} `json:"clients"`
	}
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Positive(t, r.Server.Rockets["fired"])
	assert.Contains(t, r.Server.Rockets, "refused")
	var predicted, switched float64
	for i, c := range r.Clients {
		p := c.Projectiles
		for _, k := range []string{"predicted", "matched", "unmatched_removed", "max_spawn_error"} {
			assert.Containsf(t, p, k, "client %d", i+1)
		}
		assert.Equalf(t, p["predicted"], p["matched"]+p["unmatched_removed"], "client %d: matched or removed", i+1)
		assert.Zerof(t, p["pending"], "client %d", i+1)
		assert.Containsf(t, c.Ball, "switched_to_predicted", "client %d", i+1)
		assert.Containsf(t, c.Ball, "switched_to_interpolated", "client %d", i+1)
		predicted += p["predicted"]
		switched += float64(c.Ball["switched_to_predicted"])
	}
	assert.Positive(t, predicted, "the bots fired rockets")
	assert.Positive(t, switched, "a bot came near the ball")
}
