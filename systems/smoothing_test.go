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
	"github.com/ghostwire/ghostwire/internal/correction"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// smoothingRun plays one client holding "right" while the server, at
// server tick kickAt, moves the player by kick (a push the client could
// not predict). It returns the client's drawn x per frame and the frame of
// the correction.
func smoothingRun(t *testing.T, kick float32) (drawn []float32, offsets []float32, corrected int, c *systems.Client) {
	g := newTestGame()
	opts := g.options(1, link(100*time.Millisecond, 0, 0))
	opts.Clients[0].Options.Input = systems.InputFunc(func(*gw.World, gw.Tick) Move { return Move{X: 1} })
	const kickAt = 180
	opts.SetupServer = func(s *systems.Server) error {
		pos := generic.NewFilter1[Pos]()
		s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
			if w.Tick() != kickAt {
				return
			}
			q := pos.Query(w.Arche())
			for q.Next() {
				q.Get().X += kick
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	c = h.Clients[0]
	sm, err := systems.NewSmoother(c, systems.SmoothingOptions{
		Position: func(a *ecs.World, e ecs.Entity) [3]float32 {
			m := generic.NewMap[Pos](a)
			return [3]float32{m.Get(e).X, 0, 0}
		},
	})
	require.NoError(t, err)
	own := generic.NewFilter1[Pos]().With(generic.T[components.Predicted]())
	offset := generic.NewMap[correction.Offset](c.World().Arche())
	corrected = -1
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
		q := own.Query(w.Arche())
		for q.Next() {
			drawn = append(drawn, sm.Visual(q.Entity())[0])
			var o float32
			if offset.Has(q.Entity()) {
				o = offset.Get(q.Entity()).X
			}
			offsets = append(offsets, o)
		}
		if corrected < 0 && c.Stats().Rollbacks > 0 {
			corrected = len(drawn) - 1
		}
	}))
	h.Run(5 * time.Second)
	require.Greater(t, corrected, 0, "the kick must cause a correction")
	return drawn, offsets, corrected, c
}

func TestSmallCorrectionIsSmoothedOverSeveralFrames(t *testing.T) {
	drawn, offsets, at, c := smoothingRun(t, 0.4)
	normal := float32(3.0 / 60) // the player's step per frame
	for i := at - 20; i < at+40; i++ {
		// Exponential decay at 12/s shows 18 % of the offset in a 60 Hz frame.
		extra := drawn[i] - drawn[i-1] - normal
		assert.LessOrEqualf(t, math.Abs(float64(extra)), 0.2*0.4+0.01, "frame %d (correction at %d): at most a fifth of the correction per frame", i, at)
	}
	assert.Less(t, offsets[at], float32(-0.2), "the offset starts near the correction")
	smoothing := 0
	for i := at; i < len(offsets) && math.Abs(float64(offsets[i])) > 0.01; i++ {
		smoothing++
	}
	assert.GreaterOrEqual(t, smoothing, 5, "the correction fades over several frames")
	assert.Less(t, smoothing, 60, "and it does fade")
	assert.Zero(t, c.Stats().SmoothingSnaps)
}

func TestTeleportIsNotSmoothed(t *testing.T) {
	drawn, offsets, at, c := smoothingRun(t, 50)
	assert.Greater(t, drawn[at]-drawn[at-1], float32(40), "a respawn-sized correction jumps at once")
	assert.Zero(t, offsets[at], "no slide")
	assert.Equal(t, uint64(1), c.Stats().SmoothingSnaps)
	for i := at + 1; i < at+30; i++ {
		assert.InDelta(t, 3.0/60, drawn[i]-drawn[i-1], 0.02, "frame %d", i)
	}
}

func TestSmootherOptionValidation(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(1, link(0, 0, 0)))
	require.NoError(t, err)
	_, err = systems.NewSmoother(h.Clients[0], systems.SmoothingOptions{})
	assert.Error(t, err)
	pos := func(*ecs.World, ecs.Entity) [3]float32 { return [3]float32{} }
	_, err = systems.NewSmoother(h.Clients[0], systems.SmoothingOptions{Position: pos, Rate: -1})
	assert.ErrorContains(t, err, "rate -1")
	_, err = systems.NewSmoother(h.Clients[0], systems.SmoothingOptions{Position: pos, Snap: -2})
	assert.ErrorContains(t, err, "snap distance -2")
}
