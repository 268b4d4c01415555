package lagcomp_test

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

type Position struct{ X, Y float32 }
type Facing struct{ Yaw float32 }

// Parts of the test body.
const (
	body uint8 = 1
	head uint8 = 2
)

func bodyBoxes() components.Hitboxes {
	hb := components.Hitboxes{N: 2}
	hb.Boxes[0] = components.Hitbox{Shape: components.ShapeSphere, Part: head, Offset: [3]float32{0.3, 0, 0}, Radius: 0.15}
	hb.Boxes[1] = components.Hitbox{Shape: components.ShapeCapsule, Part: body, Half: [3]float32{0, 0.2, 0}, Radius: 0.25}
	return hb
}

type scene struct {
	w       *gw.World
	lc      *lagcomp.Compensator
	pos     generic.Map[Position]
	shooter ecs.Entity
	target  ecs.Entity
}

// newFlatCompensator returns a compensator for w with opts, recording
// Position and Facing and posing each entity at its position on the
// ground (flatPose).
func newFlatCompensator(tb testing.TB, w *gw.World, opts lagcomp.Options) *lagcomp.Compensator {
	opts.Pose = flatPose
	lc, err := lagcomp.New(w, opts)
	if err != nil {
		tb.Fatal(err)
	}
	for _, err := range []error{lagcomp.Register[Position](lc), lagcomp.Register[Facing](lc)} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return lc
}

// flatPose poses an entity at its Position, at height 0, facing its Facing.
func flatPose(r *lagcomp.Rewound) ([3]float32, float32) {
	p, f := lagcomp.Get[Position](r), lagcomp.Get[Facing](r)
	return [3]float32{p.X, p.Y, 0}, f.Yaw
}

// newScene: a shooter at the origin and a target at x=10 that moves +0.1 y
// per tick (6 units/s), recorded every tick for 60 ticks.
func newScene(t testing.TB, opts lagcomp.Options) *scene {
	w := gw.NewWorld(gw.WorldOptions{})
	opts.Pose = flatPose
	lc, err := lagcomp.New(w, opts)
	require.NoError(t, err)
	require.NoError(t, lagcomp.Register[Position](lc))
	require.NoError(t, lagcomp.Register[Facing](lc))
	require.NoError(t, lagcomp.Register[Life](lc))
	m := generic.NewMap4[Position, Facing, Life, components.Hitboxes](w.Arche())
	hb := bodyBoxes()
	s := &scene{w: w, lc: lc, pos: generic.NewMap[Position](w.Arche())}
	s.shooter = m.NewWith(&Position{}, &Facing{}, &Life{HP: 1}, &hb)
	s.target = m.NewWith(&Position{X: 10}, &Facing{Yaw: math.Pi}, &Life{HP: 1}, &hb) // facing the shooter
	for tick := gw.Tick(1); tick <= 60; tick++ {
		s.pos.Get(s.target).Y = float32(tick) * 0.1
		w.SetTick(tick)
		lc.Record(tick)
	}
	return s
}

// aim returns a shot from the shooter at the point (x, y), seen at view
// (tick plus fraction).
func (s *scene) aim(x, y float32, view float64) lagcomp.Shot {
	tick, frac := split(view)
	return lagcomp.Shot{Shooter: s.shooter, Tick: 60, ViewTick: tick, ViewFraction: frac, Dir: [3]float32{x, y, 0}, MaxViewAge: 1000}
}

// split parts a view into its tick and fraction.
func split(view float64) (gw.Tick, float32) {
	t := math.Floor(view)
	return gw.Tick(t), float32(view - t)
}

func TestShotIsJudgedAtTheViewTick(t *testing.T) {
	s := newScene(t, lagcomp.Options{})
	// At tick 40 the target stood at (10, 4): aim there.
	v := s.lc.Judge(s.aim(10, 4, 40))
	assert.True(t, v.Hit)
	assert.Equal(t, lagcomp.ReasonHit, v.Reason)
	assert.Equal(t, s.target, v.Target)
	assert.Equal(t, 40.0, v.Tick)
	assert.Equal(t, head, v.Part, "the head sphere faces the shooter, in front of the body")
	assert.InDelta(t, 10.3914, v.Distance, 0.001, "where the ray enters the head sphere")

	present := newScene(t, lagcomp.Options{Present: true})
	v = present.lc.Judge(present.aim(10, 4, 40))
	assert.False(t, v.Hit, "without lag compensation the target has moved on")
	assert.Equal(t, lagcomp.ReasonNoTarget, v.Reason)
}

func TestRewindIsSubTick(t *testing.T) {
	// Between ticks 40 (y=4.0) and 41 (y=4.1), three quarters of the way,
	// the head is centred on (9.7, 4.075). Aim 0.12 above it: the head at
	// 40.75, but only the body at tick 40.
	s := newScene(t, lagcomp.Options{})
	v := s.lc.Judge(s.aim(9.7, 4.075+0.12, 40.75))
	assert.True(t, v.Hit)
	assert.Equal(t, head, v.Part)
	assert.Equal(t, 40.75, v.Tick)
	v = s.lc.Judge(s.aim(9.7, 4.075+0.12, 40))
	assert.True(t, v.Hit)
	assert.Equal(t, body, v.Part)
	// The body's lower cap at tick 40 is not there any more at 40.75.
	v = s.lc.Judge(s.aim(10, 3.58, 40))
	assert.True(t, v.Hit)
	v = s.lc.Judge(s.aim(10, 3.58, 40.75))
	assert.False(t, v.Hit)
}

// The default window, 750 ms, covers the oldest view an honest client
// claimed at 20 Hz on a 200 ms / ±40 ms / 8 % loss link (530 ms over five
// seeds of 12 clients: examples/arena/game's
// TestTheDefaultWindowCoversHonestViewsAt20Hz), which the old 500 ms
// refused, and stays below Valve's 1 s.
func TestDefaultWindowCoversTheSlowestHonestView(t *testing.T) {
	s := newScene(t, lagcomp.Options{TickRate: 20})
	assert.InDelta(t, 15, s.lc.Window(), 1e-9, "750 ms at 20 Hz")
	assert.Less(t, s.lc.Window()/20, 1.0, "below Valve's 1 s")
	assert.NotEqual(t, lagcomp.ReasonOutsideWindow, s.lc.Judge(s.aim(10, 5, 60-10.6)).Reason, "530 ms old")
	assert.NotEqual(t, lagcomp.ReasonOutsideWindow, s.lc.Judge(s.aim(10, 5, 45)).Reason, "750 ms old")
	assert.Equal(t, lagcomp.ReasonOutsideWindow, s.lc.Judge(s.aim(10, 5, 44.9)).Reason, "older")
	s = newScene(t, lagcomp.Options{TickRate: 60})
	assert.InDelta(t, 45, s.lc.Window(), 1e-9, "750 ms at 60 Hz")
}

func TestVerdictReasons(t *testing.T) {
	s := newScene(t, lagcomp.Options{Window: 500 * time.Millisecond, MinShotInterval: 10, Walls: [][2][3]float32{{{5, 2.3, -1}, {6, 2.6, 1}}}})
	assert.InDelta(t, 30, s.lc.Window(), 1e-9, "500 ms at 60 Hz")

	old := s.aim(10, 1, 29) // 31 ticks old: beyond the 30-tick window
	assert.Equal(t, lagcomp.ReasonOutsideWindow, s.lc.Judge(old).Reason)
	future := s.aim(10, 6, 60.5)
	assert.Equal(t, lagcomp.ReasonOutsideWindow, s.lc.Judge(future).Reason, "a view tick in the future is refused, not extrapolated")
	nan := s.aim(10, 6, math.NaN())
	assert.Equal(t, lagcomp.ReasonOutsideWindow, s.lc.Judge(nan).Reason)

	through := s.aim(10, 5, 50) // the wall spans y 2.3..2.6 at x 5..6, on the line to (10, 5)
	v := s.lc.Judge(through)
	assert.Equal(t, lagcomp.ReasonOccluded, v.Reason)
	assert.Equal(t, s.target, v.Target)
	assert.False(t, v.Hit)

	again := s.aim(10, 5.5, 55)
	again.Tick = 65 // five ticks after the last accepted shot at 60
	assert.Equal(t, lagcomp.ReasonFireRate, s.lc.Judge(again).Reason)
	again.Tick = 70
	assert.Equal(t, lagcomp.ReasonHit, s.lc.Judge(again).Reason)

	far := s.aim(10, 5.5, 55)
	far.Tick = 100
	far.Origin = [3]float32{0, 5, 0} // 5 units from where the shooter stands
	assert.Equal(t, lagcomp.ReasonOriginMismatch, s.lc.Judge(far).Reason)

	miss := s.aim(-10, 0, 55)
	miss.Tick = 200
	assert.Equal(t, lagcomp.ReasonNoTarget, s.lc.Judge(miss).Reason)

	st := s.lc.Stats()
	assert.Equal(t, uint64(3), st.Verdicts[lagcomp.ReasonOutsideWindow])
	assert.Equal(t, uint64(1), st.Verdicts[lagcomp.ReasonOccluded])
	assert.Equal(t, uint64(1), st.Verdicts[lagcomp.ReasonFireRate])
	assert.Equal(t, uint64(1), st.Verdicts[lagcomp.ReasonHit])
	assert.Equal(t, uint64(8), st.Shots)
	names := []string{}
	for _, r := range lagcomp.Reasons() {
		names = append(names, string(r))
	}
	assert.Equal(t, []string{"hit", "outside_window", "occluded", "fire_rate", "origin_mismatch", "not_visible", "no_target",
		"view_implausible", "shooter_dead"}, names)
	assert.Equal(t, protocol.VerdictReasons[:], names, "the wire codes of confirmations follow the reasons")
}

func TestInvisibleTargetsCannotBeHit(t *testing.T) {
	s := newScene(t, lagcomp.Options{Visible: func(shooter ecs.Entity, tg *lagcomp.Rewound) bool {
		return lagcomp.Get[Position](tg).Y > 3 // hidden until it passed y = 3
	}})
	v := s.lc.Judge(s.aim(10, 2.5, 35)) // at tick 35 the target was at y=3.5: visible
	assert.Equal(t, lagcomp.ReasonNoTarget, v.Reason)
	v = s.lc.Judge(s.aim(10, 3.5, 35))
	assert.Equal(t, lagcomp.ReasonHit, v.Reason)
	w := newScene(t, lagcomp.Options{Visible: func(ecs.Entity, *lagcomp.Rewound) bool { return false }})
	v = w.lc.Judge(w.aim(10, 3.5, 35))
	assert.Equal(t, lagcomp.ReasonNotVisible, v.Reason)
	assert.Equal(t, lagcomp.Verdict{Reason: lagcomp.ReasonNotVisible, Tick: 35}, v,
		"a refusal for an invisible target says nothing about it: no target, part or distance")
}

// worldSum hashes every live component value.
func worldSum(s *scene) uint64 {
	h := fnv.New64a()
	q := generic.NewFilter3[Position, Facing, components.Hitboxes]().Query(s.w.Arche())
	for q.Next() {
		p, f, hb := q.Get()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(q.Entity().ID()))
		h.Write(b[:])
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p)))
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(f)), unsafe.Sizeof(*f)))
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(hb)), unsafe.Sizeof(*hb)))
	}
	return h.Sum64()
}

func TestRewindLeavesTheWorldBitIdentical(t *testing.T) {
	s := newScene(t, lagcomp.Options{})
	before := worldSum(s)
	live := *s.pos.Get(s.target)
	for view := 30.0; view <= 60; view += 0.25 {
		targets, err := s.lc.Rewind(split(view))
		require.NoError(t, err)
		require.Len(t, targets, 2)
		s.lc.Judge(s.aim(10, float32(view)*0.1, view))
	}
	assert.Equal(t, before, worldSum(s))
	assert.Equal(t, live, *s.pos.Get(s.target))
	_, err := s.lc.Rewind(10, 0)
	assert.ErrorContains(t, err, "outside the window")
}

func TestOptionsValidation(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	_, err := lagcomp.New(w, lagcomp.Options{})
	assert.ErrorContains(t, err, "Pose is required")
	pose := func(*lagcomp.Rewound) ([3]float32, float32) { return [3]float32{}, 0 }
	_, err = lagcomp.New(w, lagcomp.Options{Pose: pose, Window: 5 * time.Second})
	assert.ErrorContains(t, err, "window 5s outside")
	_, err = lagcomp.New(w, lagcomp.Options{Pose: pose, TickRate: -1})
	assert.ErrorContains(t, err, "tick rate -1")
	_, err = lagcomp.New(w, lagcomp.Options{Pose: pose, Range: -3})
	assert.ErrorContains(t, err, "range -3")
}

func unsafeSizeof(hb components.Hitboxes) uintptr { return unsafe.Sizeof(hb) }

func TestUnrecordedShooterIsRefused(t *testing.T) {
	s := newScene(t, lagcomp.Options{})
	ghost := s.w.Arche().NewEntity() // no hitboxes: never recorded
	shot := s.aim(10, 4, 40)
	shot.Shooter = ghost
	assert.Equal(t, lagcomp.ReasonOriginMismatch, s.lc.Judge(shot).Reason, "an origin that cannot be checked is not trusted")
}

func TestFireRateStateForgetsDeadShooters(t *testing.T) {
	s := newScene(t, lagcomp.Options{MinShotInterval: 5})
	m := generic.NewMap3[Position, Facing, components.Hitboxes](s.w.Arche())
	hb := bodyBoxes()
	for i := 0; i < 50; i++ {
		e := m.NewWith(&Position{}, &Facing{}, &hb)
		s.lc.Record(60) // the shooter is recorded at the newest tick
		shot := s.aim(10, 4, 50)
		shot.Shooter, shot.Tick = e, gw.Tick(100+i)
		assert.NotEqual(t, lagcomp.ReasonFireRate, s.lc.Judge(shot).Reason)
		s.w.Arche().RemoveEntity(e)
	}
	assert.LessOrEqual(t, s.lc.Stats().Shooters, 2, "the fire-rate book keeps only live shooters")
}

// A shot rewinds only the entities whose recorded poses its ray passes
// near, found walking its view tick's grid, and that never changes a
// verdict: 120 players moving and turning at random (one teleporting
// across the arena), 3,000 random shots at random views (swept, on a
// tick, and in the present), aimed at another player, along an axis or
// diagonally, each judged walking the grid, testing every player's pose,
// and rewinding every player, give the same verdicts, with a fraction of
// the tests and of the rewinds.
func TestBroadphaseNeverChangesAVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	w := gw.NewWorld(gw.WorldOptions{})
	lc := newFlatCompensator(t, w, lagcomp.Options{Range: 60, MaxOriginError: 1})
	m := generic.NewMap3[Position, Facing, components.Hitboxes](w.Arche())
	hb := bodyBoxes()
	type mover struct {
		e          ecs.Entity
		vx, vy, vt float32
	}
	var ms []mover
	for range 120 {
		e := m.NewWith(&Position{X: rng.Float32()*40 - 20, Y: rng.Float32()*40 - 20}, &Facing{Yaw: rng.Float32() * 6}, &hb)
		ms = append(ms, mover{e: e, vx: rng.Float32() - 0.5, vy: rng.Float32() - 0.5, vt: rng.Float32() - 0.5})
	}
	const last = 45
	for tick := gw.Tick(1); tick <= last; tick++ {
		for i, mv := range ms {
			p, f, _ := m.Get(mv.e)
			p.X, p.Y, f.Yaw = p.X+mv.vx, p.Y+mv.vy, f.Yaw+mv.vt
			if i == 0 && tick == 30 {
				p.X = -p.X // a teleport
			}
		}
		w.SetTick(tick)
		lc.Record(tick)
	}
	hits, shots := 0, 3000
	type mode struct{ broadphase, grid bool }
	judge := func(s lagcomp.Shot, present bool, md mode) (lagcomp.Verdict, uint64, uint64) {
		lc.SetBroadphase(md.broadphase)
		lc.SetGrid(md.grid)
		before := lc.Stats()
		v := lc.Probe(s, present)
		after := lc.Stats()
		return v, after.Rewound - before.Rewound, after.Tested - before.Tested
	}
	var rewound, everyRewound, tested, everyTested uint64
	for i := range shots {
		shooter := ms[rng.IntN(len(ms))].e
		p, _, _ := m.Get(shooter)
		target := ms[rng.IntN(len(ms))].e
		q, _, _ := m.Get(target)
		view := last - 1 - rng.Float64()*20
		if i%4 == 0 {
			view = math.Floor(view)
		}
		tick, frac := split(view)
		dir := [3]float32{q.X - p.X + rng.Float32()*4 - 2, q.Y - p.Y + rng.Float32()*4 - 2, 0}
		switch i % 5 {
		case 1:
			dir = [3]float32{float32(rng.IntN(3) - 1), float32(rng.IntN(3) - 1), 0} // an axis, a diagonal or none
		case 2:
			dir[rng.IntN(2)] = 0
		}
		s := lagcomp.Shot{Shooter: shooter, Tick: last, ViewTick: tick, ViewFraction: frac, MaxViewAge: 1000,
			Origin: [3]float32{p.X, p.Y, 0}, Dir: dir}
		present := i%7 == 0
		a, na, ta := judge(s, present, mode{true, true})
		b, nb, tb := judge(s, present, mode{true, false})
		c, nc, _ := judge(s, present, mode{false, false})
		require.Equal(t, b, a, "shot %+v walking the grid", s)
		require.Equal(t, c, a, "shot %+v rewinding every player", s)
		require.Equal(t, nb, na, "shot %+v rewinds the same players walking the grid", s)
		rewound, everyRewound, tested, everyTested = rewound+na, everyRewound+nc, tested+ta, everyTested+tb
		if a.Hit {
			hits++
		}
	}
	t.Logf("%d of %d shots hit; %d entities rewound with the test, %d without; %d poses tested walking the grid, %d testing every one", hits, shots, rewound, everyRewound, tested, everyTested)
	assert.Greater(t, hits, shots/20, "the shots hit now and then")
	assert.Less(t, hits, shots*19/20, "and miss now and then")
	assert.Less(t, 4*rewound, everyRewound, "the test rewinds a fraction of the entities")
	assert.Less(t, 3*tested, everyTested, "walking the grid tests a fraction of the poses")
}

// A shot searches its targets nearest first and stops at the first
// visible hit: along a row of 30 entities it rewinds the first one only,
// and judges as the search of every entity does.
func TestShotRewindsUpToItsNearestHit(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	lc, err := lagcomp.New(w, lagcomp.Options{Range: 100, Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
		p := lagcomp.Get[Position](r)
		return [3]float32{p.X, p.Y, 0}, 0
	}})
	require.NoError(t, err)
	require.NoError(t, lagcomp.Register[Position](lc))
	m := generic.NewMap2[Position, components.Hitboxes](w.Arche())
	hb := bodyBoxes()
	shooter := m.NewWith(&Position{}, &hb)
	row := make([]ecs.Entity, 30)
	for i := range row {
		row[len(row)-1-i] = m.NewWith(&Position{X: 34 - float32(i)}, &hb) // the nearest made last: its row is the highest
	}
	for tick := gw.Tick(1); tick <= 10; tick++ {
		w.SetTick(tick)
		lc.Record(tick)
	}
	shot := lagcomp.Shot{Shooter: shooter, Tick: 10, ViewTick: 8, ViewFraction: 0.5, MaxViewAge: 100, Dir: [3]float32{1, 0, 0}}
	judge := func(broadphase bool) (lagcomp.Verdict, uint64) {
		lc.SetBroadphase(broadphase)
		before := lc.Stats().Rewound
		v := lc.Probe(shot, false)
		return v, lc.Stats().Rewound - before
	}
	v, n := judge(true)
	require.True(t, v.Hit, "%+v", v)
	assert.Equal(t, row[0], v.Target, "the nearest entity is hit")
	assert.Equal(t, uint64(1), n, "entities rewound")
	all, nall := judge(false)
	assert.Equal(t, all, v, "the search of every entity")
	assert.Equal(t, uint64(len(row)), nall, "entities rewound without the test first")
}

// Judging allocates nothing, even the shot that rewinds more entities
// than any before it: the first shot, which passes near none, leaves the
// compensator room for every entity. (Counted over the whole process, so
// the fewest of five fresh compensators counts: a stray runtime
// allocation cannot fail it, a missing room fails every one.)
func TestJudgeAllocatesNothing(t *testing.T) {
	fewest := uint64(math.MaxUint64)
	for range 5 {
		fewest = min(fewest, firstLongShotAllocs(t))
	}
	assert.Zero(t, fewest, "allocations")
}

// firstLongShotAllocs builds a compensator with a row of 30 entities,
// judges a shot away from them, then counts the allocations of the first
// shot along the row. Every entity is hidden from the shooter, so that
// shot rewinds them all: no visible hit ends its search.
func firstLongShotAllocs(t *testing.T) uint64 {
	w := gw.NewWorld(gw.WorldOptions{})
	lc, err := lagcomp.New(w, lagcomp.Options{Range: 100, Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
		p := lagcomp.Get[Position](r)
		return [3]float32{p.X, p.Y, 0}, 0
	}, Visible: func(ecs.Entity, *lagcomp.Rewound) bool { return false }})
	require.NoError(t, err)
	require.NoError(t, lagcomp.Register[Position](lc))
	m := generic.NewMap2[Position, components.Hitboxes](w.Arche())
	hb := bodyBoxes()
	shooter := m.NewWith(&Position{}, &hb)
	for i := range 30 {
		m.NewWith(&Position{X: 5 + float32(i), Y: 0.1 * float32(i%3)}, &hb) // a row along the x axis
	}
	for tick := gw.Tick(1); tick <= 10; tick++ {
		w.SetTick(tick)
		lc.Record(tick)
	}
	shot := func(dirY float32) lagcomp.Shot {
		return lagcomp.Shot{Shooter: shooter, Tick: 10, ViewTick: 8, ViewFraction: 0.5, MaxViewAge: 100, Dir: [3]float32{1, dirY, 0}}
	}
	require.Equal(t, lagcomp.ReasonNoTarget, lc.Probe(shot(-1), false).Reason, "away from the row")
	before := lc.Stats().Rewound
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	lc.Probe(shot(0), false) // along the row: more entities than any shot before
	runtime.ReadMemStats(&m1)
	require.Greater(t, lc.Stats().Rewound-before, uint64(25), "the shot along the row rewound most of it")
	return m1.Mallocs - m0.Mallocs
}
