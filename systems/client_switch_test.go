package systems_test

import (
	"math"
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

// switchRun is what a client saw of a ball switched between predicted
// and interpolated every half second.
type switchRun struct {
	h        *harness.Harness
	maxJump  float64 // the largest move of the drawn ball in one frame, beyond its own motion
	switches int
	ball     components.GhostID
}

// playSwitches plays a server-owned ball bouncing at 3 units a second
// between -5 and 5, which the client switches to predicted and back every
// 30 frames, n times, at 100 ms of round trip. smooth installs a Smoother
// and the default SwitchBlend; without it the switches jump.
func playSwitches(t *testing.T, n int, smooth bool) *switchRun {
	g := newTestGameWith(func(b *netsync.SchemaBuilder) { b.GhostType("ball", 0, 1) })
	const ballType = 1
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	bounce := func(*gw.World) gw.System {
		balls := generic.NewFilter2[Pos, Speed]().With(generic.T[components.Predicted]()).Without(generic.T[Move]())
		return gw.SystemFunc(func(w *gw.World) {
			q := balls.Query(w.Arche())
			for q.Next() {
				p, s := q.Get()
				p.X += s.V / 60
				if p.X > 5 || p.X < -5 {
					s.V = -s.V
				}
			}
		})
	}
	opts.Game.Prediction = append(opts.Game.Prediction, bounce)
	opts.Game.OnStart = func(s *systems.Server) error {
		m := generic.NewMap2[Pos, Speed](s.World().Arche())
		_, err := s.Ghosts().Spawn(m.NewWith(&Pos{}, &Speed{V: 3}), ballType, 0)
		return err
	}
	opts.Clients[0].Options.SyncTest = 4
	if !smooth {
		opts.Clients[0].Options.SwitchBlend = -1
	}
	r := &switchRun{}
	opts.SetupClient = func(_ int, c *systems.Client) error {
		var sm *systems.Smoother
		if smooth {
			var err error
			sm, err = systems.NewSmoother(c, systems.SmoothingOptions{Position: func(a *ecs.World, e ecs.Entity) [3]float32 {
				return [3]float32{(*Pos)(a.Get(e, ecs.ComponentID[Pos](a))).X}
			}})
			if err != nil {
				return err
			}
		}
		balls := generic.NewFilter2[Pos, components.Ghost]()
		pred := generic.NewMap[components.Predicted](c.World().Arche())
		pos := generic.NewMap[Pos](c.World().Arche())
		var last float64
		var lastTick gw.Tick
		seen, frames, on := false, 0, false
		c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
			var e ecs.Entity
			found := false
			q := balls.Query(w.Arche())
			for q.Next() {
				if _, gh := q.Get(); gh.Type == ballType {
					e, found, r.ball = q.Entity(), true, gh.ID
				}
			}
			if !found {
				return
			}
			drawn := float64(pos.Get(e).X)
			if sm != nil && pred.Has(e) {
				drawn = float64(sm.Visual(e)[0])
			}
			if seen {
				motion := 3 * float64(w.Tick().Sub(lastTick)+1) / 60
				r.maxJump = max(r.maxJump, math.Abs(drawn-last)-motion)
			}
			last, lastTick, seen = drawn, w.Tick(), true
			if frames++; frames%30 == 0 && r.switches < n {
				on = !on
				require.NoError(t, c.Predict(r.ball, on))
				r.switches++
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	r.h = h
	h.Run(time.Duration(n+4) * time.Second / 2)
	return r
}

// A ball switched to predicted and back 100 times, then to predicted
// once more: on screen it never
// moves in one frame by more than a part of the switch's jump (the
// instant switch of the same match shows it whole), the history stays
// correct (the client's determinism check finds nothing), and the ball
// ends predicted, equal to the server's at the server's tick.
func TestPredictionSwitchingIsSmoothAndCorrect(t *testing.T) {
	instant := playSwitches(t, 201, false)
	smooth := playSwitches(t, 201, true)
	t.Logf("largest jump in a frame beyond the ball's motion: %.3f instant, %.3f smoothed", instant.maxJump, smooth.maxJump)
	require.Equal(t, 201, smooth.switches)
	assert.Greater(t, instant.maxJump, 0.2, "an instant switch jumps between the past and the present")
	assert.Less(t, smooth.maxJump, instant.maxJump/2, "the blend spreads the jump")

	c := smooth.h.Clients[0]
	st := c.Stats()
	assert.Equal(t, uint64(101), st.SwitchedToPredicted)
	assert.Equal(t, uint64(100), st.SwitchedToInterpolated)
	assert.Zero(t, st.Desyncs, "the determinism check found the history right: %v", st.FirstDesync)
	assert.Positive(t, st.SyncTestChecks)
	assert.Zero(t, st.Mispredictions, "a switch is not a misprediction")

	tick := smooth.h.Server.World().Tick()
	se, ok := smooth.h.Server.Ghosts().Entity(smooth.ball)
	require.True(t, ok)
	ce, ok := c.Ghosts().Entity(smooth.ball)
	require.True(t, ok)
	predicted, ok := gw.ValueAt[Pos](c.World().History(), tick, ce)
	require.True(t, ok, "the ball ends predicted, in the client's history")
	serverPos := generic.NewMap[Pos](smooth.h.Server.World().Arche())
	assert.Equal(t, serverPos.Get(se).X, predicted.X, "converged")
}

// Predict refuses a ghost the client does not hold, and a switch to the
// mode a ghost has changes nothing.
func TestPredictRefusesUnknownGhosts(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(1, link(60*time.Millisecond, 0, 0)))
	require.NoError(t, err)
	h.Run(time.Second)
	c := h.Clients[0]
	err = c.Predict(99, true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ghost 99 is not on this client")
	e, ok := c.Player()
	require.True(t, ok)
	ghostOf := generic.NewMap[components.Ghost](c.World().Arche())
	id := ghostOf.Get(e).ID
	require.NoError(t, c.Predict(id, true))
	assert.Zero(t, c.Stats().SwitchedToPredicted, "already predicted")
}

// A ball at rest switched to predicted and back to interpolated rests:
// the server sends nothing more of a ghost its client holds at rest, and
// the interpolation shows it still, without extrapolating past its newest
// state (before the fix it was held at the cap from then on).
func TestGhostSwitchedBackAtRestIsNotExtrapolated(t *testing.T) {
	g := newTestGameWith(func(b *netsync.SchemaBuilder) { b.GhostType("ball", 0, 1) })
	const ballType = 1
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	opts.Game.OnStart = func(s *systems.Server) error {
		m := generic.NewMap2[Pos, Speed](s.World().Arche())
		_, err := s.Ghosts().Spawn(m.NewWith(&Pos{X: 2}, &Speed{}), ballType, 0)
		return err
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(time.Second)
	c := h.Clients[0]
	var ball components.GhostID
	q := generic.NewFilter1[components.Ghost]().Query(c.World().Arche())
	for q.Next() {
		if g := q.Get(); g.Type == ballType {
			ball = g.ID
		}
	}
	require.NotZero(t, ball, "the ball reached the client")
	require.NoError(t, c.Predict(ball, true))
	h.Run(time.Second)
	require.NoError(t, c.Predict(ball, false))
	h.Run(2 * time.Second)
	st := c.Stats()
	assert.Equal(t, uint64(1), st.SwitchedToInterpolated)
	assert.Zero(t, st.ExtrapolatedTicks, "shown at rest, not extrapolated")
	assert.Zero(t, st.HeldTicks)
	e, ok := c.Ghosts().Entity(ball)
	require.True(t, ok)
	pos := generic.NewMap[Pos](c.World().Arche())
	assert.Equal(t, float32(2), pos.Get(e).X)
}
