package main

import (
	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// The wire forms: one description per type, on a 1/128 grid.
var (
	coord = netsync.Range(-32, 32, 1.0/128)
	stick = netsync.Range(-1, 1, 1.0/64)
)

func (p *Paddle) Serialize(s *netsync.Stream) { s.Float(&p.Y, coord); netsync.Int(s, &p.Side, -1, 1) }
func (k *Stick) Serialize(s *netsync.Stream)  { s.Float(&k.Dir, stick) }
func (b *Ball) Serialize(s *netsync.Stream) {
	s.Float(&b.X, coord)
	s.Float(&b.Y, coord)
	s.Float(&b.VX, coord)
	s.Float(&b.VY, coord)
}
func (c *Score) Serialize(s *netsync.Stream) {
	netsync.Int(s, &c.Left, 0, 999)
	netsync.Int(s, &c.Right, 0, 999)
}
func (e *Bounce) Serialize(s *netsync.Stream) { s.Bool(&e.Paddle) }

// NewGame describes pong once for the server and every client: a paddle
// per player, predicted by its owner; the ball, predicted by every client
// so that a bounce off a player's own paddle is felt at once.
func NewGame() (*systems.Game, error) {
	var b netsync.SchemaBuilder
	paddle := b.GhostType("paddle", netsync.Component[Paddle](&b))
	ball := b.GhostType("ball", netsync.Component[Ball](&b), netsync.Component[Score](&b))
	b.Predict(ball, netsync.PredictAll)
	netsync.Input[Stick](&b, netsync.InputRules[Stick]{})
	netsync.Event[Bounce](&b, netsync.EventRules{})
	schema, err := b.Build()
	if err != nil {
		return nil, err
	}
	return &systems.Game{
		Schema:   schema,
		TickRate: TickRate,
		OnStart: func(s *systems.Server) error {
			m := generic.NewMap2[Ball, Score](s.World().Arche())
			_, err := s.Ghosts().Spawn(m.NewWith(&Ball{VX: BallSpeed, VY: BallSpeed / 2}, &Score{}), ball, 0)
			return err
		},
		OnConnect: func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap1[Paddle](w.Arche())
			return m.NewWith(&Paddle{Side: side(conn)}), paddle, nil
		},
		Prediction: []func(*gw.World) gw.System{NewPaddleSystem, NewBallSystem},
	}, nil
}
