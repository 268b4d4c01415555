package lagcomp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/raycast"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// Spot is a position in three dimensions, for scenes that use z.
type Spot struct{ X, Y, Z float32 }

// gridScene is a compensator recording a crowd laid out one way, whose
// entities come and go.
type gridScene struct {
	w      *gw.World
	lc     *lagcomp.Compensator
	m      generic.Map3[Spot, Facing, components.Hitboxes]
	rng    *rand.Rand
	es     []ecs.Entity
	layout string
	last   gw.Tick // the newest tick recorded
}

// sphereBoxes is one sphere of radius r about the position.
func sphereBoxes(r float32) components.Hitboxes {
	hb := components.Hitboxes{N: 1}
	hb.Boxes[0] = components.Hitbox{Shape: components.ShapeSphere, Part: body, Radius: r}
	return hb
}

// place returns where the layout puts an entity, and its hitboxes.
func (s *gridScene) place() (Spot, components.Hitboxes) {
	r := s.rng
	spread := Spot{X: r.Float32()*40 - 20, Y: r.Float32()*40 - 20, Z: r.Float32()*4 - 2}
	switch s.layout {
	case "crowd": // a dense heap, many entities a cell
		return Spot{X: r.Float32() * 2, Y: r.Float32() * 2}, bodyBoxes()
	case "line": // every y equal: the grid is one row high
		return Spot{X: r.Float32()*60 - 30, Y: 3}, bodyBoxes()
	case "point": // every entity on one point: equal entries, ties by row
		return Spot{X: 1, Y: -2}, bodyBoxes()
	case "sizes": // most reach farther than the spread's cell
		if r.IntN(4) > 0 {
			return spread, sphereBoxes(2 + r.Float32()*6)
		}
	case "odd": // positions and reaches the grid leaves to every shot
		switch r.IntN(12) {
		case 0:
			spread.X = float32(math.NaN())
		case 1:
			spread.Y = float32(math.Inf(-1))
		case 2:
			return spread, sphereBoxes(50)
		case 3:
			spread.Z = 1e6
		case 4:
			spread.X *= 1e3
		}
	}
	return spread, bodyBoxes()
}

// newGridScene makes n entities laid out as layout, none recorded yet.
func newGridScene(t testing.TB, seed uint64, n int, layout string) *gridScene {
	w := gw.NewWorld(gw.WorldOptions{})
	lc, err := lagcomp.New(w, lagcomp.Options{Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
		p, f := lagcomp.Get[Spot](r), lagcomp.Get[Facing](r)
		return [3]float32{p.X, p.Y, p.Z}, f.Yaw
	}})
	require.NoError(t, err)
	require.NoError(t, lagcomp.Register[Spot](lc))
	require.NoError(t, lagcomp.Register[Facing](lc))
	s := &gridScene{w: w, lc: lc, m: generic.NewMap3[Spot, Facing, components.Hitboxes](w.Arche()),
		rng: rand.New(rand.NewPCG(seed, 7)), layout: layout}
	for range n {
		s.spawn()
	}
	return s
}

// spawn adds an entity where the layout puts one.
func (s *gridScene) spawn() {
	p, hb := s.place()
	s.es = append(s.es, s.m.NewWith(&p, &Facing{Yaw: s.rng.Float32() * 6}, &hb))
}

// step moves the entities, some walking, some teleporting, and (but on
// one point) has two leave and two others come, so rows move.
func (s *gridScene) step() {
	for i, e := range s.es {
		p, f, _ := s.m.Get(e)
		switch i % 10 {
		case 0:
			*p, _ = s.place()
		case 1, 2, 3, 4:
			p.X, p.Y, f.Yaw = p.X+s.rng.Float32()-0.5, p.Y+s.rng.Float32()-0.5, f.Yaw+0.1
		}
	}
	if s.layout == "point" {
		return
	}
	for range 2 {
		i := s.rng.IntN(len(s.es))
		s.w.Arche().RemoveEntity(s.es[i])
		s.es = append(s.es[:i], s.es[i+1:]...)
		s.spawn()
	}
}

// record records the scene as tick.
func (s *gridScene) record(tick gw.Tick) {
	s.w.SetTick(tick)
	s.lc.Record(tick)
	s.last = tick
}

// ray returns a random ray of one of several kinds, normalized as a shot
// is: from an entity toward another, from outside the crowd, along an
// axis, diagonal, straight up, with no direction or an almost flat one,
// with a short, long or infinite range.
func (s *gridScene) ray() raycast.Ray {
	r := s.rng
	pick := func() raycast.Vec {
		p, _, _ := s.m.Get(s.es[r.IntN(len(s.es))])
		return raycast.Vec{float64(p.X), float64(p.Y), float64(p.Z)}
	}
	o := pick()
	if r.IntN(3) == 0 || !(o[0]-o[0] == 0 && o[1]-o[1] == 0 && o[2]-o[2] == 0) {
		o = raycast.Vec{r.Float64()*120 - 60, r.Float64()*120 - 60, r.Float64()*6 - 3}
	}
	var d [3]float32
	switch r.IntN(8) {
	case 0:
		d[r.IntN(3)] = float32(1 - 2*r.IntN(2))
	case 1:
		d = [3]float32{float32(1 - 2*r.IntN(2)), float32(1 - 2*r.IntN(2)), 0}
	case 2:
		d = [3]float32{0, 0, 0}
	case 3:
		d = [3]float32{float32(1 - 2*r.IntN(2)), 1e-30, float32(r.NormFloat64())}
	case 4, 5:
		d = [3]float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64() * 0.1)}
	default:
		q := pick()
		d = [3]float32{float32(q[0] - o[0]), float32(q[1] - o[1]), float32(q[2] - o[2])}
	}
	dir := raycast.Vec{float64(d[0]), float64(d[1]), float64(d[2])}
	if l := math.Sqrt(raycast.Dot(dir, dir)); l > 0 {
		dir = raycast.Scale(dir, 1/l)
	}
	return raycast.Ray{Origin: o, Dir: dir, Max: [...]float64{5, 40, 1000, math.Inf(1)}[r.IntN(4)]}
}

// Walking a tick's grid lists exactly the entities, entries and order
// that testing every entity's reach does: crowds laid out in six ways
// (spread in 3D, heaped, on a line, on one point, mostly larger than a
// cell, and with NaN, infinite, huge and far positions) recorded for 60
// ticks through the tick counter's wrap (the history's slots reused),
// entities coming and going, every third tick recorded again after
// moving them (its grid and the sweeps to it change) and every third
// after turning them (its grid kept), with one more entity or some grown
// now and then, and after each record 20 random rays at random views,
// swept and not.
func TestGridListsWhatTestingEveryReachLists(t *testing.T) {
	for i, layout := range []string{"spread", "crowd", "line", "point", "sizes", "odd"} {
		for _, n := range []int{30, 300} {
			t.Run(fmt.Sprintf("%s-%d", layout, n), func(t *testing.T) {
				s := newGridScene(t, uint64(i), n, layout)
				var rays, lists, several, grid, every uint64
				check := func(recorded int) {
					for range 20 {
						ray := s.ray()
						tick := s.last.Add(-s.rng.IntN(min(recorded, 25)))
						frac := float32(0)
						if tick != s.last && s.rng.IntN(4) > 0 {
							frac = s.rng.Float32()
						}
						before := s.lc.Stats().Tested
						s.lc.SetGrid(true)
						got, err := s.lc.Near(tick, frac, ray)
						require.NoError(t, err)
						mid := s.lc.Stats().Tested
						s.lc.SetGrid(false)
						want, err := s.lc.Near(tick, frac, ray)
						require.NoError(t, err)
						rays, grid, every = rays+1, grid+mid-before, every+s.lc.Stats().Tested-mid
						require.Equal(t, want, got, "ray %+v at %d%+.3f", ray, tick, frac)
						if len(want) > 0 {
							lists++
						}
						if len(want) > 1 {
							several++
						}
					}
				}
				first := gw.Tick(math.MaxUint32 - 14)
				for k := range 60 {
					s.step()
					s.record(first.Add(k))
					check(k + 1)
					switch k % 3 {
					case 0: // moved: a new grid
						s.step()
						s.record(first.Add(k))
						check(k + 1)
					case 1: // only turned: the grid kept, unless one came or some grew
						for i, e := range s.es {
							_, f, hb := s.m.Get(e)
							f.Yaw++
							if k%9 == 7 && i%3 == 0 {
								*hb = sphereBoxes(3)
							}
						}
						if k%9 == 4 {
							for range 10 {
								s.spawn()
							}
						}
						s.record(first.Add(k))
						check(k + 1)
					}
				}
				t.Logf("%d of %d rays near an entity, %d near several; reaches tested: %d walking the grid, %d every one", lists, rays, several, grid, every)
				assert.Greater(t, lists, rays/8, "rays pass near entities")
				assert.Greater(t, several, rays/40, "rays pass near several, whose order counts")
				switch layout {
				case "spread":
					assert.Less(t, 3*grid, every, "the grid tests a fraction of the reaches")
				case "sizes": // the cells grew to hold the larger entities
					assert.Less(t, 5*grid, 3*every, "the grid tests a fraction of the reaches")
				}
			})
		}
	}
}

// The test of a reach rounds: far along a ray, a sphere whose centre lies
// a float32 step beyond its radius from the ray passes it. Walking the
// grid lists it too: its cell and the line's test are widened for that
// rounding.
func TestGridKeepsWhatTheTestsRoundingPasses(t *testing.T) {
	s := newGridScene(t, 9, 30, "crowd")
	hb := sphereBoxes(0.5) // a reach of exactly 0.5, every entity's
	for _, e := range s.es {
		_, _, h := s.m.Get(e)
		*h = hb
	}
	y := math.Nextafter32(0.5, 1)
	far := s.m.NewWith(&Spot{X: 1e6, Y: y}, &Facing{}, &hb)
	s.record(1)
	ray := raycast.Ray{Dir: raycast.Vec{1, 0, 0}, Max: 2e6}
	s.lc.SetGrid(false)
	want, err := s.lc.Near(1, 0, ray)
	require.NoError(t, err)
	s.lc.SetGrid(true)
	got, err := s.lc.Near(1, 0, ray)
	require.NoError(t, err)
	require.Equal(t, want, got)
	v, err := s.lc.History().View(1)
	require.NoError(t, err)
	row, ok := v.Row(far)
	require.True(t, ok)
	assert.Contains(t, got, lagcomp.Near{Row: int32(row), At: 1e6}, "the far sphere, %v beyond its reach from the ray, passes", float64(y)-0.5)
}
