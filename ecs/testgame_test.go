package ecs_test

import (
	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// The test game: 40 bytes of predicted state per entity in three
// components, moved by inputs that are a pure function of tick and entity.

type Position struct{ X, Y, Z float32 }

type Velocity struct{ X, Y, Z float32 }

type Body struct {
	Health  int32
	Stamina float32
	Index   uint32
	Steps   uint32
}

// inputFor is the "recorded input" of entity index at tick: data, not a
// device read, so replay sees the same value.
func inputFor(tick gw.Tick, index uint32) (float32, float32) {
	h := (uint32(tick)*2654435761 ^ index*40503) * 2246822519
	return float32(int32(h%2001)-1000) / 1000, float32(int32((h>>11)%2001)-1000) / 1000
}

// moveSystem is a deterministic prediction system.
type moveSystem struct {
	filter *generic.Filter3[Position, Velocity, Body]
}

func newMoveSystem() *moveSystem {
	return &moveSystem{filter: generic.NewFilter3[Position, Velocity, Body]().With(generic.T[components.Predicted]())}
}

func (s *moveSystem) Update(w *gw.World) {
	const dt = float32(1) / 60
	q := s.filter.Query(w.Arche())
	for q.Next() {
		p, v, b := q.Get()
		ix, iy := inputFor(w.Tick(), b.Index)
		v.X = v.X*0.9 + ix*2
		v.Y = v.Y*0.9 + iy*2
		v.Z = v.Z*0.5 + 0.01
		p.X += v.X * dt
		p.Y += v.Y * dt
		p.Z += v.Z * dt
		if p.X > 10 || p.X < -10 {
			v.X = -v.X
		}
		b.Stamina = b.Stamina*0.99 + ix*ix
		if b.Stamina > 5 {
			b.Health--
			b.Stamina = 0
		}
		b.Steps++
	}
}

type game struct {
	world    *gw.World
	sched    *gw.Schedule
	history  *gw.History
	entities []ecs.Entity
}

// newGame builds a client world with n predicted entities and the move
// system in the prediction stage.
func newGame(t require.TestingT, n, capacity int) *game {
	return newGameAs(t, false, n, capacity)
}

// newGameAs is newGame with a server's world when server is set (see
// gw.WorldOptions.Authoritative).
func newGameAs(t require.TestingT, server bool, n, capacity int) *game {
	w := gw.NewWorld(gw.WorldOptions{Authoritative: server})
	h, err := gw.EnableHistory[components.Predicted](w, capacity)
	require.NoError(t, err)
	require.NoError(t, gw.Register[Position](h))
	require.NoError(t, gw.Register[Velocity](h))
	require.NoError(t, gw.Register[Body](h))
	g := &game{world: w, sched: gw.NewSchedule(), history: h}
	g.sched.Add(gw.StagePrediction, newMoveSystem())
	g.spawn(n)
	return g
}

func (g *game) spawn(n int) {
	b := generic.NewMap4[Position, Velocity, Body, components.Predicted](g.world.Arche())
	for i := 0; i < n; i++ {
		idx := uint32(len(g.entities))
		e := b.NewWith(&Position{X: float32(idx % 17), Y: float32(idx % 5)}, &Velocity{}, &Body{Health: 100, Index: idx}, &components.Predicted{})
		g.entities = append(g.entities, e)
	}
}

// state copies all registered values of the game's live entities.
func (g *game) state() ([]Position, []Velocity, []Body) {
	pm := generic.NewMap3[Position, Velocity, Body](g.world.Arche())
	var ps []Position
	var vs []Velocity
	var bs []Body
	for _, e := range g.entities {
		if !g.world.Arche().Alive(e) {
			continue
		}
		p, v, b := pm.Get(e)
		ps, vs, bs = append(ps, *p), append(vs, *v), append(bs, *b)
	}
	return ps, vs, bs
}

func mapGet[T any](w *gw.World, e ecs.Entity) *T {
	m := generic.NewMap[T](w.Arche())
	return m.Get(e)
}
