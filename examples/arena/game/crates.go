package game

import (
	"math"
	"slices"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// Crate tags a crate: a server-owned disc of Radius at rest until a
// player runs into it (the -crates flag). Crates are the arena's scale
// test: many ghosts that rarely change. It has no fields and an empty
// wire form.
type Crate struct{}

// Serialize is Crate's wire form: nothing.
func (*Crate) Serialize(*netsync.Stream) {}

// MaxCrates bounds Config.Crates.
const MaxCrates = 10000

// MaxViewRadius bounds Config.ViewRadius: the arena's diagonal, and more.
const MaxViewRadius = 4 * HalfSize

// CratePoints returns where n crates start: a sunflower spiral over the
// arena (even cover, no two alike, the same for every n's prefix order),
// on the wire's grid and out of the pillars.
func CratePoints(n int) []Position {
	golden := math.Pi * (3 - math.Sqrt(5))
	r := float64(HalfSize - Radius)
	ps := make([]Position, n)
	for i := range ps {
		d := r * math.Sqrt((float64(i)+0.5)/float64(n))
		a := float64(i) * golden
		p := Position{X: float32(d * math.Cos(a)), Y: float32(d * math.Sin(a))}
		pushOutOfWalls(&p, &Velocity{})
		ps[i] = Position{X: coord.Quantize(p.X), Y: coord.Quantize(p.Y)}
	}
	return ps
}

// spawnCrates makes Config.Crates server-owned crate ghosts.
func (m *Match) spawnCrates(s *systems.Server) error {
	mk := generic.NewMap2[Position, Crate](s.World().Arche())
	for _, p := range CratePoints(m.Config.Crates) {
		if _, err := s.Ghosts().Spawn(mk.NewWith(&p, &Crate{}), m.Schema.Crate, 0); err != nil {
			return err
		}
	}
	return nil
}

// ShoveSystem pushes every predicted crate out of the living players it
// overlaps: by the whole overlap, away from each player's centre, summed
// in ghost ID order from the positions before any push, then out of the
// walls and pillars. Players are not slowed. Like the players'
// collisions it runs in the prediction stage of every world, so a world
// that predicts crates computes the server's shove; clients interpolate
// server-owned crates by default, so there it finds none.
type ShoveSystem struct {
	players *generic.Filter3[components.Ghost, Position, Health]
	crates  *generic.Filter1[Position]
	all     []body
}

// NewShoveSystem returns the crate shove.
func NewShoveSystem() *ShoveSystem {
	return &ShoveSystem{
		players: generic.NewFilter3[components.Ghost, Position, Health](),
		crates:  generic.NewFilter1[Position]().With(generic.T2[Crate, components.Predicted]()...),
	}
}

// Update shoves the crates for one tick.
func (s *ShoveSystem) Update(w *gw.World) {
	a := w.Arche()
	s.all = s.all[:0]
	q := s.players.Query(a)
	for q.Next() {
		g, p, h := q.Get()
		if h.Alive() {
			s.all = append(s.all, body{id: g.ID, e: q.Entity(), x: p.X, y: p.Y})
		}
	}
	if len(s.all) == 0 {
		return
	}
	slices.SortFunc(s.all, func(a, b body) int { return int(a.id) - int(b.id) })
	const minDist = 2 * Radius
	lim := HalfSize - Radius
	var stop Velocity // crates have none; the walls' stop goes nowhere
	cq := s.crates.Query(a)
	for cq.Next() {
		c := cq.Get()
		var px, py float32
		for i := range s.all {
			o := &s.all[i]
			dx, dy := c.X-o.x, c.Y-o.y
			if dx >= minDist || dx <= -minDist || dy >= minDist || dy <= -minDist {
				continue
			}
			d := length(dx, dy)
			if d >= minDist {
				continue
			}
			n := d
			if d == 0 { // exactly on top: out along x
				dx, n = 1, 1
			}
			k := (minDist - d) / n
			px, py = px+float32(dx*k), py+float32(dy*k)
		}
		if px == 0 && py == 0 {
			continue
		}
		c.X = max(-lim, min(lim, c.X+px))
		c.Y = max(-lim, min(lim, c.Y+py))
		pushOutOfWalls(c, &stop)
	}
}
