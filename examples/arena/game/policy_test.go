package game

import (
	"fmt"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// playerState is every replicated value of one player, compared bit for
// bit (as formatted hex) across runs.
type playerState struct {
	Position Position
	Velocity Velocity
	Facing   Facing
	Health   Health
}

// policyOutcome is what must not depend on the rollback policy.
type policyOutcome struct {
	Mispredictions []uint64
	By             []map[string]uint64
	Server         map[components.GhostID]string
	Own            []string
}

func endState(m *Match) policyOutcome {
	var o policyOutcome
	players := generic.NewFilter5[components.Ghost, Position, Velocity, Facing, Health]()
	state := func(p *Position, v *Velocity, f *Facing, h *Health) string {
		return fmt.Sprintf("%x", playerState{*p, *v, *f, *h})
	}
	o.Server = map[components.GhostID]string{}
	q := players.Query(m.Harness.Server.World().Arche())
	for q.Next() {
		g, p, v, f, h := q.Get()
		o.Server[g.ID] = state(p, v, f, h)
	}
	for _, c := range m.Harness.Clients {
		st := c.Stats()
		o.Mispredictions = append(o.Mispredictions, st.Mispredictions)
		o.By = append(o.By, st.MispredictionsBy)
		own := ""
		q := players.With(generic.T[components.Predicted]()).Query(c.World().Arche())
		for q.Next() {
			_, p, v, f, h := q.Get()
			own = state(p, v, f, h)
		}
		o.Own = append(o.Own, own)
	}
	return o
}

// TestRollbackPoliciesEndTheSameMatches: a lone client (its bot's input
// depends only on its own predicted state) plays the same match under
// both policies: the same mispredictions (none) and bit-identical end
// states. With several clients the bots aim at remote players drawn where
// interpolation puts them, which rollback does not restore, so the inputs
// themselves depend on when replays happen; the test game covers several
// clients (systems.TestRollbackPoliciesEndTheSameMatches).
func TestRollbackPoliciesEndTheSameMatches(t *testing.T) {
	for _, rtt := range []time.Duration{100 * time.Millisecond, 250 * time.Millisecond} {
		for seed := uint64(1); seed <= 8; seed++ {
			var out [2]policyOutcome
			for _, p := range []RollbackPolicy{RollbackOnMismatch, RollbackAlways} {
				cfg := DefaultConfig()
				cfg.Clients, cfg.Duration, cfg.RTT, cfg.Seed, cfg.Rollback = 1, 6*time.Second, rtt, seed, p
				m, err := NewMatch(cfg)
				require.NoError(t, err)
				r := m.Run(nil)
				require.True(t, r.Converged)
				out[p] = endState(m)
			}
			assert.Equalf(t, []uint64{0}, out[RollbackAlways].Mispredictions, "RTT %v, seed %d: a lone client never mispredicts", rtt, seed)
			assert.Equalf(t, out[0], out[1], "RTT %v, seed %d: mismatch then always", rtt, seed)
		}
	}
}

// TestArenaPredictionPassesTheSyncTest runs the determinism check on a
// real arena client: every tick rolled back 8 ticks and replayed, with
// bots moving, shooting and respawning, finds nothing.
func TestArenaPredictionPassesTheSyncTest(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 1, 5*time.Second
	cfg.Client = func(_ int, spec *harness.ClientSpec) { spec.Options.SyncTest = 8 }
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	r := m.Run(nil)
	c := m.Harness.Clients[0]
	assert.NoError(t, c.Stats().FirstDesync)
	assert.Greater(t, c.Stats().SyncTestChecks, uint64(8*200))
	assert.True(t, r.Converged)
	assert.NoError(t, m.Harness.CheckOwnState(0))
}

// TestArenaServerPassesTheSyncTest runs the determinism check on the
// arena's server world with four clients that shove, shoot, fire rockets
// (spawned, refused and despawned in the prediction) and respawn each
// other, and push the ball: nothing is found, and the match is the one
// played without the check (the same report outside wall time).
func TestArenaServerPassesTheSyncTest(t *testing.T) {
	play := func(depth int) (*Match, *Report) {
		cfg := DefaultConfig()
		cfg.Clients, cfg.Duration, cfg.SyncTest = 4, 10*time.Second, depth
		m, err := NewMatch(cfg)
		require.NoError(t, err)
		r := m.Run(nil)
		r.Wall = WallReport{}
		return m, r
	}
	m, checked := play(8)
	st := m.Harness.Server.Stats()
	assert.NoError(t, m.Harness.Server.Stats().FirstDesync)
	assert.Zero(t, st.Desyncs)
	// A hit, a respawn or a rocket's despawn starts the windows again.
	assert.Greater(t, st.SyncTestChecks, uint64(8*350), "most of the ticks are checked 8 deep")
	assert.Greater(t, checked.Server.Shots.Hits, uint64(3), "with hits applied outside the prediction")
	_, plain := play(0)
	assert.Equal(t, plain, checked)
}

// TestSyncTestLeavesTheMatchAlone: the determinism check replays every
// tick, so its client's match is the same with and without it only when
// replays shove against the same remote players as the first run did
// (their server states by tick, not what is drawn at the time).
func TestSyncTestLeavesTheMatchAlone(t *testing.T) {
	play := func(depth int) (*Match, *Report) {
		cfg := DefaultConfig()
		cfg.Clients, cfg.Duration = 4, 30*time.Second
		cfg.Client = func(i int, spec *harness.ClientSpec) {
			if i == 0 {
				spec.Options.SyncTest = depth
			}
		}
		m, err := NewMatch(cfg)
		require.NoError(t, err)
		return m, m.Run(nil)
	}
	_, plain := play(0)
	m, checked := play(8)
	assert.NoError(t, m.Harness.Clients[0].Stats().FirstDesync)
	var shoved uint64
	for i := range plain.Clients {
		t.Logf("client %d: %d mispredictions, %d with the check on client 1", i+1, plain.Clients[i].Mispredictions, checked.Clients[i].Mispredictions)
		assert.Equalf(t, plain.Clients[i].Mispredictions, checked.Clients[i].Mispredictions, "client %d", i+1)
		shoved += plain.Clients[i].Mispredictions
	}
	assert.Positive(t, shoved, "the players must shove each other for the test to mean anything")
}
