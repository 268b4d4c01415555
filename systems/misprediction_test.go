package systems_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// misprediction is one call of OnMisprediction.
type misprediction struct {
	Tick  gw.Tick
	Ghost components.GhostID
	Diff  netsync.FieldDiff
}

// mispredictions runs opts for 3 seconds and returns what client 0's
// OnMisprediction saw and its stats.
func mispredictions(t *testing.T, opts harness.Options) ([]misprediction, systems.ClientStats) {
	t.Helper()
	var seen []misprediction
	opts.Clients[0].Options.OnMisprediction = func(tick gw.Tick, ghost components.GhostID, diff netsync.FieldDiff) {
		seen = append(seen, misprediction{tick, ghost, diff})
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	return seen, h.Clients[0].Stats()
}

// forgetOnClient makes the game of opts a game whose client forgets the
// move system: the server adds it to its own schedule only, the mistake a
// Game's Prediction rules out.
func forgetOnClient(g *testGame, opts *harness.Options) {
	opts.Game.Prediction = nil
	opts.SetupServer = func(s *systems.Server) error {
		s.Schedule().Add(gw.StagePrediction, g.move())
		return nil
	}
}

func TestForgottenPredictionSystemIsNamed(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	forgetOnClient(g, &opts)
	var logs bytes.Buffer
	opts.Clients[0].Options.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	seen, st := mispredictions(t, opts)
	require.NotEmpty(t, seen)
	m := seen[0]
	assert.Equal(t, components.GhostID(1), m.Ghost)
	assert.Equal(t, "systems_test.Pos", m.Diff.Component)
	assert.Equal(t, "X", m.Diff.Field)
	predicted, server := m.Diff.Values()
	assert.NotEqual(t, predicted, server)
	assert.Contains(t, m.Diff.String(), "systems_test.Pos.X")
	assert.Equal(t, map[string]uint64{"systems_test.Pos": uint64(len(seen))}, st.MispredictionsBy)
	assert.Equal(t, st.Mispredictions, uint64(len(seen)), "one own ghost: one misprediction per snapshot")
	assert.Contains(t, logs.String(), "component=systems_test.Pos field=X predicted="+predicted+" server="+server)
}

func TestCheckOwnStateNamesTheDifference(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	forgetOnClient(g, &opts)
	h, err := harness.New(opts)
	require.NoError(t, err)
	assert.EqualError(t, h.CheckOwnState(0), "harness: client 0 owns no ghost")
	h.Run(2 * time.Second)
	err = h.CheckOwnState(0)
	require.Error(t, err)
	assert.Regexp(t, `^harness: client 0 ghost 1 at tick \d+: systems_test.Pos.X predicted -?[0-9.]+, server -?[0-9.]+$`, err.Error())
}

func TestServerOnlyWriteOfAReplicatedFieldIsNamed(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	speeds := generic.NewFilter1[Speed]()
	opts.SetupServer = func(s *systems.Server) error {
		// Written only on the server: no client predicts it.
		s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
			if w.Tick()%90 != 0 {
				return
			}
			q := speeds.Query(w.Arche())
			for q.Next() {
				q.Get().V++
			}
		}))
		return nil
	}
	seen, st := mispredictions(t, opts)
	require.NotEmpty(t, seen)
	assert.Equal(t, "systems_test.Speed", seen[0].Diff.Component)
	assert.Equal(t, "V", seen[0].Diff.Field)
	assert.Greater(t, st.MispredictionsBy["systems_test.Speed"], uint64(0))
	assert.Equal(t, st.Mispredictions, st.Rollbacks, "each misprediction is corrected by a rollback")
}

func TestCleanMatchHasNoMispredictionsBy(t *testing.T) {
	g := newTestGame()
	seen, st := mispredictions(t, g.options(1, link(100*time.Millisecond, 0, 0)))
	assert.Empty(t, seen)
	assert.Nil(t, st.MispredictionsBy)
}

// hiddenState is a prediction system with state outside the world (a step
// counter a replay does not restore): every 97th run it moves every
// predicted Pos, so a replay of that tick differs from the first run.
func hiddenState() gw.System {
	movers := generic.NewFilter1[Pos]().With(generic.T[components.Predicted]())
	steps := 0
	return gw.SystemFunc(func(w *gw.World) {
		steps++
		if steps%97 != 0 {
			return
		}
		q := movers.Query(w.Arche())
		for q.Next() {
			q.Get().X += 1
		}
	})
}

func TestSyncTestOnTheClientNamesHiddenState(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	opts.Clients[0].Options.SyncTest = 4
	opts.SetupClient = func(_ int, c *systems.Client) error {
		c.Schedule().Add(gw.StagePrediction, hiddenState())
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	c := h.Clients[0]
	var d *gw.DesyncError
	ok := errors.As(c.Stats().FirstDesync, &d)
	require.True(t, ok, "got %v", c.Stats().FirstDesync)
	assert.Equal(t, "systems_test.Pos", d.Component.String())
	assert.Equal(t, "X", d.Field)
	player, ok := c.Player()
	require.True(t, ok)
	assert.Equal(t, player, d.Entity, "the desync names the client's own player")
	assert.True(t, d.Tick.After(0) && !d.Tick.After(c.World().Tick()), "tick %d is one the client ran (now %d)", d.Tick, c.World().Tick())
	assert.Contains(t, c.Stats().FirstDesync.Error(), fmt.Sprintf("desync at tick %d: entity %v component systems_test.Pos field X", d.Tick, d.Entity))
	assert.Greater(t, c.Stats().Desyncs, uint64(0))
}

type Trail struct{ N int32 } // written by prediction, not replicated, not registered

func TestSyncTestOnTheClientNamesAnUnregisteredComponent(t *testing.T) {
	h := trailMatch(t, false)
	var d *gw.DesyncError
	ok := errors.As(h.Clients[0].Stats().FirstDesync, &d)
	require.True(t, ok, "got %v", h.Clients[0].Stats().FirstDesync)
	assert.True(t, d.Unregistered)
	assert.Equal(t, "systems_test.Trail", d.Component.String())
	assert.Contains(t, h.Clients[0].Stats().FirstDesync.Error(), "not registered for history")
}

// The fix the message asks for: the game registers the component in the
// client's history (World.History) and the check finds nothing.
func TestRegisteringTheComponentTheCheckNamedFixesIt(t *testing.T) {
	h := trailMatch(t, true)
	st := h.Clients[0].Stats()
	assert.NoError(t, st.FirstDesync)
	assert.Greater(t, st.SyncTestChecks, uint64(4*100))
}

// trailMatch plays 3 s of a client whose prediction writes Trail, a
// component that is not replicated, registered for history when register
// is set.
func trailMatch(t *testing.T, register bool) *harness.Harness {
	t.Helper()
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	opts.Clients[0].Options.SyncTest = 4
	trail := generic.NewFilter2[Pos, Trail]().With(generic.T[components.Predicted]())
	opts.Clients[0].Options.OnSpawn = func(w *gw.World, e ecs.Entity, _ components.Ghost) {
		w.Arche().Add(e, ecs.ComponentID[Trail](w.Arche()))
	}
	opts.SetupClient = func(_ int, c *systems.Client) error {
		if register {
			if err := gw.Register[Trail](c.World().History()); err != nil {
				return err
			}
		}
		c.Schedule().Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
			q := trail.Query(w.Arche())
			for q.Next() {
				p, tr := q.Get()
				tr.N++
				if tr.N%50 == 0 {
					p.X++
				}
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	return h
}

func TestSyncTestOnACorrectClientFindsNothing(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	opts.Clients[0].Options.SyncTest = 8
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	st := h.Clients[0].Stats()
	assert.NoError(t, h.Clients[0].Stats().FirstDesync)
	assert.Zero(t, st.Desyncs)
	assert.Greater(t, st.SyncTestChecks, uint64(8*100), "every tick replays 8")
	assert.Zero(t, st.Mispredictions)
}

// TestFailedRollbackIsCountedApart: a correction hook that records far
// ahead (misusing the history) pushes the snapshot's tick out of it, so
// the rollback that follows fails: it is logged and counted in
// RollbackErrors, not in Rollbacks.
func TestFailedRollbackIsCountedApart(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	var logs bytes.Buffer
	opts.Clients[0].Options.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	opts.Clients[0].Options.RollbackAlways = true
	var c *systems.Client
	broken := false
	opts.Clients[0].Options.BeforeCorrection = func(w *gw.World) {
		if broken || c.Stats().Rollbacks == 0 {
			return
		}
		broken = true
		h := w.History()
		newest, _ := h.Newest()
		h.Record(newest.Add(h.Capacity() - 1))
	}
	opts.SetupClient = func(_ int, cl *systems.Client) error {
		c = cl
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(2 * time.Second)
	st := c.Stats()
	require.True(t, broken)
	assert.Equal(t, uint64(1), st.RollbackErrors)
	assert.Equal(t, c.Schedule().Stats().Rollbacks, st.Rollbacks, "only rollbacks that happened")
	assert.Greater(t, st.Rollbacks, uint64(0))
	assert.Contains(t, logs.String(), "ghostwire: rollback failed")
}

func TestHarnessSyncTestChecksEveryClient(t *testing.T) {
	g := newTestGame()
	opts := g.options(2, link(100*time.Millisecond, 10*time.Millisecond, 0.02))
	opts.SyncTest = 8
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	for i, c := range h.Clients {
		assert.NoErrorf(t, c.Stats().FirstDesync, "client %d", i)
		assert.Greaterf(t, c.Stats().SyncTestChecks, uint64(8*100), "client %d", i)
		assert.NoErrorf(t, h.CheckOwnState(i), "client %d", i)
	}
	assert.NoError(t, h.Server.Stats().FirstDesync)
	assert.Greater(t, h.Server.Stats().SyncTestChecks, uint64(8*100), "and the server")
}
