package main

import (
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// The court: a ball bounces between the top and bottom walls and off the
// paddles; past a side, the other side scores and the ball serves again.
const (
	TickRate    = 60
	HalfWidth   = 20
	HalfHeight  = 10
	PaddleX     = 18 // the paddles' distance from the middle line
	PaddleHalf  = 2  // half a paddle's height
	PaddleSpeed = 14 // units per second
	BallSpeed   = 12
	dt          = float32(1) / TickRate
)

// Paddle is a player's paddle: its height on the court and its side (-1
// left, 1 right).
type Paddle struct {
	Y    float32
	Side int8
}

// Ball is the ball's position and velocity.
type Ball struct{ X, Y, VX, VY float32 }

// Score is the points of each side, kept on the ball.
type Score struct{ Left, Right int16 }

// Bounce is the ball bouncing off a wall or a paddle: a predicted event,
// a sound on each client that plays once per bounce the server had.
type Bounce struct{ Paddle bool }

// Stick is a player's input on one tick: -1 down to 1 up.
type Stick struct{ Dir float32 }

// NewPaddleSystem moves each predicted paddle by its tick's input.
func NewPaddleSystem(*gw.World) gw.System {
	paddles := generic.NewFilter2[Paddle, Stick]().With(generic.T[components.Predicted]())
	return gw.SystemFunc(func(w *gw.World) {
		q := paddles.Query(w.Arche())
		for q.Next() {
			p, in := q.Get()
			p.Y = min(HalfHeight-PaddleHalf, max(-HalfHeight+PaddleHalf, p.Y+in.Dir*PaddleSpeed*dt))
		}
	})
}

// NewBallSystem moves the ball, bounces it off the walls and the paddles
// (raising a Bounce), and scores when it leaves the court.
func NewBallSystem(*gw.World) gw.System {
	balls := generic.NewFilter2[Ball, Score]().With(generic.T[components.Predicted]())
	paddles := generic.NewFilter1[Paddle]()
	return gw.SystemFunc(func(w *gw.World) {
		q := balls.Query(w.Arche())
		for q.Next() {
			b, s := q.Get()
			b.X, b.Y = b.X+b.VX*dt, b.Y+b.VY*dt
			if b.Y > HalfHeight || b.Y < -HalfHeight {
				b.VY = -b.VY
				systems.Raise(w, q.Entity(), &Bounce{})
			}
			pq := paddles.Query(w.Arche())
			for pq.Next() {
				p := pq.Get()
				x := float32(p.Side) * PaddleX
				if (b.X-x)*float32(p.Side) >= 0 && (b.X-b.VX*dt-x)*float32(p.Side) < 0 && b.Y > p.Y-PaddleHalf && b.Y < p.Y+PaddleHalf {
					b.VX = -b.VX // crossed the paddle's line this tick, within its height
					systems.Raise(w, q.Entity(), &Bounce{Paddle: true})
				}
			}
			switch {
			case b.X > HalfWidth:
				s.Left++
				*b = Ball{VX: -BallSpeed, VY: BallSpeed / 2}
			case b.X < -HalfWidth:
				s.Right++
				*b = Ball{VX: BallSpeed, VY: -BallSpeed / 2}
			}
		}
	})
}

// side returns the side of a connection's paddle: odd connections play
// left, even ones right.
func side(conn components.ConnID) int8 {
	if conn%2 == 1 {
		return -1
	}
	return 1
}
