package play

import (
	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
)

// Ball is the ball as a view draws it.
type Ball struct {
	X, Y float32
	// Predicted is set while this client predicts the ball (its player is
	// near it: game.BallSwitch), drawn smoothed; else it is interpolated.
	Predicted bool
}

// ballView finds the ball for the view.
type ballView struct {
	balls *generic.Filter1[game.Position]
	pred  generic.Map[components.Predicted]
}

func newBallView(w *gw.World) ballView {
	return ballView{
		balls: generic.NewFilter1[game.Position]().With(generic.T[game.Ball]()),
		pred:  generic.NewMap[components.Predicted](w.Arche()),
	}
}

// shown returns the ball, where visual draws it when predicted, and
// whether this client holds one.
func (b *ballView) shown(w *gw.World, visual func(ecs.Entity) [3]float32) (Ball, bool) {
	q := b.balls.Query(w.Arche())
	if !q.Next() {
		return Ball{}, false
	}
	p, e := q.Get(), q.Entity()
	ball := Ball{X: p.X, Y: p.Y, Predicted: b.pred.Has(e)}
	q.Close()
	if ball.Predicted {
		v := visual(e)
		ball.X, ball.Y = v[0], v[1]
	}
	return ball, true
}
