package systems_test

import (
	"bytes"
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

// Score is decided by the server alone: its simulation sets it to the
// number of whole scoreEvery-tick periods at every multiple of scoreEvery,
// so the value a snapshot of tick S carries is S / scoreEvery.
type Score struct{ N int32 }

const scoreEvery = 30

func (s *Score) Serialize(st *netsync.Stream) { netsync.Int(st, &s.N, 0, 1<<20) }

// scoreGame is the test game with a Score on the player, server-owned
// when owned is set; its prediction reads Score when boosted is set: the
// player runs twice as fast while the score is odd, so a change of the
// score makes the positions predicted since wrong, as a kill stops a
// player.
type scoreGame struct {
	*testGame
	boosted bool
}

func newScoreGame(owned, boosted bool) *scoreGame {
	g := &scoreGame{boosted: boosted}
	var b netsync.SchemaBuilder
	pos := netsync.Component[Pos](&b)
	speed := netsync.Component[Speed](&b)
	score := netsync.Component[Score](&b)
	player := b.GhostType("player", pos, speed, score)
	if owned {
		b.ServerOwned(player, score)
	}
	netsync.Input[Move](&b, netsync.InputRules[Move]{})
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	g.testGame = &testGame{schema: s, player: player}
	return g
}

func (g *scoreGame) spawn(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
	m := generic.NewMap3[Pos, Speed, Score](w.Arche())
	return m.NewWith(&Pos{X: float32(conn) * 10}, &Speed{V: 3}, &Score{N: int32(w.Tick() / scoreEvery)}), g.player, nil
}

func (g *scoreGame) move(*gw.World) gw.System {
	movers := generic.NewFilter4[Pos, Speed, Score, Move]().With(generic.T[components.Predicted]())
	return gw.SystemFunc(func(w *gw.World) {
		q := movers.Query(w.Arche())
		for q.Next() {
			p, sp, sc, in := q.Get()
			v := in.X * sp.V / 60
			if g.boosted && sc.N%2 == 1 {
				v *= 2
			}
			p.X += v
		}
	})
}

func (g *scoreGame) score(*gw.World) gw.System {
	scores := generic.NewFilter1[Score]()
	return gw.SystemFunc(func(w *gw.World) {
		if w.Tick()%scoreEvery != 0 {
			return
		}
		q := scores.Query(w.Arche())
		for q.Next() {
			q.Get().N = int32(w.Tick() / scoreEvery)
		}
	})
}

// options returns one client on a lossy 100 ms link whose input moves
// back and forth, with the score checked after every tick and every
// correction: the client's Score must be what the newest snapshot said.
func (g *scoreGame) options(t *testing.T, wrong *int) harness.Options {
	opts := g.testGame.options(1, link(100*time.Millisecond, 10*time.Millisecond, 0.05))
	opts.Game = &systems.Game{Schema: g.schema, OnConnect: g.spawn,
		Prediction: []func(*gw.World) gw.System{g.move},
		Simulation: []func(*gw.World) gw.System{g.score}}
	var c *systems.Client
	check := func(w *gw.World) {
		e, ok := c.Player()
		st := c.Stats()
		if !ok || st.SnapshotsReceived == 0 {
			return
		}
		if got, want := (*Score)(w.Arche().Get(e, ecs.ComponentID[Score](w.Arche()))).N, int32(st.NewestSnapshot/scoreEvery); got != want {
			*wrong++
			t.Logf("tick %d: score %d, the newest snapshot (tick %d) said %d", w.Tick(), got, st.NewestSnapshot, want)
		}
	}
	opts.Clients[0].Options.AfterCorrection = check
	opts.SetupClient = func(_ int, cl *systems.Client) error {
		c = cl
		cl.Schedule().Add(gw.StageSend, gw.SystemFunc(check))
		return nil
	}
	return opts
}

// A server-owned component that the prediction does not read is taken as
// it arrives: no misprediction, no rollback, the newest value always.
func TestServerOwnedComponentIsTakenWithoutRollback(t *testing.T) {
	g := newScoreGame(true, false)
	wrong := 0
	opts := g.options(t, &wrong)
	var logs bytes.Buffer
	opts.Clients[0].Options.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	seen, st := mispredictions(t, opts)
	assert.Empty(t, seen)
	assert.Zero(t, st.Rollbacks)
	assert.Nil(t, st.MispredictionsBy)
	assert.Zero(t, wrong, "the client's score is the newest snapshot's")
	// 3 s: a change every 30 ticks, the first after the player arrives.
	assert.InDelta(t, 3*60/scoreEvery-1, st.ServerOwnedChanges, 1)
	assert.Contains(t, logs.String(), `msg="ghostwire: server-owned value taken"`)
	assert.Contains(t, logs.String(), "component=systems_test.Score field=N")
}

// The same component predicted: every change is a misprediction of it.
func TestPredictedServerWrittenComponentMispredicts(t *testing.T) {
	g := newScoreGame(false, false)
	wrong := 0
	_, st := mispredictions(t, g.options(t, &wrong))
	assert.GreaterOrEqual(t, st.MispredictionsBy["systems_test.Score"], uint64(3*60/scoreEvery-2))
	assert.Equal(t, st.Mispredictions, st.Rollbacks)
	assert.Zero(t, st.ServerOwnedChanges)
}

// A server-owned value the prediction reads changes what the prediction
// should have been: the positions predicted since the change are wrong
// and a rollback for Pos corrects them. The rollback writes the server's
// score of the snapshot's tick, the newest the client has, and the replay
// carries it to the present: after every correction the score is the
// newest snapshot's, the client converges, and the determinism check
// finds nothing.
func TestServerOwnedValueHoldsThroughARollbackForAnotherReason(t *testing.T) {
	g := newScoreGame(true, true)
	wrong := 0
	opts := g.options(t, &wrong)
	opts.Clients[0].Options.SyncTest = 6
	// The player stops for the last second, so its state converges.
	opts.Clients[0].Options.Input = systems.InputFunc(func(_ *gw.World, tick gw.Tick) Move {
		if tick > 4*60 {
			return Move{}
		}
		return Move{X: 1}
	})
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(5 * time.Second)
	st := h.Clients[0].Stats()
	assert.Zero(t, wrong, "the client's score is the newest snapshot's, corrections included")
	assert.Greater(t, st.Rollbacks, uint64(3), "the boost's changes are mispredicted")
	assert.NotContains(t, st.MispredictionsBy, "systems_test.Score")
	assert.Positive(t, st.MispredictionsBy["systems_test.Pos"])
	assert.NoError(t, st.FirstDesync)
	assert.Greater(t, st.SyncTestChecks, uint64(100))
	assert.NoError(t, h.CheckOwnState(0))
}
