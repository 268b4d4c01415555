package game

import (
	"cmp"
	"slices"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// Ball tags the ball: a server-owned disc of BallRadius that the players
// push (Config.Ball). Its position and velocity are a Position and a
// Velocity. It has no fields and an empty wire form.
type Ball struct{}

// Serialize is Ball's wire form: nothing.
func (*Ball) Serialize(*netsync.Stream) {}

// The ball's physics and when a client predicts it.
const (
	BallRadius = float32(0.4)
	// BallKick is the speed a touch adds to the player's own speed toward
	// the ball: a player walking into it sends it off faster than it
	// walks, one standing still nudges it away.
	BallKick = float32(2)
	// BallFriction slows the ball by so many units per second every
	// second, to a stop.
	BallFriction = float32(3)
	BallMaxSpeed = float32(12)
	// BallBounce is the share of its speed into a wall the ball keeps
	// when it bounces off.
	BallBounce = float32(0.7)
	// BallNear and BallFar are the distances from a player's centre to
	// the ball's within which its client predicts the ball, and beyond
	// which it interpolates it again (BallSwitch). Between them nothing
	// changes: a player at the edge does not switch every frame. BallNear
	// leaves the player about 2 units, a third of a second at MaxSpeed,
	// before a touch, time for the switch to take effect.
	BallNear = float32(3)
	BallFar  = float32(4.5)
)

// SpawnBall ends the arena's OnStart (StartServer) when it has the ball
// (Config.Ball): the ball at rest in the arena's centre, a ghost the
// server owns.
func (s *Schema) SpawnBall(srv *systems.Server) error {
	mk := generic.NewMap3[Position, Velocity, Ball](srv.World().Arche())
	_, err := srv.Ghosts().Spawn(mk.NewWith(&Position{}, &Velocity{}, &Ball{}), s.Ball, 0)
	return err
}

// BallSystem is the ball's physics, a prediction system of every endpoint
// (Physics): on the server always, on a client while it predicts the
// ball. Each living player overlapping the ball pushes it out to touching
// and sends it off at least at the player's speed toward it plus
// BallKick, summed in ghost ID order from the positions before any push;
// then friction slows it, it moves, and it bounces off the pillars and
// the arena's edge. The players are not slowed: the ball changes nothing
// the players' prediction computes. Every product is rounded on its own,
// as in the movement, so a client predicting the ball reaches the
// server's bits on any CPU. A client knows the other players where the
// server last showed them: a push by one of them it did not foresee is
// corrected like any misprediction.
type BallSystem struct {
	dt      float32
	players *generic.Filter4[components.Ghost, Position, Velocity, Health]
	balls   *generic.Filter2[Position, Velocity]
	all     []kicker
}

// kicker is a living player as the ball sees it.
type kicker struct {
	id           components.GhostID
	x, y, vx, vy float32
}

// NewBallSystem returns the ball's physics at a tick rate.
func NewBallSystem(tickRate int) *BallSystem {
	return &BallSystem{
		dt:      1 / float32(tickRate),
		players: generic.NewFilter4[components.Ghost, Position, Velocity, Health](),
		balls:   generic.NewFilter2[Position, Velocity]().With(generic.T2[Ball, components.Predicted]()...),
	}
}

// Update moves every predicted ball one tick.
func (s *BallSystem) Update(w *gw.World) {
	a := w.Arche()
	s.all = s.all[:0]
	q := s.players.Query(a)
	for q.Next() {
		g, p, v, h := q.Get()
		if h.Alive() {
			s.all = append(s.all, kicker{id: g.ID, x: p.X, y: p.Y, vx: v.X, vy: v.Y})
		}
	}
	slices.SortFunc(s.all, func(a, b kicker) int { return cmp.Compare(a.id, b.id) })
	bq := s.balls.Query(a)
	for bq.Next() {
		p, v := bq.Get()
		px, py := s.push(p, v)
		if speed := length(v.X, v.Y); speed > 0 {
			slowed := min(max(speed-float32(BallFriction*s.dt), 0), BallMaxSpeed)
			k := slowed / speed
			v.X, v.Y = float32(v.X*k), float32(v.Y*k)
		}
		p.X, p.Y = p.X+px+float32(v.X*s.dt), p.Y+py+float32(v.Y*s.dt)
		collideWalls(p, v, BallRadius, BallBounce)
	}
}

// push returns how far the overlapping players push the ball at p, and
// raises its velocity v toward each to the kick.
func (s *BallSystem) push(p *Position, v *Velocity) (px, py float32) {
	const reach = Radius + BallRadius
	for i := range s.all {
		o := &s.all[i]
		dx, dy := p.X-o.x, p.Y-o.y
		if dx >= reach || dx <= -reach || dy >= reach || dy <= -reach {
			continue
		}
		d := length(dx, dy)
		if d >= reach {
			continue
		}
		n := d
		if d == 0 { // exactly on top: out along x
			dx, n = 1, 1
		}
		nx, ny := dx/n, dy/n
		out := reach - d
		px, py = px+float32(nx*out), py+float32(ny*out)
		want := max(float32(o.vx*nx)+float32(o.vy*ny), 0) + BallKick
		if along := float32(v.X*nx) + float32(v.Y*ny); along < want {
			gain := want - along
			v.X, v.Y = v.X+float32(gain*nx), v.Y+float32(gain*ny)
		}
	}
	return px, py
}

// BallSwitch predicts the ball on one client while the client's player
// is near it and interpolates it when far (Client.Predict), with
// hysteresis: on within BallNear, off beyond BallFar. Predicted, a push by
// the player happens on the tick the player moves, as on the server;
// interpolated, the ball costs the client nothing and shows the server's
// motion exactly. It is a presentation system: it switches between
// frames, never in a replay. NewBallSwitch installs it.
type BallSwitch struct {
	// Err is the first error Predict returned, nil while every switch
	// succeeded.
	Err   error
	c     *systems.Client
	balls *generic.Filter2[components.Ghost, Position]
	pos   generic.Map[Position]
	pred  ecs.ID
	flips []flip
}

// flip is a switch to make once the query is closed.
type flip struct {
	id components.GhostID
	on bool
}

// NewBallSwitch adds a BallSwitch to a client's presentation stage and
// returns it.
func NewBallSwitch(c *systems.Client) *BallSwitch {
	a := c.World().Arche()
	bs := &BallSwitch{
		c:     c,
		balls: generic.NewFilter2[components.Ghost, Position]().With(generic.T[Ball]()),
		pos:   generic.NewMap[Position](a),
		pred:  ecs.ComponentID[components.Predicted](a),
	}
	c.Schedule().Add(gw.StagePresentation, bs)
	return bs
}

// Update switches each ball by the player's distance to it.
func (bs *BallSwitch) Update(w *gw.World) {
	me, ok := bs.c.Player()
	if !ok || !w.Arche().Alive(me) || !bs.pos.Has(me) {
		return
	}
	at := *bs.pos.Get(me)
	bs.flips = bs.flips[:0]
	q := bs.balls.Query(w.Arche())
	for q.Next() {
		g, p := q.Get()
		d, predicted := length(p.X-at.X, p.Y-at.Y), q.Has(bs.pred)
		switch {
		case !predicted && d < BallNear:
			bs.flips = append(bs.flips, flip{g.ID, true})
		case predicted && d > BallFar:
			bs.flips = append(bs.flips, flip{g.ID, false})
		}
	}
	for _, f := range bs.flips {
		if err := bs.c.Predict(f.id, f.on); err != nil && bs.Err == nil {
			bs.Err = err
		}
	}
}
