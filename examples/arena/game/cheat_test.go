package game

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// honestRate returns the hit rate of the honest clients' judged shots.
func honestRate(t *testing.T, m *Match) (rate float64, judged uint64) {
	var hits uint64
	for i, ps := range m.Players {
		if ps.Cheat != CheatNone {
			continue
		}
		cs := m.Shots.Stats.ByConn[ownConn(t, m.Harness.Clients[i])]
		require.NotNil(t, cs)
		judged += cs.Judged
		hits += cs.Hits
	}
	return float64(hits) / float64(judged), judged
}

// Backtracking cheaters claim a view 200 ms older than the one they
// showed and aim where their targets stood then: at 0 and 100 ms every
// such shot is refused as implausible, none hits.
func TestBacktrackingGainsNothing(t *testing.T) {
	for _, rtt := range []time.Duration{0, 100 * time.Millisecond} {
		t.Run(fmt.Sprint(rtt), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Clients, cfg.Duration, cfg.RTT, cfg.Cheaters, cfg.Cheat = 4, 20*time.Second, rtt, 2, CheatBacktrack
			if rtt == 0 {
				cfg.Jitter = 0
			}
			m, r := run(t, cfg)
			var shots uint64
			for _, c := range r.Clients[2:] {
				assert.Equal(t, CheatBacktrack, c.Cheat)
				assert.Zero(t, c.CheatHits, "client %d", c.ID)
				assert.Zero(t, c.ConfirmedHits, "client %d: every shot of it backtracked", c.ID)
				shots += c.CheatShots
			}
			assert.Greater(t, shots, uint64(20))
			assert.GreaterOrEqual(t, r.Server.Shots.Verdicts["view_implausible"], shots, "refused for the view")
			rate, _ := honestRate(t, m)
			assert.GreaterOrEqual(t, rate, 0.99)
		})
	}
}

// The arena with every cheat at 100 ms: the cheaters gain no hit by
// cheating, every cheat is refused with its rule's reason, and the honest
// players' hit rate is what it is without cheaters.
func TestCheatersGainNothing(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT = 8, 30*time.Second, 100*time.Millisecond
	clean, _ := run(t, cfg)
	cleanRate, _ := honestRate(t, clean)
	cfg.Cheaters, cfg.Cheat = 4, CheatAll
	m, r := run(t, cfg)
	cheats := map[string]uint64{}
	for _, c := range r.Clients {
		if c.Cheat == "none" {
			assert.Zero(t, c.CheatShots)
			continue
		}
		cheats[c.Cheat] += c.CheatShots
		assert.Zero(t, c.CheatHits, "client %d cheats by %s", c.ID, c.Cheat)
	}
	t.Logf("cheating shots %v; verdicts %v", cheats, r.Server.Shots.Verdicts)
	for _, k := range cheats {
		assert.Positive(t, k)
	}
	assert.Len(t, cheats, 4)
	v := r.Server.Shots.Verdicts
	assert.Positive(t, v["view_implausible"], "backtrack")
	assert.Positive(t, v["fire_rate"], "firerate")
	assert.Positive(t, v["shooter_dead"], "deadshot")
	assert.Positive(t, v["occluded"]+v["origin_mismatch"], "origin")
	rate, judged := honestRate(t, m)
	t.Logf("honest hit rate %.4f over %d shots; %.4f without cheaters", rate, judged, cleanRate)
	assert.GreaterOrEqual(t, rate, 0.99)
	assert.InDelta(t, cleanRate, rate, 0.01)
}

func TestCheatFlagsAreValidated(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Cheaters = 5
	assert.ErrorContains(t, cfg.Validate(), "-cheaters 5: allowed range is 0..4")
	cfg.Cheaters, cfg.Cheat = 1, "wallhack"
	assert.ErrorContains(t, cfg.Validate(), "-cheat wallhack: allowed range is backtrack|origin|firerate|deadshot|all")
	cfg.Cheat = CheatAll
	assert.NoError(t, cfg.Validate())
	assert.Equal(t, []string{"", "", "", CheatBacktrack}, []string{cfg.cheatOf(0), cfg.cheatOf(1), cfg.cheatOf(2), cfg.cheatOf(3)})
}
