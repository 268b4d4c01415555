package systems_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// The server's determinism check on a correct game finds nothing and
// changes nothing: the same match with and without it ends with the same
// counters and every client on the server's state.
func TestSyncTestOnACorrectServerFindsNothing(t *testing.T) {
	g := newTestGame()
	run := func(depth int) (*harness.Harness, systems.ServerStats) {
		opts := g.options(3, link(100*time.Millisecond, 10*time.Millisecond, 0.05))
		opts.Server.SyncTest = depth
		h, err := harness.New(opts)
		require.NoError(t, err)
		h.Run(3 * time.Second)
		return h, h.Server.Stats()
	}
	h, st := run(8)
	assert.NoError(t, h.Server.Stats().FirstDesync)
	assert.Zero(t, st.Desyncs)
	assert.Greater(t, st.SyncTestChecks, uint64(8*150), "most of 180 ticks replay 8")
	for i := range h.Clients {
		assert.NoErrorf(t, h.CheckOwnState(i), "client %d", i)
	}
	_, plain := run(0)
	assert.Zero(t, plain.SyncTestChecks)
	st.SyncTestChecks = 0
	assert.Equal(t, plain, st, "the check changes nothing")
}

// Hidden state in the server's prediction is named, component and field.
func TestSyncTestOnTheServerNamesHiddenState(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	opts.Server.SyncTest = 4
	opts.SetupServer = func(s *systems.Server) error {
		s.Schedule().Add(gw.StagePrediction, hiddenState())
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	var d *gw.DesyncError
	ok := errors.As(h.Server.Stats().FirstDesync, &d)
	require.True(t, ok, "got %v", h.Server.Stats().FirstDesync)
	assert.Equal(t, "systems_test.Pos", d.Component.String())
	assert.Equal(t, "X", d.Field)
	assert.Greater(t, h.Server.Stats().Desyncs, uint64(0))
}

// A server-only system that writes replicated state between ticks (a
// respawn) is not a desync on the server, and players joining and leaving
// mid-match are not either.
func TestSyncTestOnTheServerAcceptsSimulationAndConnections(t *testing.T) {
	g := newTestGame()
	opts := g.options(2, link(80*time.Millisecond, 0, 0.02))
	opts.Server.SyncTest = 8
	movers := generic.NewFilter1[Pos]().With(generic.T[components.Predicted]())
	respawns := 0
	opts.SetupServer = func(s *systems.Server) error {
		s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
			if uint32(w.Tick())%45 != 0 {
				return
			}
			respawns++
			q := movers.Query(w.Arche())
			for q.Next() {
				q.Get().X = 0
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(time.Second)
	require.NoError(t, h.AddClient(harness.ClientSpec{Link: link(60*time.Millisecond, 0, 0)}))
	h.Run(2 * time.Second)
	st := h.Server.Stats()
	assert.Equal(t, 3, st.Connections)
	assert.Greater(t, respawns, 3)
	assert.NoError(t, h.Server.Stats().FirstDesync)
	assert.Greater(t, st.SyncTestChecks, uint64(8*100))
}

func TestServerSyncTestOptionIsChecked(t *testing.T) {
	g := newTestGame()
	opts := g.options(0, link(0, 0, 0))
	opts.Server.SyncTest = 1025
	_, err := harness.New(opts)
	assert.ErrorContains(t, err, "sync test rollback 1025 outside 0..1024")
	opts.Server.SyncTest = -1
	_, err = harness.New(opts)
	assert.ErrorContains(t, err, "sync test rollback -1 outside 0..1024")
}
