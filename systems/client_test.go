package systems_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

func TestClientPredictsAheadAndMatchesTheServer(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(2, link(100*time.Millisecond, 0, 0)))
	require.NoError(t, err)
	h.Run(10 * time.Second)
	for i, c := range h.Clients {
		st := c.Stats()
		assert.True(t, c.Connected())
		assert.Zero(t, st.Mispredictions, "a deterministic game on a clean link predicts right")
		assert.InDelta(t, 100, float64(st.RTT)/float64(time.Millisecond), 2)
		// Ahead of the server by RTT/2 plus the margin: 3 + 1 ticks.
		assert.InDelta(t, 4, float64(c.World().Tick())-float64(h.Server.World().Tick()), 1)
		// The client's prediction at the server's tick equals the server.
		id := components.GhostID(i + 1)
		e, _ := c.Ghosts().Entity(id)
		predicted, ok := gw.ValueAt[Pos](c.World().History(), h.Server.World().Tick(), e)
		require.True(t, ok)
		server, _, _ := positions(h, i, id)
		assert.Equal(t, server, predicted.X)
		assert.NoError(t, h.CheckOwnState(i), "the harness's own check agrees")
	}
	// Each client sees the other's ghost, interpolated.
	_, ok := h.Clients[0].Ghosts().Entity(2)
	assert.True(t, ok)
}

func TestRollbackPoliciesAgree(t *testing.T) {
	g := newTestGame()
	final := map[bool][2]float32{}
	replayed := map[bool]uint64{}
	for _, always := range []bool{false, true} {
		opts := g.options(1, link(150*time.Millisecond, 20*time.Millisecond, 0.05))
		opts.Clients[0].Options.RollbackAlways = always
		h, err := harness.New(opts)
		require.NoError(t, err)
		h.Run(8 * time.Second)
		s, c, ok := positions(h, 0, 1)
		require.True(t, ok)
		final[always] = [2]float32{s, c}
		replayed[always] = h.Clients[0].Stats().ReplayedTicks
	}
	assert.Equal(t, final[false], final[true], "same seed, same outcome whatever the policy")
	assert.Greater(t, replayed[true], 10*replayed[false]+100)
}

// TestRollbackPoliciesEndTheSameMatches: the test game's inputs do not
// read the world, so both policies must play the same matches: the same
// mispredictions, per component too, and bit-identical positions on the
// server and every client.
func TestRollbackPoliciesEndTheSameMatches(t *testing.T) {
	type outcome struct {
		Mispredictions []uint64
		By             []map[string]uint64
		Server, Own    []uint32
	}
	mispredicted := uint64(0)
	for seed := uint64(1); seed <= 6; seed++ {
		var out [2]outcome
		for p, always := range []bool{false, true} {
			g := newTestGame()
			opts := g.options(3, link(250*time.Millisecond, 30*time.Millisecond, 0.05))
			opts.Seed = seed
			for i := range opts.Clients {
				opts.Clients[i].Options.RollbackAlways = always
			}
			// A server-only shove now and then makes mispredictions.
			shoved := generic.NewFilter1[Pos]()
			opts.SetupServer = func(s *systems.Server) error {
				s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
					if w.Tick()%97 == 0 {
						q := shoved.Query(w.Arche())
						for q.Next() {
							q.Get().X += 0.5
						}
					}
				}))
				return nil
			}
			h, err := harness.New(opts)
			require.NoError(t, err)
			h.Run(6 * time.Second)
			var o outcome
			for i, c := range h.Clients {
				st := c.Stats()
				o.Mispredictions = append(o.Mispredictions, st.Mispredictions)
				o.By = append(o.By, st.MispredictionsBy)
				mispredicted += st.Mispredictions
				s, own, ok := positions(h, i, components.GhostID(i+1))
				require.True(t, ok)
				o.Server, o.Own = append(o.Server, math.Float32bits(s)), append(o.Own, math.Float32bits(own))
			}
			out[p] = o
		}
		assert.Equalf(t, out[0], out[1], "seed %d: mismatch then always", seed)
	}
	assert.Greater(t, mispredicted, uint64(0), "the shoves must be mispredicted")
}

func TestClientBehindTheServerIsHardCorrected(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(60*time.Millisecond, 0, 0))
	opts.Clients[0].Options.FixedScale = 0.5 // a clock running at half speed, never corrected
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(5 * time.Second)
	st := h.Clients[0].Stats()
	assert.Greater(t, st.HardCorrections, uint64(10))
	s, c, ok := positions(h, 0, 1)
	require.True(t, ok)
	assert.InDelta(t, s, c, 1, "the adopted state follows the server")
}

func TestStaleSnapshotsAreIgnored(t *testing.T) {
	g := newTestGame()
	lk := link(100*time.Millisecond, 0, 0)
	lk.Down.Reorder = 0.3
	h, err := harness.New(g.options(1, lk))
	require.NoError(t, err)
	h.Run(5 * time.Second)
	st := h.Clients[0].Stats()
	assert.Greater(t, st.SnapshotsStale, uint64(10))
	assert.Zero(t, st.Mispredictions, "reordered snapshots must not cause false corrections")
}

func TestClientOptionValidation(t *testing.T) {
	g := newTestGame()
	for _, tc := range []struct {
		opts systems.ClientOptions
		want string
	}{
		{systems.ClientOptions{FixedScale: 3}, "fixed clock scale 3 outside 0.5..2"},
		{systems.ClientOptions{HistoryCapacity: 1}, "history capacity 1"},
		{systems.ClientOptions{InputRedundancy: 99}, "redundancy 99"},
		{systems.ClientOptions{TargetLead: 100}, "target lead 100"},
		{systems.ClientOptions{HistoryCapacity: 512}, "input stream capacity 256 is below the history capacity 512"},
		{systems.ClientOptions{MessageBytesPerSecond: 2_000_000_000}, "message budget 2000000000 bytes per second outside 1000..1000000000"},
	} {
		_, err := systems.NewClient(&gw.VirtualTime{}, nil, g.game(), tc.opts)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// A Game that is wrong is refused by both endpoints, naming the field.
func TestGameValidation(t *testing.T) {
	g := newTestGame()
	net := transport.NewMemoryNetwork(&gw.VirtualTime{}, 1)
	l, _ := net.Listen("s")
	for _, tc := range []struct {
		game *systems.Game
		want string
	}{
		{nil, "no Game given"},
		{&systems.Game{}, "Game.Schema is required"},
		{&systems.Game{Schema: g.schema, TickRate: 5000}, "Game.TickRate 5000 outside 1..1000"},
		{&systems.Game{Schema: g.schema, TickRate: -1}, "Game.TickRate -1"},
		{&systems.Game{Schema: g.schema, Prediction: []func(*gw.World) gw.System{nil}}, "Game.Prediction[0] is nil"},
		{&systems.Game{Schema: g.schema, Presentation: []func(*gw.World) gw.System{func(*gw.World) gw.System { return nil }}}, "Game.Presentation[0] made a nil system"},
	} {
		conn, err := net.Dial("s", transport.Conditions{})
		require.NoError(t, err)
		_, err = systems.NewClient(&gw.VirtualTime{}, conn, tc.game, systems.ClientOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		if tc.game != nil {
			tc.game.OnConnect = g.spawn
			tc.game.Presentation = nil // the server makes no presentation
		}
		if tc.game == nil || tc.game.Prediction != nil || tc.game.Schema == nil || tc.game.TickRate != 0 {
			_, err = systems.NewServer(&gw.VirtualTime{}, l, tc.game, systems.ServerOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	_, err := systems.NewServer(&gw.VirtualTime{}, l, &systems.Game{Schema: g.schema}, systems.ServerOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Game.OnConnect is required by a server")
	_, err = systems.NewServer(&gw.VirtualTime{}, l, &systems.Game{Schema: g.schema, OnConnect: g.spawn,
		OnStart: func(*systems.Server) error { return errors.New("no map") }}, systems.ServerOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "systems: Game.OnStart: no map")
}

// A client whose frames are slower than the server's ticks receives two
// snapshots per frame; both carry states of the ghosts it interpolates,
// and both must reach the interpolator, or it blends across the missing
// tick and draws what the server never simulated (and lag compensation
// will not rewind to).
func TestEveryReceivedSnapshotFeedsInterpolation(t *testing.T) {
	g := newTestGame()
	opts := g.options(2, link(100*time.Millisecond, 0, 0))
	opts.Step = 33 * time.Millisecond // about 30 frames per second, two ticks each
	opts.FrameRate = 30
	opts.Clients[0].Options.Input = systems.InputFunc(func(_ *gw.World, tick gw.Tick) Move {
		return Move{X: float32(int(tick%2)*2 - 1)} // zig-zag every tick
	})
	opts.Clients[1].Options.InterpolationDelay = 100 * time.Millisecond
	serverPos := map[gw.Tick]float32{}
	opts.SetupServer = func(s *systems.Server) error {
		s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
			if e, ok := s.Ghosts().Entity(1); ok {
				m := generic.NewMap[Pos](w.Arche())
				serverPos[w.Tick()] = m.Get(e).X
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	viewer := h.Clients[1]
	checked := 0
	for i := 0; i < 60; i++ {
		h.Step()
		e, ok := viewer.Ghosts().Entity(1)
		require.True(t, ok)
		rt := viewer.Stats().RenderTick
		a, okA := serverPos[gw.Tick(rt)]
		b, okB := serverPos[gw.Tick(rt)+1]
		require.True(t, okA && okB, "render tick %v", rt)
		f := float32(rt - math.Floor(rt))
		want := a + (b-a)*f
		m := generic.NewMap[Pos](viewer.World().Arche())
		got := m.Get(e).X
		require.InDeltaf(t, want, got, 1e-3, "render tick %.3f: server %v then %v", rt, a, b)
		checked++
	}
	assert.Equal(t, 60, checked)
}
