package game

import (
	"math"
	"slices"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// MoveSystem is the arena's movement: it steers each living predicted
// player's velocity toward the wished one (the input's move vector times
// MaxSpeed) by at most Acceleration·dt, moves it, stops it at the walls and
// pillars, and turns it to the input's aim. Server and client run exactly
// this code in the prediction stage. It reads the tick's input from the
// entity's Command, never from a device, and dt is the fixed tick
// length. The dead do not move.
type MoveSystem struct {
	DT     float32
	filter *generic.Filter5[Position, Velocity, Facing, Health, Command]
}

// NewMoveSystem returns the movement system for a tick rate.
func NewMoveSystem(tickRate int) *MoveSystem {
	return &MoveSystem{
		DT:     1 / float32(tickRate),
		filter: generic.NewFilter5[Position, Velocity, Facing, Health, Command]().With(generic.T[components.Predicted]()),
	}
}

// Update moves every living predicted player one tick.
func (s *MoveSystem) Update(w *gw.World) {
	q := s.filter.Query(w.Arche())
	for q.Next() {
		p, v, f, h, in := q.Get()
		if !h.Alive() {
			*v = Velocity{}
			continue
		}
		step(p, v, in.MoveX, in.MoveY, s.DT)
		pushOutOfWalls(p, v)
		f.Yaw = in.Aim
	}
}

// step is one tick of movement for one player.
func step(p *Position, v *Velocity, mx, my, dt float32) {
	// Every product is rounded before it is added (float32(…)): Go may
	// fuse x*y+z into one multiply-add on arm64 and amd64 v3, which rounds
	// once, and a client must reach the server's bits on any CPU.
	wx, wy := float32(mx*MaxSpeed), float32(my*MaxSpeed)
	dx, dy := wx-v.X, wy-v.Y
	maxDelta := Acceleration * dt
	if d := length(dx, dy); d > maxDelta {
		k := maxDelta / d
		dx, dy = float32(dx*k), float32(dy*k)
	}
	v.X, v.Y = v.X+dx, v.Y+dy
	p.X, p.Y = p.X+float32(v.X*dt), p.Y+float32(v.Y*dt)
	lim := HalfSize - Radius
	if p.X > lim {
		p.X, v.X = lim, min(v.X, 0)
	} else if p.X < -lim {
		p.X, v.X = -lim, max(v.X, 0)
	}
	if p.Y > lim {
		p.Y, v.Y = lim, min(v.Y, 0)
	} else if p.Y < -lim {
		p.Y, v.Y = -lim, max(v.Y, 0)
	}
}

func length(x, y float32) float32 {
	return float32(math.Sqrt(float64(x)*float64(x) + float64(y)*float64(y)))
}

// CollideSystem pushes each living predicted player out of every other
// living player it overlaps, by half the overlap (the other player, when the same world
// simulates it, takes the other half). Pushes are computed from the
// positions before any is applied and summed in ghost ID order, so the
// result does not depend on storage order: a client predicting its own
// player computes exactly what the server does, given the same positions.
type CollideSystem struct {
	players *generic.Filter3[components.Ghost, Position, Health]
	pos     generic.Map[Position]
	predID  ecs.ID
	all     []body
	push    []pushed
}

type body struct {
	id        components.GhostID
	e         ecs.Entity
	x, y      float32
	predicted bool
}

type pushed struct {
	e      ecs.Entity
	dx, dy float32
}

// NewCollideSystem returns the collision system for a world.
func NewCollideSystem(w *gw.World) *CollideSystem {
	return &CollideSystem{
		players: generic.NewFilter3[components.Ghost, Position, Health](),
		pos:     generic.NewMap[Position](w.Arche()),
		predID:  ecs.ComponentID[components.Predicted](w.Arche()),
	}
}

// Update resolves overlaps for one tick.
func (s *CollideSystem) Update(w *gw.World) {
	a := w.Arche()
	s.all = s.all[:0]
	q := s.players.Query(a)
	for q.Next() {
		g, p, h := q.Get()
		if !h.Alive() {
			continue // the dead are out of the game until they respawn
		}
		s.all = append(s.all, body{id: g.ID, e: q.Entity(), x: p.X, y: p.Y, predicted: a.Has(q.Entity(), s.predID)})
	}
	slices.SortFunc(s.all, func(a, b body) int { return int(a.id) - int(b.id) })
	s.push = s.push[:0]
	const minDist = 2 * Radius
	for i := range s.all {
		me := &s.all[i]
		if !me.predicted {
			continue
		}
		var px, py float32
		for j := range s.all {
			if i == j {
				continue
			}
			o := &s.all[j]
			dx, dy := me.x-o.x, me.y-o.y
			d := length(dx, dy)
			if d >= minDist {
				continue
			}
			n := d      // normalizes (dx, dy)
			if d == 0 { // exactly on top: separate along x by ID order
				dx, dy, n = 1, 0, 1
				if me.id < o.id {
					dx = -1
				}
			}
			k := (minDist - d) / 2 / n
			px, py = px+float32(dx*k), py+float32(dy*k)
		}
		if l := length(px, py); l > PushPerTick {
			k := PushPerTick / l
			px, py = float32(px*k), float32(py*k)
		}
		if px != 0 || py != 0 {
			s.push = append(s.push, pushed{e: me.e, dx: px, dy: py})
		}
	}
	lim := HalfSize - Radius
	for _, p := range s.push {
		pp := s.pos.Get(p.e)
		pp.X = max(-lim, min(lim, pp.X+p.dx))
		pp.Y = max(-lim, min(lim, pp.Y+p.dy))
	}
}
