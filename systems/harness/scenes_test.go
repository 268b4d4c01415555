package harness_test

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// The scale scenes of issue 9 (docs/performance.md): S1, Glenn Fiedler's
// 901 cubes, and S3, naia's idle scene of static ghosts. Both are built
// with the public API only, so the figures follow the framework's send
// path whatever it becomes.

// cubePos is a cube's centre, on Fiedler's grid: 1/512 m over ±256 m
// across the floor and 0..32 m up (19, 19 and 15 bits).
type cubePos struct{ X, Y, Z float32 }

var (
	floorCoord  = netsync.Range(-256, 256, 1.0/512)
	heightCoord = netsync.Range(0, 32, 1.0/512)
)

func (p *cubePos) Serialize(s *netsync.Stream) {
	s.Float(&p.X, floorCoord)
	s.Float(&p.Y, floorCoord)
	s.Float(&p.Z, heightCoord)
}

// cubeRot is a cube's orientation in smallest-three form, written with
// the existing field codecs: the index of the quaternion's largest
// component (2 bits) and the other three, signed so that the largest is
// positive, each within ±1/√2 in 9 bits: 29 bits, Fiedler's choice. The
// largest is √(1 − a² − b² − c²) on the receiving side.
type cubeRot struct {
	Largest uint8
	A, B, C float32
}

// rotStep is cubeRot's quantization step: 512 codes over ±1/√2.
const rotStep = 2 * rotBound / 511

const rotBound = 0.70710678

var smallComponent = netsync.Range(-rotBound, rotBound, rotStep)

func (r *cubeRot) Serialize(s *netsync.Stream) {
	netsync.Int(s, &r.Largest, 0, 3)
	s.Float(&r.A, smallComponent)
	s.Float(&r.B, smallComponent)
	s.Float(&r.C, smallComponent)
}

// smallestThree returns q (x, y, z, w) in smallest-three form.
func smallestThree(q [4]float32) cubeRot {
	l := 0
	for i := 1; i < 4; i++ {
		if abs32(q[i]) > abs32(q[l]) {
			l = i
		}
	}
	sign := float32(1)
	if q[l] < 0 {
		sign = -1
	}
	r := cubeRot{Largest: uint8(l)}
	out := [3]*float32{&r.A, &r.B, &r.C}
	k := 0
	for i := range q {
		if i != l {
			*out[k] = sign * q[i]
			k++
		}
	}
	return r
}

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

// tumble is the server-only full-precision orientation (x, y, z, w) the
// simulation integrates; cubeRot is its replicated form.
type tumble struct {
	Q [4]float32
	V [2]float32 // the busy scene's sliding velocity, metres per tick
}

// viewer is the ghost every connection owns: the server needs a player
// per connection, and a viewer costs nothing but its identity.
type viewer struct{}

func (*viewer) Serialize(*netsync.Stream) {}

// sceneSchema replicates cubes (position, orientation), static ghosts
// (position) and viewers.
type sceneSchema struct {
	*netsync.Schema
	cube, static, viewer netsync.GhostTypeID
}

func newSceneSchema() (*sceneSchema, error) {
	var b netsync.SchemaBuilder
	pos := netsync.Component[cubePos](&b)
	rot := netsync.Component[cubeRot](&b)
	view := netsync.Component[viewer](&b)
	// A smallest-three form cannot be blended field by field across a
	// change of its largest component; cubes at rest need no blend.
	b.Interpolate(rot, netsync.Interpolation{Snap: true})
	s := &sceneSchema{cube: b.GhostType("cube", pos, rot), static: b.GhostType("static", pos), viewer: b.GhostType("viewer", view)}
	var err error
	s.Schema, err = b.Build()
	return s, err
}

// Fiedler's scene, redone: cubesPerSide² small cubes rest on the floor in
// a grid, and one big cube, the pusher, rolls round a circle of
// pusherOrbit metres through them at pusherSpeed m/s. A small cube closer
// to the pusher's centre than pushRadius is moved straight out to
// pushRadius and rolls by the distance moved (about the horizontal axis
// across the push, as a cube of half-size cubeHalf rolls); cubes neither
// collide with each other nor slide, so a cube moves only while the
// pusher touches it and the rest of the floor is at rest. The simulation
// is a function of the tick alone (float32 state, float64 trigonometry):
// the same run gives the same bytes.
const (
	cubesPerSide = 30
	cubeSpacing  = 1.25
	cubeHalf     = 0.5
	pusherOrbit  = 10
	pusherSpeed  = 4
	pushRadius   = 1.5
)

// S1 busy: the same floor, where besides the pusher a burst every
// burstEvery ticks throws the cubes within burstRadius of a cube (chosen
// by a hash of the tick) outwards at up to burstSpeed metres per tick,
// and a thrown cube slides and rolls, its speed damped by burstDamping a
// tick, until it is below restSpeed (a quarter of the position step).
// About 14 % of the cubes move on an average tick (the benchmark reports
// the share it measured); the skeptic's scene of issue 27.
const (
	burstEvery   = 20
	burstRadius  = 4
	burstSpeed   = 0.12
	burstDamping = 0.96
	restSpeed    = 1.0 / 2048
)

// cubeScene is S1's world on the server: the cubes in ID order, the
// pusher last.
type cubeScene struct {
	schema *sceneSchema
	busy   bool // S1 busy: bursts and sliding (above)
	all    bool // every cube slides round a small circle every tick
	cubes  []ecs.Entity
	ids    []components.GhostID
	// stopAt, when not zero, is the tick from which the pusher stands
	// still, so the whole scene comes to rest.
	stopAt gw.Tick
	state  generic.Map3[cubePos, cubeRot, tumble]
	naive  generic.Map2[cubePos, tumble]
	shown  generic.Map2[cubePos, cubeRot]
}

// cubeCount is S1's ghost count: Fiedler's 901.
const cubeCount = cubesPerSide*cubesPerSide + 1

// setup spawns the cubes and installs the simulation.
func (c *cubeScene) setup(s *systems.Server) error {
	c.cubes, c.ids = nil, nil // a twin's setup runs again on a fresh world
	c.state = generic.NewMap3[cubePos, cubeRot, tumble](s.World().Arche())
	c.naive = generic.NewMap2[cubePos, tumble](s.World().Arche())
	c.shown = generic.NewMap2[cubePos, cubeRot](s.World().Arche())
	spawn := c.state
	identity := tumble{Q: [4]float32{0, 0, 0, 1}}
	rest := smallestThree(identity.Q)
	for i := range cubeCount {
		p := cubePos{Z: cubeHalf}
		if i < cubeCount-1 {
			p.X = (float32(i%cubesPerSide) - (cubesPerSide-1)/2.0) * cubeSpacing
			p.Y = (float32(i/cubesPerSide) - (cubesPerSide-1)/2.0) * cubeSpacing
		} else {
			p.X, p.Z = pusherOrbit, 1
		}
		e := spawn.NewWith(&p, &rest, &identity)
		id, err := s.Ghosts().Spawn(e, c.schema.cube, 0)
		if err != nil {
			return err
		}
		c.cubes, c.ids = append(c.cubes, e), append(c.ids, id)
	}
	s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(c.simulate))
	return nil
}

// pusherAt is the pusher's centre at tick t (60 Hz).
func pusherAt(t gw.Tick) (x, y float32) {
	a := float64(t) / 60 * pusherSpeed / pusherOrbit
	return float32(pusherOrbit * math.Cos(a)), float32(pusherOrbit * math.Sin(a))
}

// simulate is one tick of the scene (see the constants above).
func (c *cubeScene) simulate(w *gw.World) {
	t := w.Tick()
	if c.stopAt != 0 && !t.Before(c.stopAt) {
		return
	}
	m := &c.state
	px, py := pusherAt(t)
	pusher := c.cubes[len(c.cubes)-1]
	pp, pr, pt := m.Get(pusher)
	roll(pp, pr, pt, px-pp.X, py-pp.Y, 1)
	for _, e := range c.cubes[:len(c.cubes)-1] {
		p, r, tb := m.Get(e)
		dx, dy := p.X-px, p.Y-py
		d := float32(math.Hypot(float64(dx), float64(dy)))
		if d >= pushRadius || d == 0 {
			continue
		}
		k := (pushRadius - d) / d
		roll(p, r, tb, dx*k, dy*k, cubeHalf)
	}
	if c.busy {
		c.burst(t)
	}
	if c.all {
		c.circle(t)
	}
}

// circle moves every small cube along a circle of allRadius metres, a
// quarter turn a second with its own phase, rolling as it goes: every
// cube changes on every tick, the worst case of issue 27.
func (c *cubeScene) circle(t gw.Tick) {
	m := &c.state
	for i, e := range c.cubes[:len(c.cubes)-1] {
		p, r, tb := m.Get(e)
		a := float64(t)*math.Pi/2/60 + float64(i)
		step := allRadius * math.Pi / 2 / 60
		roll(p, r, tb, float32(-math.Sin(a)*step), float32(math.Cos(a)*step), cubeHalf)
	}
}

// allRadius is the circle every cube of the all-moving scene follows.
const allRadius = 0.5

// burst is the busy scene's part of a tick: every cube slides by its
// velocity, which damps, and every burstEvery ticks the cubes near one
// are thrown outwards.
func (c *cubeScene) burst(t gw.Tick) {
	m := &c.state
	small := c.cubes[:len(c.cubes)-1]
	if t%burstEvery == 0 {
		h := uint64(t) * 0x9e3779b97f4a7c15 // a hash of the tick: the same run throws the same cubes
		h ^= h >> 31
		cp, _, _ := m.Get(small[h%uint64(len(small))])
		cx, cy := cp.X, cp.Y
		for _, e := range small {
			p, _, tb := m.Get(e)
			dx, dy := p.X-cx, p.Y-cy
			d := float32(math.Hypot(float64(dx), float64(dy)))
			if d >= burstRadius || d == 0 {
				continue
			}
			k := burstSpeed * (1 - d/burstRadius) / d
			tb.V[0] += dx * k
			tb.V[1] += dy * k
		}
	}
	for _, e := range small {
		p, r, tb := m.Get(e)
		if tb.V == [2]float32{} {
			continue
		}
		roll(p, r, tb, tb.V[0], tb.V[1], cubeHalf)
		tb.V[0] *= burstDamping
		tb.V[1] *= burstDamping
		if math.Hypot(float64(tb.V[0]), float64(tb.V[1])) < restSpeed {
			tb.V = [2]float32{}
		}
	}
}

// cubeState is a cube's replicated state, for counting the cubes that
// moved on a tick.
type cubeState struct {
	p cubePos
	r cubeRot
}

// moved returns how many cubes' replicated state differs from prev, and
// makes prev the current state (prev holds one entry per cube).
func (c *cubeScene) moved(prev []cubeState) int {
	n := 0
	for i, e := range c.cubes {
		p, r := c.shown.Get(e)
		if now := (cubeState{*p, *r}); now != prev[i] {
			prev[i] = now
			n++
		}
	}
	return n
}

// roll moves a cube by (dx, dy) and turns it as a cube of half-size half
// rolls that far.
func roll(p *cubePos, r *cubeRot, tb *tumble, dx, dy, half float32) {
	d := math.Hypot(float64(dx), float64(dy))
	if d == 0 {
		return
	}
	p.X += dx
	p.Y += dy
	// The rolling axis is up × direction; the angle is distance / half.
	ax, ay := -float64(dy)/d, float64(dx)/d
	s, co := math.Sincos(d / float64(half) / 2)
	rq := [4]float64{ax * s, ay * s, 0, co}
	q := tb.Q
	n := [4]float64{
		rq[3]*float64(q[0]) + rq[0]*float64(q[3]) + rq[1]*float64(q[2]) - rq[2]*float64(q[1]),
		rq[3]*float64(q[1]) - rq[0]*float64(q[2]) + rq[1]*float64(q[3]) + rq[2]*float64(q[0]),
		rq[3]*float64(q[2]) + rq[0]*float64(q[1]) - rq[1]*float64(q[0]) + rq[2]*float64(q[3]),
		rq[3]*float64(q[3]) - rq[0]*float64(q[0]) - rq[1]*float64(q[1]) - rq[2]*float64(q[2]),
	}
	l := math.Sqrt(n[0]*n[0] + n[1]*n[1] + n[2]*n[2] + n[3]*n[3])
	for i := range n {
		tb.Q[i] = float32(n[i] / l)
	}
	*r = smallestThree(tb.Q)
}

// naiveCubes appends every cube's full float32 state (position, then the
// quaternion x, y, z, w) with encoding/binary: the naive snapshot S1 is
// measured against, 28 bytes per cube.
func (c *cubeScene) naiveCubes(buf []byte) []byte {
	for _, e := range c.cubes {
		p, tb := c.naive.Get(e)
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(p.X))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(p.Y))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(p.Z))
		for _, v := range tb.Q {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return buf
}

// staticScene is S3's world on the server: ghosts at rest, never changed.
type staticScene struct {
	schema *sceneSchema
	n      int
	ghosts []ecs.Entity
	ids    []components.GhostID
	pos    generic.Map1[cubePos]
}

func (st *staticScene) setup(s *systems.Server) error {
	st.ghosts, st.ids = nil, nil // a twin's setup runs again on a fresh world
	st.pos = generic.NewMap1[cubePos](s.World().Arche())
	spawn := st.pos
	for i := range st.n {
		p := cubePos{X: float32(i%100) - 50, Y: float32(i/100%100) - 50, Z: float32(i / 10000)}
		e := spawn.NewWith(&p)
		id, err := s.Ghosts().Spawn(e, st.schema.static, 0)
		if err != nil {
			return err
		}
		st.ghosts, st.ids = append(st.ghosts, e), append(st.ids, id)
	}
	return nil
}

// naiveStatic appends every static ghost's float32 position with
// encoding/binary: S3's naive snapshot, 12 bytes per ghost.
func (st *staticScene) naiveStatic(buf []byte) []byte {
	for _, e := range st.ghosts {
		p := st.pos.Get(e)
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(p.X))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(p.Y))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(p.Z))
	}
	return buf
}

// sceneLink is the scenes' link: 100 ms RTT, 1 % loss each way.
func sceneLink() transport.Conditions {
	l := transport.LinkConfig{Latency: 50 * time.Millisecond, Loss: 0.01}
	return transport.Conditions{Up: l, Down: l}
}

// sceneOptions are the options of a harness of clients connections
// whose server runs setup and gives each connection a viewer.
func sceneOptions(schema *sceneSchema, clients int, setup func(*systems.Server) error) harness.Options {
	specs := make([]harness.ClientSpec, clients)
	for i := range specs {
		specs[i].Link = sceneLink()
	}
	return harness.Options{Seed: 1, Game: &systems.Game{Schema: schema.Schema, OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
		m := generic.NewMap1[viewer](w.Arche())
		return m.New(), schema.viewer, nil
	}},
		SetupServer: setup, Clients: specs}
}

// newSceneHarness builds the harness of sceneOptions.
func newSceneHarness(schema *sceneSchema, clients int, setup func(*systems.Server) error) (*harness.Harness, error) {
	return harness.New(sceneOptions(schema, clients, setup))
}

// movingScene is the busy scene of issue 27: cubeCount cubes in S1's
// grid, every one of them moving every tick (each sways on its own
// phase, 0.25 m round its place, far more than a quantization step a
// tick), so every client has every cube pending every tick and most of
// them wait for room. The motion is a function of the tick alone.
type movingScene struct {
	schema *sceneSchema
	cubes  []ecs.Entity
	ids    []components.GhostID
	home   []cubePos
	pos    generic.Map1[cubePos]
}

func (ms *movingScene) setup(s *systems.Server) error {
	ms.cubes, ms.ids, ms.home = nil, nil, nil // a twin's setup runs again on a fresh world
	ms.pos = generic.NewMap1[cubePos](s.World().Arche())
	spawn := generic.NewMap2[cubePos, cubeRot](s.World().Arche())
	rest := smallestThree([4]float32{0, 0, 0, 1})
	for i := range cubeCount {
		p := cubePos{Z: cubeHalf}
		p.X = (float32(i%cubesPerSide) - (cubesPerSide-1)/2.0) * cubeSpacing
		p.Y = (float32(i/cubesPerSide) - (cubesPerSide-1)/2.0) * cubeSpacing
		e := spawn.NewWith(&p, &rest)
		id, err := s.Ghosts().Spawn(e, ms.schema.cube, 0)
		if err != nil {
			return err
		}
		ms.cubes, ms.ids, ms.home = append(ms.cubes, e), append(ms.ids, id), append(ms.home, p)
	}
	s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(ms.simulate))
	return nil
}

// simulate sways every cube: 0.25 m round its place at 0.5 rad a tick
// on its own phase.
func (ms *movingScene) simulate(w *gw.World) {
	t := float64(w.Tick())
	for i, e := range ms.cubes {
		s, c := math.Sincos(t*0.05 + float64(i))
		p := ms.pos.Get(e)
		p.X = ms.home[i].X + float32(0.25*s)
		p.Y = ms.home[i].Y + float32(0.25*c)
	}
}
