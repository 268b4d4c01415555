package play_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
)

// What the page draws of a rocket: the shooter's client shows it from the
// tick it is fired, predicted (no ghost ID yet), then taken over by the
// server's ghost; another client shows it interpolated; where it hits,
// both show an explosion for ExplosionShown, and the server's splash
// takes the target's health.
func TestPlayerShowsRocketsAndExplosions(t *testing.T) {
	a := newJudgingArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	other := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(time.Second)
	me := game.SpawnPoint(1)

	// Away from everyone, along -y from (3, 0): the edge ends it 10 units
	// on, after about 0.65 s.
	p.SetControls(play.Controls{AimX: me.X, AimY: -10})
	a.run(50 * time.Millisecond)
	p.Rocket()
	a.run(30 * time.Millisecond)
	v := p.View()
	require.Len(t, v.Rockets, 1, "shown from the tick it is fired")
	r := v.Rockets[0]
	assert.True(t, r.Own)
	assert.Zero(t, r.Ghost, "predicted: the server's ghost has not come yet")
	assert.InDelta(t, me.X, r.X, 0.01)
	assert.Less(t, r.Y, me.Y-game.Radius, "out of the barrel, flying toward the aim")
	assert.Equal(t, uint64(1), v.Timeline.RocketsPredicted)

	a.run(200 * time.Millisecond) // a round trip and some
	v = p.View()
	require.Len(t, v.Rockets, 1)
	assert.NotZero(t, v.Rockets[0].Ghost, "taken over by its ghost")
	assert.Equal(t, uint64(1), v.Timeline.RocketsMatched)
	seen := other.View()
	require.Len(t, seen.Rockets, 1, "the other client draws it too")
	assert.False(t, seen.Rockets[0].Own, "interpolated there")
	assert.Equal(t, v.Rockets[0].Ghost, seen.Rockets[0].Ghost)

	a.run(500 * time.Millisecond) // it reaches the edge
	v = p.View()
	assert.Empty(t, v.Rockets)
	require.Len(t, v.Explosions, 1, "where it exploded")
	x := v.Explosions[0]
	assert.True(t, x.Own)
	assert.InDelta(t, me.X, x.X, 0.01)
	assert.InDelta(t, -game.HalfSize+game.RocketRadius, x.Y, 0.3, "at the edge")
	a.run(150 * time.Millisecond)
	require.Len(t, other.View().Explosions, 1, "the other client shows it when the server's despawn comes")
	assert.False(t, other.View().Explosions[0].Own)
	a.run(play.ExplosionShown)
	assert.Empty(t, p.View().Explosions, "faded")

	// At the other player: the splash takes its health.
	it := game.SpawnPoint(2)
	p.SetControls(play.Controls{AimX: it.X, AimY: it.Y})
	a.run(50 * time.Millisecond)
	p.Rocket()
	a.run(400 * time.Millisecond)
	v = p.View()
	require.NotEmpty(t, v.Explosions)
	x = v.Explosions[len(v.Explosions)-1]
	assert.Less(t, math.Hypot(float64(x.X-it.X), float64(x.Y-it.Y)), float64(game.Radius+game.RocketRadius+0.3), "on the target")
	assert.Less(t, other.View().Own.HP, int16(game.MaxHP), "the splash hurt it")
	assert.Equal(t, uint64(2), v.Timeline.RocketsMatched)
	assert.Zero(t, v.Timeline.RocketsRemoved)
}

// A press while the launcher cools down fires nothing, on the client as
// on the server; the magazine's refusals are the server's alone, and the
// client removes what it predicted of them.
func TestPlayerRocketsObeyTheLauncher(t *testing.T) {
	a := newJudgingArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(time.Second)
	p.SetControls(play.Controls{AimX: -10, AimY: 5}) // toward the open north-west
	a.run(50 * time.Millisecond)
	p.Rocket()
	a.run(100 * time.Millisecond)
	p.Rocket() // within the cooldown
	a.run(100 * time.Millisecond)
	assert.Equal(t, uint64(1), p.View().Timeline.RocketsPredicted, "the cooldown ate the second press")
	for range game.MagazineSize + 1 {
		a.run(game.RocketCooldown)
		p.Rocket()
	}
	a.run(time.Second)
	tl := p.View().Timeline
	assert.Equal(t, uint64(game.MagazineSize+2), tl.RocketsPredicted)
	assert.Positive(t, tl.RocketsRemoved, "the magazine ran dry on the server")
	assert.Equal(t, tl.RocketsPredicted, tl.RocketsMatched+tl.RocketsRemoved)
}
