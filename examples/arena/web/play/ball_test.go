package play_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
)

// What the page draws of the ball: interpolated at the centre while the
// player stands away from it, predicted (ringed on the page) once the
// player comes near, pushed away when it runs into it, and interpolated
// again once the player is far.
func TestPlayerShowsTheBallPredictedWhenNear(t *testing.T) {
	a := newJudgingArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(time.Second)
	v := p.View()
	require.True(t, v.HasBall)
	assert.Equal(t, play.Ball{}, v.Ball, "at rest in the centre, interpolated")

	p.SetControls(play.Controls{MoveX: -1, AimX: -10})
	a.run(400 * time.Millisecond) // from (3, 0), within BallNear and into it
	v = p.View()
	assert.True(t, v.Ball.Predicted, "near: predicted")
	assert.Equal(t, uint64(1), v.Timeline.BallSwitches)
	a.run(300 * time.Millisecond)
	assert.Less(t, p.View().Ball.X, float32(-0.5), "pushed ahead of the player")

	p.SetControls(play.Controls{MoveX: 1, AimX: 10})
	a.run(1500 * time.Millisecond)
	v = p.View()
	assert.False(t, v.Ball.Predicted, "far: interpolated again")
	assert.Less(t, v.Ball.X, float32(-game.BallFar+v.Own.X), "beyond BallFar")
	assert.Equal(t, uint64(1), v.Timeline.BallSwitches)
}
