package game

import (
	"math"
	"math/bits"
	"slices"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// Physics returns the arena's prediction systems (systems.Game.Prediction),
// in the order every endpoint must run them. The collisions come first: a
// client knows the other players only as past ticks ended them, and after
// the movement the server would see some elsewhere (one pressed into a
// pillar is out of it until its neighbour pushes it back), which a client
// touching them would mispredict on every snapshot, at rest too. The
// rockets and the ball follow the players' movement: they read it and
// change nothing it computes.
func Physics(schema *Schema, tickRate int) []func(*gw.World) gw.System {
	return []func(*gw.World) gw.System{
		func(w *gw.World) gw.System { return NewCollideSystem(w) },
		func(*gw.World) gw.System { return NewMoveSystem(tickRate) },
		func(*gw.World) gw.System { return NewShoveSystem() },
		func(w *gw.World) gw.System { return NewRocketSystem(w, schema, tickRate) },
		func(*gw.World) gw.System { return NewBallSystem(tickRate) },
	}
}

// NewGame returns the arena for both ends at a tick rate: its schema, its
// physics, the server's start (StartServer: the kill feed, the chat
// relay and the ball) and the server's respawns, with spawn as the
// server's OnConnect and leave (nil: the player is removed) as its
// OnDisconnect. Lag compensation, the shots,
// the Armoury and the measurements are added to each endpoint after (see
// Endpoints).
func NewGame(schema *Schema, tickRate int, spawn func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error),
	leave func(w *gw.World, conn components.ConnID, owned []ecs.Entity)) *systems.Game {
	return &systems.Game{
		Schema:       schema.Schema,
		TickRate:     tickRate,
		OnConnect:    spawn,
		OnStart:      schema.StartServer,
		OnDisconnect: leave,
		Prediction:   Physics(schema, tickRate),
		Simulation:   []func(*gw.World) gw.System{func(*gw.World) gw.System { return NewRespawnSystem() }},
	}
}

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
// Which players are tested against which (see candidates) never changes
// the result: it is bit-identical to testing every pair. Run first in the
// tick (Physics), it finds every player where the previous tick's
// snapshot left it.
type CollideSystem struct {
	players   *generic.Filter3[components.Ghost, Position, Health]
	pos       generic.Map[Position]
	predID    ecs.ID
	all       []body
	spare     []body   // all's other buffer: Update sorts from one into the other
	byID      []uint64 // uint64(id)<<32 | index in spare, ascending
	predicted int      // predicted bodies in all
	finite    bool     // every coordinate in all is finite (see candidates)
	byX       []uint64 // xKey(x)<<32 | index in all, ascending
	line      []spot   // all in byX order, for the sweep to walk
	near      []uint64 // bitset over all: one player's candidates; all zero between players
	push      []pushed
}

type body struct {
	id        components.GhostID
	e         ecs.Entity
	x, y      float32
	predicted bool
}

// spot is a body as the sweep walks it: i indexes all.
type spot struct {
	x, y      float32
	i         uint32
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

// minDist is the distance below which two players overlap.
const minDist = 2 * Radius

// sweepMin is the fewest predicted players for which sorting everyone by
// x pays: below it (a client predicts one player) scanning everyone per
// predicted player takes fewer instructions (measured from 8 to 64
// players, the two break even near 8).
const sweepMin = 8

// Update resolves overlaps for one tick.
func (s *CollideSystem) Update(w *gw.World) {
	a := w.Arche()
	s.all = s.all[:0]
	s.predicted, s.finite = 0, true
	q := s.players.Query(a)
	for q.Next() {
		g, p, h := q.Get()
		if !h.Alive() {
			continue // the dead are out of the game until they respawn
		}
		pred := q.Has(s.predID)
		if pred {
			s.predicted++
		}
		if (p.X-p.X)+(p.Y-p.Y) != 0 { // NaN or ±Inf
			s.finite = false
		}
		s.all = append(s.all, body{id: g.ID, e: q.Entity(), x: p.X, y: p.Y, predicted: pred})
	}
	// Sorting plain keys calls no comparison function, which matters on a
	// client, whose world stores the players far from ID order. Ghost IDs
	// are unique (never reused), so this is the one order by ID.
	s.byID = s.byID[:0]
	for i := range s.all {
		s.byID = append(s.byID, uint64(s.all[i].id)<<32|uint64(i))
	}
	slices.Sort(s.byID)
	s.all, s.spare = s.spare[:0], s.all
	for _, k := range s.byID {
		s.all = append(s.all, s.spare[uint32(k)])
	}
	words := (len(s.all) + 63) / 64
	if cap(s.near) < words {
		s.near = make([]uint64, words)
	}
	s.near = s.near[:words]
	if cap(s.push) < len(s.all) { // room for every player pushed: no new high in a crowded tick
		s.push = make([]pushed, 0, len(s.all))
	}
	s.push = s.push[:0]
	if s.finite && s.predicted >= sweepMin {
		s.sweep()
	} else {
		for i := range s.all {
			if s.all[i].predicted {
				s.scan(i)
				s.resolve(i)
			}
		}
	}
	lim := HalfSize - Radius
	for _, p := range s.push {
		pp := s.pos.Get(p.e)
		pp.X = max(-lim, min(lim, pp.X+p.dx))
		pp.Y = max(-lim, min(lim, pp.Y+p.dy))
	}
}

// Candidates. When every coordinate is finite, a pair whose float32
// difference dx = me.x-o.x has |dx| >= minDist cannot overlap,
// bit-exactly: float64(dx)² is exact (24 significant bits squared fit in
// 53), adding dy² (never NaN) and the square root round monotonically and
// √(dx²) = |dx| is representable, so length(dx, dy) >= |dx|; the same for
// dy. The candidates of a player are the others not ruled out this way
// (all the others if any coordinate is NaN or infinite, which can make
// differences NaN); resolve decides on each with the exact test, as it
// would for any pair.

// scan marks the candidates of body i among all the others.
func (s *CollideSystem) scan(i int) {
	me := &s.all[i]
	for j := range s.all {
		o := &s.all[j]
		if j == i || s.finite && (apart(me.x-o.x) || apart(me.y-o.y)) {
			continue
		}
		s.near[j>>6] |= 1 << (j & 63)
	}
}

// sweep resolves every predicted body, finding its candidates among its
// neighbours in x order: for a fixed me.x, me.x-o.x rounds monotonically
// in o.x, so walking away from me in x order, the first o with
// |me.x-o.x| >= minDist ends the walk on that side. It needs every
// coordinate finite: NaN has no place in the order.
func (s *CollideSystem) sweep() {
	s.byX = s.byX[:0]
	for i := range s.all {
		s.byX = append(s.byX, uint64(xKey(s.all[i].x))<<32|uint64(i))
	}
	slices.Sort(s.byX)
	s.line = s.line[:0]
	for _, k := range s.byX {
		b := &s.all[uint32(k)]
		s.line = append(s.line, spot{x: b.x, y: b.y, i: uint32(k), predicted: b.predicted})
	}
	for r := range s.line {
		me := &s.line[r]
		if !me.predicted {
			continue
		}
		for _, o := range slices.Backward(s.line[:r]) {
			if me.x-o.x >= minDist {
				break
			}
			if !apart(me.y - o.y) {
				s.near[o.i>>6] |= 1 << (o.i & 63)
			}
		}
		for _, o := range s.line[r+1:] {
			if me.x-o.x <= -minDist {
				break
			}
			if !apart(me.y - o.y) {
				s.near[o.i>>6] |= 1 << (o.i & 63)
			}
		}
		s.resolve(int(me.i))
	}
}

// apart reports whether a coordinate difference alone rules a pair out.
func apart(d float32) bool { return d >= minDist || d <= -minDist }

// xKey maps a finite float32 to a uint32 in the same order (-0 just
// below +0, which compare equal).
func xKey(x float32) uint32 {
	b := math.Float32bits(x)
	if b>>31 != 0 {
		return ^b
	}
	return b | 1<<31
}

// resolve sums the pushes on body i from its candidates in s.near, in
// ascending index (ghost ID) order, records the capped total and clears
// s.near.
func (s *CollideSystem) resolve(i int) {
	me := &s.all[i]
	var px, py float32
	for w, set := range s.near {
		s.near[w] = 0
		for ; set != 0; set &= set - 1 {
			o := &s.all[w<<6|bits.TrailingZeros64(set)]
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
	}
	if l := length(px, py); l > PushPerTick {
		k := PushPerTick / l
		px, py = float32(px*k), float32(py*k)
	}
	if px != 0 || py != 0 {
		s.push = append(s.push, pushed{e: me.e, dx: px, dy: py})
	}
}
