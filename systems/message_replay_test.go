package systems_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// A message sent from a predicted tick is sent once, however often the
// tick is replayed: a side-effect system sends on a tick's first run
// only, and a prediction system's sends during the replays of a rollback
// (every snapshot, RollbackAlways) or of the determinism check (SyncTest)
// are dropped and counted, on a client and on a server alike.
func TestMessagesSentDuringReplaysAreSentOnce(t *testing.T) {
	g := newMessageGame()
	opts := g.options(1, link(100*time.Millisecond, 10*time.Millisecond, 0.05))
	opts.Clients[0].Options.RollbackAlways = true
	opts.Clients[0].Options.SyncTest = 3
	opts.Server.SyncTest = 3
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	first := map[gw.Tick]int{} // client ticks run for the first time
	opts.SetupClient = func(_ int, c *systems.Client) error {
		c.Schedule().Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
			if !w.IsReplaying() {
				first[w.Tick()]++
			}
			must(systems.SendToServer(w, w.Tick(), &Ordered{N: uint32(w.Tick())}))
		}))
		c.Schedule().AddSideEffect(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
			must(systems.SendToServer(w, w.Tick(), &Unordered{N: uint32(w.Tick())}))
		}))
		return nil
	}
	opts.SetupServer = func(s *systems.Server) error {
		s.Schedule().Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
			must(systems.SendToClients(w, systems.ToAll(), w.Tick(), &Ordered{N: uint32(w.Tick())}))
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	byPrediction, bySideEffect := map[gw.Tick]int{}, map[gw.Tick]int{}
	require.NoError(t, systems.Handle(h.Server.World(), func(_ *gw.World, e systems.Envelope, m *Ordered) {
		assert.Equal(t, e.Tick, gw.Tick(m.N))
		byPrediction[e.Tick]++
	}))
	require.NoError(t, systems.Handle(h.Server.World(), func(_ *gw.World, e systems.Envelope, _ *Unordered) { bySideEffect[e.Tick]++ }))
	var fromServer []gw.Tick
	require.NoError(t, systems.Handle(h.Clients[0].World(), func(_ *gw.World, e systems.Envelope, _ *Ordered) {
		fromServer = append(fromServer, e.Tick)
	}))
	h.Run(5 * time.Second)
	h.Clients[0].Close()
	h.Run(time.Second)

	cs := h.Clients[0].Stats()
	require.Positive(t, cs.Rollbacks, "rollbacks replayed ticks")
	require.Positive(t, cs.SyncTestChecks)
	assert.Zero(t, cs.Desyncs)
	assert.Positive(t, cs.Messages.Suppressed, "the prediction system's sends during replays")
	assert.Len(t, first, int(cs.Messages.Sent)/2, "one of each kind per tick run")
	for tick, n := range first {
		require.Equal(t, 1, n, "tick %d ran first once", tick)
		assert.Equal(t, 1, byPrediction[tick], "tick %d: the prediction system's message arrived once", tick)
		assert.Equal(t, 1, bySideEffect[tick], "tick %d: the side effect's message arrived once", tick)
	}
	assert.Len(t, byPrediction, len(first), "and no other")
	assert.Len(t, bySideEffect, len(first))

	ss := h.Server.Stats()
	require.Positive(t, ss.SyncTestChecks)
	assert.Positive(t, ss.Messages.Suppressed, "the server's sends during its determinism check's replays")
	require.Greater(t, len(fromServer), 200)
	for i := 1; i < len(fromServer); i++ {
		require.Equal(t, fromServer[i-1]+1, fromServer[i], "one message per server tick, in order")
	}
}
