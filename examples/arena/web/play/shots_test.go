package play_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
)

// newJudgingArena is newArena with the arena's whole server: lag
// compensation that confirms each verdict to its shooter, the shots and
// the respawns (game.Endpoints).
func newJudgingArena(t testing.TB) *arena {
	t.Helper()
	a := &arena{clock: &gw.VirtualTime{}}
	a.net = transport.NewMemoryNetwork(a.clock, 1)
	ln, err := a.net.Listen("arena")
	require.NoError(t, err)
	cfg := game.DefaultConfig()
	cfg.TickRate = play.TickRate
	e, err := game.NewEndpoints(cfg, a.clock)
	require.NoError(t, err)
	a.server, err = systems.NewServer(a.clock, ln, e.Game(), e.ServerOptions())
	require.NoError(t, err)
	require.NoError(t, e.SetupServer(a.server))
	return a
}

// The server's verdicts of the own player's shots come back as tracers: a
// hit ends at its target with a hit marker, a miss at the first wall; each
// is shown for ShotShown.
func TestPlayerShowsTracersAndHitMarkers(t *testing.T) {
	a := newJudgingArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	target := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(time.Second)
	me, it := game.SpawnPoint(1), game.SpawnPoint(2)

	p.SetControls(play.Controls{AimX: it.X, AimY: it.Y})
	a.run(100 * time.Millisecond)
	p.Fire()
	a.run(300 * time.Millisecond) // a round trip and some
	v := p.View()
	require.Len(t, v.Shots, 1, "the verdict came back")
	s := v.Shots[0]
	assert.True(t, s.Hit)
	assert.Equal(t, "hit", s.Reason)
	assert.InDelta(t, me.X, s.FromX, 1e-3)
	assert.InDelta(t, me.Y, s.FromY, 1e-3)
	assert.InDelta(t, it.X, s.ToX, 0.05, "the tracer ends at the target")
	assert.InDelta(t, it.Y, s.ToY, 0.05)
	assert.Equal(t, uint64(1), v.Timeline.Hits)
	assert.Equal(t, uint64(1), v.Timeline.Judged)
	assert.Less(t, target.View().Own.HP, int16(game.MaxHP), "the target was hurt")

	// Away from everyone, along -x: the pillar west of the centre stops it.
	p.SetControls(play.Controls{AimX: -10, AimY: me.Y})
	a.run(400 * time.Millisecond) // the first tracer fades meanwhile
	p.Fire()
	a.run(300 * time.Millisecond)
	v = p.View()
	require.Len(t, v.Shots, 1, "the first faded after %v", play.ShotShown)
	s = v.Shots[0]
	assert.False(t, s.Hit)
	assert.Equal(t, "no_target", s.Reason)
	assert.InDelta(t, -4.25, s.ToX, 1e-3, "the tracer stops at the pillar's face")
	assert.InDelta(t, me.Y, s.ToY, 1e-3)
	assert.Equal(t, uint64(1), v.Timeline.Hits)
	assert.Equal(t, uint64(2), v.Timeline.Judged)
	a.run(play.ShotShown)
	assert.Empty(t, p.View().Shots)
}

// A death is no misprediction: Health is server-owned, taken as it
// arrives (a player standing still predicts nothing else wrong); the
// respawn that follows is a teleport, counted apart, neither a correction
// nor plotted, and the view counts the seconds to it down.
func TestPlayerRespawnIsNotACorrection(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(time.Second)
	p.SetControls(play.Controls{MoveX: -1, AimX: -10}) // off the spawn point, then still
	a.run(500 * time.Millisecond)
	p.SetControls(play.Controls{AimX: -10})
	a.run(time.Second)
	require.Greater(t, game.SpawnPoint(1).X-p.View().Own.X, float32(1))

	kill(a)
	var countdown []float64
	for range 150 { // 1.5 s: the death, the second dead, the respawn
		a.run(10 * time.Millisecond)
		if v := p.View(); v.Own.HP <= 0 {
			countdown = append(countdown, v.Own.RespawnS)
		}
	}
	v := p.View()
	require.Positive(t, v.Own.HP, "respawned")
	assert.InDelta(t, game.SpawnPoint(1).X, v.Own.X, 1e-3, "at the spawn point")
	require.NotEmpty(t, countdown)
	assert.InDelta(t, 1, countdown[0], 0.15, "a second to wait, from the death's snapshot")
	assert.InDelta(t, 0, countdown[len(countdown)-1], 0.15)
	assert.IsNonIncreasing(t, countdown)

	tl := v.Timeline
	assert.Equal(t, uint64(1), tl.Respawns)
	assert.Zero(t, tl.Corrections, "the death was taken from the server, not corrected")
	assert.Equal(t, uint64(1), tl.Mispredictions, "the client's own count has the respawn only")
	assert.Empty(t, tl.LastMispredicted)
	assert.Less(t, tl.MaxError, 0.01, "standing still, the death moved nothing; the respawn's jump is not plotted")
}

var healths = generic.NewFilter1[game.Health]()

// kill sets every player's health to 0 on the server's next tick, with
// the respawn a second later, as a lethal hit does.
func kill(a *arena) {
	done := false
	a.server.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
		if done {
			return
		}
		done = true
		q := healths.Query(w.Arche())
		for q.Next() {
			h := q.Get()
			h.HP, h.Respawn = 0, w.Tick().Add(play.TickRate)
		}
	}))
}
