package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// 200 server ghosts at rest and two players over links that lose 10 %,
// duplicate and reorder, with snapshots of 300 bytes (about 20 ghosts):
// every ghost reaches both clients with the server's state though no
// snapshot holds them all (counted in GhostsDeferred), and ghosts the
// server despawns disappear from both clients, though the despawn records
// are lost now and then: they are resent until acknowledged.
func TestSnapshotsWithinABudgetReachEveryGhostAndDespawnSurvivesLoss(t *testing.T) {
	const crates = 200
	g := newTestGame()
	lk := transport.LinkConfig{Latency: 30 * time.Millisecond, Loss: 0.1, Duplicate: 0.05, Reorder: 0.05}
	opts := g.options(2, transport.Conditions{Up: lk, Down: lk})
	opts.Server.SnapshotBytes = 300
	var es []ecs.Entity
	crate := map[components.GhostID]bool{}
	setup := opts.SetupServer
	opts.SetupServer = func(s *systems.Server) error {
		m := generic.NewMap2[Pos, Speed](s.World().Arche())
		for i := range crates {
			e := m.NewWith(&Pos{X: float32(i) - 99.5}, &Speed{})
			id, err := s.Ghosts().Spawn(e, g.player, 0)
			if err != nil {
				return err
			}
			crate[id] = true
			es = append(es, e)
		}
		return setup(s)
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(8 * time.Second)

	assert.Positive(t, h.Server.Stats().GhostsDeferred, "no snapshot holds every ghost")
	check := func(when string, want int) {
		t.Helper()
		for c := range h.Clients {
			n := 0
			for id := components.GhostID(1); id <= crates+2; id++ {
				sp, cp, ok := positions(h, c, id)
				if _, onServer := h.Server.Ghosts().Entity(id); !onServer {
					_, onClient := h.Clients[c].Ghosts().Entity(id)
					assert.Falsef(t, onClient, "%s: client %d still has ghost %d, despawned on the server", when, c, id)
					continue
				}
				if assert.Truef(t, ok, "%s: client %d lacks ghost %d", when, c, id) && crate[id] {
					assert.Equalf(t, sp, cp, "%s: client %d ghost %d at rest: the server's state", when, c, id)
				}
				n++
			}
			assert.Equalf(t, want, n, "%s: client %d ghosts", when, c)
		}
	}
	check("all sent", crates+2)

	for _, e := range es[:50] {
		require.True(t, h.Server.Ghosts().Despawn(e))
		h.Server.World().Arche().RemoveEntity(e)
	}
	h.Run(3 * time.Second)
	check("50 despawned", crates+2-50)
}
