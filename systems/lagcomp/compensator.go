package lagcomp

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ecsx"
	"github.com/ghostwire/ghostwire/internal/raycast"
	"github.com/ghostwire/ghostwire/netsync"
)

// Options configures a [Compensator].
type Options struct {
	// TickRate of the server; 60 when zero.
	TickRate int
	// Window is how far back a shot may be judged; 500 ms when zero
	// (Valve allows up to 1 s, Netcode for Entities keeps 32 ticks).
	// Allowed: one tick..2 s.
	Window time.Duration
	// Pose reads where an entity stood at the rewound tick from its
	// rewound components: its hitboxes are turned by yaw about the Z axis
	// and moved to position. Required.
	Pose func(r *Rewound) (position [3]float32, yaw float32)
	// Visible, if set, says whether the shooter could see the target at the
	// rewound tick (dead, hidden, not relevant): an invisible target cannot
	// be hit and, if it is all the shot found, the verdict is ReasonNotVisible.
	Visible func(shooter ecs.Entity, target *Rewound) bool
	// Walls is the static geometry that occludes shots: axis-aligned
	// boxes, each given by its min and max corners.
	Walls [][2][3]float32
	// Range is the longest shot; 1000 when zero.
	Range float32
	// MaxOriginError is how far the claimed origin may lie from the
	// shooter's own recorded position; 1 when zero. A shooter must itself
	// carry Hitboxes (be recorded): an unrecorded shooter's origin cannot be
	// checked and its shots are refused as ReasonOriginMismatch.
	MaxOriginError float32
	// MinShotInterval is the fewest ticks between two shots of one
	// shooter; 0 for no limit.
	MinShotInterval uint32
	// Schema supplies the blend of declared components that are also
	// replicated, so the rewind blends exactly like a client's
	// interpolation; others blend linearly.
	Schema *netsync.Schema
	// Present judges every shot against the present instead of the view
	// tick: lag compensation off, for comparison.
	Present bool
}

// Reason is why a verdict is what it is; its value is its report key,
// such as "outside_window".
type Reason string

// The verdict reasons.
const (
	ReasonHit            Reason = "hit"             // the ray hit a visible target before any wall
	ReasonOutsideWindow  Reason = "outside_window"  // the view tick is older than the window (or in the future)
	ReasonOccluded       Reason = "occluded"        // static geometry was in the way at that tick
	ReasonFireRate       Reason = "fire_rate"       // the shooter fired sooner than MinShotInterval allows
	ReasonOriginMismatch Reason = "origin_mismatch" // the claimed origin is too far from the shooter
	ReasonNotVisible     Reason = "not_visible"     // the only target on the ray was invisible to the shooter then
	ReasonNoTarget       Reason = "no_target"       // the ray hit nobody
)

// reasons lists every reason in order; a verdict is counted at its index.
var reasons = [...]Reason{ReasonHit, ReasonOutsideWindow, ReasonOccluded, ReasonFireRate,
	ReasonOriginMismatch, ReasonNotVisible, ReasonNoTarget}

// index returns r's index in reasons.
func (r Reason) index() int {
	for i, x := range reasons {
		if x == r {
			return i
		}
	}
	panic("lagcomp: unknown reason " + string(r))
}

// Shot is what the server knows of one shot.
type Shot struct {
	Shooter ecs.Entity
	// Tick is the server tick the shot is judged on (the input's tick).
	Tick gw.Tick
	// ViewTick and ViewFraction are the tick the shooter saw, with its
	// fraction in [0, 1).
	ViewTick     gw.Tick
	ViewFraction float32
	// Origin is where the shooter claims the shot started; Dir its
	// direction (normalized here).
	Origin, Dir [3]float32
}

// Verdict is the answer to one shot: hit or not, what, where, when and why.
type Verdict struct {
	Hit    bool
	Reason Reason
	Target ecs.Entity // the entity hit (or the invisible or occluded one)
	Part   uint8      // the hitbox's Part
	// Tick is the (fractional) tick the shot was judged at.
	Tick     float64
	Distance float32
}

// Rewound is one entity at the rewound tick: its declared components,
// blended, read with [Get]; read-only, valid until the compensator judges
// the next shot.
type Rewound struct {
	Entity   ecs.Entity
	Hitboxes *components.Hitboxes
	position [3]float32 // from Options.Pose
	yaw      float32
	vals     []unsafe.Pointer
	c        *Compensator
}

// value returns the rewound value of declared component id, or nil.
func (r *Rewound) value(id ecs.ID) unsafe.Pointer {
	for k, d := range r.c.declared {
		if d.id == id {
			return r.vals[k]
		}
	}
	return nil
}

// Get returns the rewound value of declared component T (see [Register]),
// or nil when T is not declared or the entity had no T then.
func Get[T any](r *Rewound) *T {
	return (*T)(r.value(ecs.ComponentID[T](r.c.world.Arche())))
}

// stats counts what the compensator did.
type stats struct {
	records uint64
	shots   uint64
	// verdicts counts verdicts by reason, at the reason's index.
	verdicts [len(reasons)]uint64
	rewinds  uint64
}

// Compensator records the declared components of entities with hitboxes
// and judges shots against them.
type Compensator struct {
	world    *gw.World
	opts     Options
	hist     *gw.History
	window   float64 // ticks
	hitboxes ecs.ID
	declared []declared
	targets  []Rewound
	pairs    [][2]unsafe.Pointer
	self     Rewound
	data     []byte
	lastShot []shooterTick
	stats    stats
}

type declared struct {
	id     ecs.ID
	size   uintptr
	interp codec.Interpolation
}

type shooterTick struct {
	e    ecs.Entity
	tick gw.Tick
}

// New returns a compensator for a server world. It errors naming the value
// on a bad option.
func New(w *gw.World, opts Options) (*Compensator, error) {
	if opts.Pose == nil {
		return nil, errors.New("lagcomp: Options.Pose is required")
	}
	if opts.TickRate == 0 {
		opts.TickRate = 60
	}
	if opts.Window == 0 {
		opts.Window = 500 * time.Millisecond
	}
	if opts.Range == 0 {
		opts.Range = 1000
	}
	if opts.MaxOriginError == 0 {
		opts.MaxOriginError = 1
	}
	if opts.TickRate < 1 || opts.TickRate > 1000 {
		return nil, fmt.Errorf("lagcomp: tick rate %d outside 1..1000", opts.TickRate)
	}
	interval := time.Second / time.Duration(opts.TickRate)
	if opts.Window < interval || opts.Window > 2*time.Second {
		return nil, fmt.Errorf("lagcomp: window %v outside %v..2s", opts.Window, interval)
	}
	if !(opts.Range > 0) || !(opts.MaxOriginError > 0) {
		return nil, fmt.Errorf("lagcomp: range %v and max origin error %v must be > 0", opts.Range, opts.MaxOriginError)
	}
	window := float64(opts.Window) * float64(opts.TickRate) / float64(time.Second)
	hid := ecs.ComponentID[components.Hitboxes](w.Arche())
	h, err := ecsx.NewHistory(w, hid, gw.HistoryOptions{Capacity: int(math.Ceil(window)) + 2})
	if err != nil {
		return nil, err
	}
	if err := gw.Register[components.Hitboxes](h); err != nil {
		return nil, err
	}
	return &Compensator{world: w, opts: opts, hist: h, window: window, hitboxes: hid}, nil
}

// Register adds component T to what is recorded and rewound (typically the
// position and the facing), the same verb as ecs.Register. T must be plain
// data; registering must happen before the first record.
func Register[T any](c *Compensator) error {
	t := reflect.TypeFor[T]()
	if err := ecsx.RegisterType(c.hist, t); err != nil {
		return err
	}
	in := codec.DefaultInterpolation(t)
	if s := (*codec.Schema)(c.opts.Schema); s != nil {
		for i := 0; i < s.NumComponents(); i++ {
			if s.ComponentType(codec.ComponentID(i)) == t {
				in = s.Interpolation(codec.ComponentID(i))
			}
		}
	}
	c.declared = append(c.declared, declared{id: ecs.ComponentID[T](c.world.Arche()), size: t.Size(), interp: in})
	return nil
}

// Update records the declared components of every entity with hitboxes as
// the state at the world's current tick, replacing what an earlier call
// recorded for that tick. Register the compensator in gw.StageHistory; a
// system that changes what is recorded after it in the same tick (damage
// that hides the dead, say) calls Update again.
func (c *Compensator) Update(w *gw.World) { c.record(w.Tick()) }

// record stores the declared components of every entity with hitboxes as
// the state at tick.
func (c *Compensator) record(tick gw.Tick) {
	ecsx.Record(c.hist, tick)
	c.stats.records++
}

// rewind returns every recorded entity at tick plus fraction (in
// [0, 1)), blended between the two neighbouring ticks with each
// component's interpolation, without touching the live world. It errors
// when that moment is outside the window ending at the newest recorded
// tick. Ticks compare wrap-safely.
func (c *Compensator) rewind(tick gw.Tick, fraction float32) ([]Rewound, error) {
	newest, ok := ecsx.Newest(c.hist)
	if !ok {
		return nil, errors.New("lagcomp: nothing recorded yet")
	}
	if !c.inWindow(newest, tick, fraction) {
		return nil, fmt.Errorf("lagcomp: view tick %d%+.3f outside the window of %.3f ticks ending at %d", tick, fraction, c.window, newest)
	}
	t0, f := tick, fraction
	v0, err := ecsx.View(c.hist, t0)
	if err != nil {
		return nil, err
	}
	v1 := v0
	if f > 0 {
		if v1, err = ecsx.View(c.hist, t0+1); err != nil {
			return nil, err
		}
	}
	c.stats.rewinds++
	nd := len(c.declared)
	stride := 0
	for _, d := range c.declared {
		stride += (int(d.size) + 7) &^ 7
	}
	if need := stride * v0.Len(); cap(c.data) < need {
		c.data = make([]byte, need)
	}
	c.data = c.data[:cap(c.data)]
	c.targets = c.targets[:0]
	hc := v0.Component(c.hitboxes)
	for i := 0; i < v0.Len(); i++ {
		e := v0.Entity(i)
		j, ok := i, true
		if f > 0 {
			j, ok = v1.Row(e)
		}
		base := len(c.targets) * stride
		if len(c.targets) < cap(c.targets) {
			c.targets = c.targets[:len(c.targets)+1]
		} else {
			c.targets = append(c.targets, Rewound{})
		}
		r := &c.targets[len(c.targets)-1]
		*r = Rewound{Entity: e, c: c, Hitboxes: (*components.Hitboxes)(v0.Value(i, hc)), vals: r.vals[:0]}
		// Pair each declared value at t0 with the one at t0+1.
		c.pairs = c.pairs[:0]
		teleported := false
		for k := 0; k < nd; k++ {
			d := &c.declared[k]
			pa := v0.Value(i, v0.Component(d.id))
			pb := pa
			if ok && f > 0 && pa != nil {
				if p := v1.Value(j, v1.Component(d.id)); p != nil {
					pb = p
				}
			}
			c.pairs = append(c.pairs, [2]unsafe.Pointer{pa, pb})
			teleported = teleported || pa != nil && d.interp.Teleported(pa, pb)
		}
		off := 0
		for k := 0; k < nd; k++ {
			d := &c.declared[k]
			out := unsafe.Pointer(unsafe.SliceData(c.data[base+off:]))
			off += (int(d.size) + 7) &^ 7
			pa, pb := c.pairs[k][0], c.pairs[k][1]
			if pa == nil {
				r.vals = append(r.vals, nil)
				continue
			}
			// A teleport is the entity's: when any component says so, all step.
			d.interp.Apply(pa, pb, out, f, d.size, teleported)
			r.vals = append(r.vals, out)
		}
	}
	for i := range c.targets {
		tg := &c.targets[i]
		tg.position, tg.yaw = c.opts.Pose(tg)
	}
	return c.targets, nil
}

// inWindow reports whether tick+fraction lies in the window ending at
// newest (never in the future, never extrapolated).
func (c *Compensator) inWindow(newest, tick gw.Tick, fraction float32) bool {
	if !(fraction >= 0 && fraction < 1) {
		return false
	}
	back := float64(newest.Sub(tick)) - float64(fraction)
	return back >= 0 && back <= c.window
}

// Judge decides one shot. It checks, in order: the view tick against the
// window (never extrapolating), the fire rate, the claimed origin against
// the shooter's recorded position, then rewinds every other entity to the
// view tick and casts the ray against their hitboxes and the walls. It
// never writes the live world; the caller applies the consequences to the
// present.
func (c *Compensator) Judge(s Shot) Verdict {
	c.stats.shots++
	v := c.judge(s, c.opts.Present, true)
	c.stats.verdicts[v.Reason.index()]++
	return v
}

// probe judges a shot like Judge would in the given mode (present: lag
// compensation off) without counting it or touching the fire-rate
// bookkeeping: the same shot judged both ways in one run.
func (c *Compensator) probe(s Shot, present bool) Verdict { return c.judge(s, present, false) }

func (c *Compensator) judge(s Shot, present, book bool) Verdict {
	newest, _ := ecsx.Newest(c.hist)
	tick, frac := s.ViewTick, s.ViewFraction
	if present {
		tick, frac = newest, 0
	}
	view := float64(tick) + float64(frac)
	v := Verdict{Tick: view}
	if !c.inWindow(newest, tick, frac) {
		v.Reason = ReasonOutsideWindow
		return v
	}
	if c.opts.MinShotInterval > 0 && book {
		i := 0
		for i < len(c.lastShot) && c.lastShot[i].e != s.Shooter {
			i++
		}
		if i == len(c.lastShot) {
			c.pruneShooters()
			i = len(c.lastShot)
			c.lastShot = append(c.lastShot, shooterTick{e: s.Shooter, tick: s.Tick.Add(-int(c.opts.MinShotInterval))})
		}
		if s.Tick.Sub(c.lastShot[i].tick) < int32(c.opts.MinShotInterval) {
			v.Reason = ReasonFireRate
			return v
		}
		c.lastShot[i].tick = s.Tick
	}
	// The shooter's own position now, from the newest record. A shooter
	// the history does not hold cannot be checked, so it is refused.
	if now, err := ecsx.View(c.hist, newest); err == nil {
		row, ok := now.Row(s.Shooter)
		if !ok {
			v.Reason = ReasonOriginMismatch
			return v
		}
		r := &c.self
		*r = Rewound{Entity: s.Shooter, c: c, vals: r.vals[:0]}
		for _, d := range c.declared {
			r.vals = append(r.vals, now.Value(row, now.Component(d.id)))
		}
		p, _ := c.opts.Pose(r)
		dx, dy, dz := s.Origin[0]-p[0], s.Origin[1]-p[1], s.Origin[2]-p[2]
		if math.Sqrt(float64(dx*dx+dy*dy+dz*dz)) > float64(c.opts.MaxOriginError) {
			v.Reason = ReasonOriginMismatch
			return v
		}
	}
	targets, err := c.rewind(tick, frac)
	if err != nil {
		v.Reason = ReasonOutsideWindow
		return v
	}
	dir := raycast.Vec{float64(s.Dir[0]), float64(s.Dir[1]), float64(s.Dir[2])}
	if l := math.Sqrt(raycast.Dot(dir, dir)); l > 0 {
		dir = raycast.Scale(dir, 1/l)
	}
	ray := raycast.Ray{Origin: raycast.Vec{float64(s.Origin[0]), float64(s.Origin[1]), float64(s.Origin[2])}, Dir: dir, Max: float64(c.opts.Range)}
	wall := math.Inf(1)
	for _, w := range c.opts.Walls {
		lo := raycast.Vec{float64(w[0][0]), float64(w[0][1]), float64(w[0][2])}
		hi := raycast.Vec{float64(w[1][0]), float64(w[1][1]), float64(w[1][2])}
		if t, ok := raycast.AABB(ray, lo, hi); ok && t < wall {
			wall = t
		}
	}
	bestVis, bestHidden := math.Inf(1), math.Inf(1)
	var vis, hidden Verdict
	for i := range targets {
		tg := &targets[i]
		if tg.Entity == s.Shooter || tg.Hitboxes == nil {
			continue
		}
		t, part, ok := hitTest(ray, tg)
		if !ok {
			continue
		}
		if c.opts.Visible == nil || c.opts.Visible(s.Shooter, tg) {
			if t < bestVis {
				bestVis, vis = t, Verdict{Target: tg.Entity, Part: part, Distance: float32(t)}
			}
		} else if t < bestHidden {
			bestHidden, hidden = t, Verdict{Target: tg.Entity, Part: part, Distance: float32(t)}
		}
	}
	switch {
	case !math.IsInf(bestVis, 1) && wall < bestVis:
		vis.Reason = ReasonOccluded
		vis.Tick = view
		return vis
	case !math.IsInf(bestVis, 1):
		vis.Hit, vis.Reason, vis.Tick = true, ReasonHit, view
		return vis
	case !math.IsInf(bestHidden, 1):
		hidden.Reason, hidden.Tick = ReasonNotVisible, view
		return hidden
	}
	v.Reason = ReasonNoTarget
	return v
}

// pruneShooters forgets the fire-rate state of dead shooters, so the list
// stays as long as the live shooters.
func (c *Compensator) pruneShooters() {
	a := c.world.Arche()
	kept := c.lastShot[:0]
	for _, st := range c.lastShot {
		if a.Alive(st.e) {
			kept = append(kept, st)
		}
	}
	c.lastShot = kept
}

// hitTest casts the ray against a rewound entity's hitboxes and returns
// the nearest distance and the part hit. A bounding sphere around all of
// the entity's hitboxes is tested first, so most entities cost one test.
func hitTest(r raycast.Ray, tg *Rewound) (float64, uint8, bool) {
	pos := raycast.Vec{float64(tg.position[0]), float64(tg.position[1]), float64(tg.position[2])}
	hb := tg.Hitboxes
	n := min(int(hb.N), len(hb.Boxes))
	bound := 0.0
	for k := 0; k < n; k++ {
		b := &hb.Boxes[k]
		o, h := b.Offset, b.Half
		reach := math.Sqrt(float64(o[0]*o[0]+o[1]*o[1]+o[2]*o[2])) + math.Sqrt(float64(h[0]*h[0]+h[1]*h[1]+h[2]*h[2])) + float64(b.Radius)
		bound = max(bound, reach)
	}
	if _, ok := raycast.Sphere(r, pos, bound); !ok {
		return 0, 0, false
	}
	sin, cos := math.Sincos(float64(tg.yaw))
	best, part, hit := math.Inf(1), uint8(0), false
	for k := 0; k < n; k++ {
		b := &hb.Boxes[k]
		c := raycast.Add(pos, raycast.Rotate(b.Offset, sin, cos))
		var t float64
		var ok bool
		switch b.Shape {
		case components.ShapeSphere:
			t, ok = raycast.Sphere(r, c, float64(b.Radius))
		case components.ShapeCapsule:
			h := raycast.Rotate(b.Half, sin, cos)
			t, ok = raycast.Capsule(r, raycast.Sub(c, h), raycast.Add(c, h), float64(b.Radius))
		case components.ShapeBox:
			t, ok = raycast.Box(r, c, raycast.Vec{float64(b.Half[0]), float64(b.Half[1]), float64(b.Half[2])}, float64(tg.yaw))
		}
		if ok && t < best {
			best, part, hit = t, b.Part, true
		}
	}
	return best, part, hit
}
