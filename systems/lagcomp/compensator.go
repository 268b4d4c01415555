package lagcomp

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/raycast"
	"github.com/ghostwire/ghostwire/netsync"
)

// Options configures a [Compensator].
type Options struct {
	// TickRate of the server; 60 when zero.
	TickRate int
	// Window is how far back a shot may be judged, before the newest
	// recorded tick; 750 ms when zero: the oldest view an honest client
	// claimed at 20 Hz on a 200 ms / ±40 ms / 8 % loss link was 530 ms
	// (docs/lagcomp.md, "Choosing the window"), and 750 ms stays below
	// Valve's 1 s (sv_maxunlag). The plausible view (Shot.MaxViewAge)
	// bounds each connection's claims by its own measured latency, so a
	// wide window serves slow links without widening what a fast one may
	// claim. Allowed: one tick..2 s.
	Window time.Duration
	// Pose reads where an entity stood at the rewound tick from its
	// rewound components: its hitboxes are turned by yaw about the Z axis
	// and moved to position. Required. It is also asked once per recorded
	// tick about every entity, and a shot rewinds only the entities whose
	// hitboxes it may cross between their recorded poses: the position
	// Pose gives for a blend must lie within |b−a| of a, where a and b are
	// its positions at the two recorded ticks, as it does when it reads
	// positions blended linearly (or along a shortest arc).
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
	// Alive, if set, says whether a shooter was alive at a recorded tick
	// (from its recorded components): it enables the death rule. Nil: the
	// death rule is off.
	Alive func(r *Rewound) bool
	// TradeWindow is the death rule: how long after its death a
	// shooter's shots are still judged, provided the shooter could not
	// have seen its death (its view plus its interpolation delay before
	// it, and no snapshot of it acknowledged: Shot.Acked); kills trade, as
	// in Overwatch: shots already sent within the latency count. The
	// Window when zero: then the plausible view (Shot.MaxViewAge) is the
	// limit, the shooter's own measured latency. Negative refuses every
	// shot whose input tick is after the death. Refusals are
	// ReasonShooterDead. Allowed: up to Window.
	TradeWindow time.Duration
	// Server, if set, is the endpoint whose clients fired the shots (a
	// *systems.Server): Judge sends each verdict to the client owning the
	// shooter, which receives it exactly once and in order
	// (systems.ClientOptions.OnConfirm).
	Server Confirmer
	// OnJudge, if set, is called by Judge with every shot and its
	// verdict, after the verdict is decided and confirmed: where a
	// kill-cam or a hit review keeps the shots it shows (Capture reads
	// the history while the shot's view is still in it). Probe does not
	// call it.
	OnJudge func(c *Compensator, s Shot, v Verdict)
}

// Confirmer delivers a verdict to the client that fired the shot.
// *systems.Server implements it; a test may record the calls instead.
type Confirmer interface {
	// ConfirmShot queues the verdict of the shot shooter fired at input
	// tick shot for the client owning shooter: hit, the reason's key, the
	// target and the hitbox part hit. A shooter no client owns is skipped.
	ConfirmShot(shooter ecs.Entity, shot gw.Tick, hit bool, reason string, target ecs.Entity, part uint8)
}

// Reason is why a verdict is what it is; its value is its report key,
// such as "outside_window".
type Reason string

// The verdict reasons.
const (
	ReasonHit            Reason = "hit"             // the ray hit a visible target before any wall
	ReasonOutsideWindow  Reason = "outside_window"  // the view tick is older than the window (or in the future)
	ReasonOccluded       Reason = "occluded"        // static geometry was in the way at that tick, or between the shooter and its claimed origin
	ReasonFireRate       Reason = "fire_rate"       // the shooter fired sooner than MinShotInterval allows
	ReasonOriginMismatch Reason = "origin_mismatch" // the claimed origin is too far from the shooter
	ReasonNotVisible     Reason = "not_visible"     // the only target on the ray was invisible to the shooter then
	ReasonNoTarget       Reason = "no_target"       // the ray hit nobody

	ReasonViewImplausible Reason = "view_implausible" // the view is older than the server's measurements explain (Shot.MaxViewAge)
	ReasonShooterDead     Reason = "shooter_dead"     // the shooter was dead at the input's tick and the death rule refuses it
)

// Reasons returns every verdict reason in the order of the rules, a new
// slice each call.
func Reasons() []Reason { return slices.Clone(reasons[:]) }

// reasons lists every reason in order; a verdict is counted at its index.
var reasons = [...]Reason{ReasonHit, ReasonOutsideWindow, ReasonOccluded, ReasonFireRate,
	ReasonOriginMismatch, ReasonNotVisible, ReasonNoTarget, ReasonViewImplausible, ReasonShooterDead}

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
	// MaxViewAge is the oldest view, in ticks before Tick, that the
	// server's own measurements of the shooter's connection explain: the
	// server endpoint fills components.InputHeader.MaxViewAge for every
	// input and the game copies it here. An older view is refused as
	// ReasonViewImplausible; 0 allows only views of Tick itself.
	MaxViewAge float32
	// InterpolationDelay is the delay, in ticks, the shooter claims it
	// showed others with (components.InputHeader.InterpolationDelay): its
	// own state was InterpolationDelay newer than its view, so the death
	// rule takes the shooter to have seen its death once ViewTick plus it
	// reaches the death. Claiming less shrinks MaxViewAge as much.
	InterpolationDelay float32
	// Acked is the newest snapshot tick the shooter's client had
	// acknowledged when the input arrived (components.InputHeader.Acked,
	// which the server endpoint fills); 0 when unknown. The death rule
	// takes a shooter that acknowledged the snapshot of its death to
	// have seen it.
	Acked gw.Tick
}

// Verdict is the answer to one shot: hit or not, what, where, when and why.
// Its Reason names the rule that decided it. A refusal never names a
// target the shooter could not see: a ReasonNotVisible verdict carries no
// target, part or distance.
type Verdict struct {
	Hit    bool
	Reason Reason
	Target ecs.Entity // the entity hit (or the visible one a wall hid)
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
func (r *Rewound) value(t reflect.Type) unsafe.Pointer {
	for k, d := range r.c.declared {
		if d.typ == t {
			return r.vals[k]
		}
	}
	return nil
}

// Get returns the rewound value of declared component T (see [Register]),
// or nil when T is not declared or the entity had no T then. It compares
// T with the few declared types, not a map lookup: hooks call it per
// target and shot.
func Get[T any](r *Rewound) *T {
	return (*T)(r.value(reflect.TypeFor[T]()))
}

// stats counts what the compensator did.
type stats struct {
	records uint64
	shots   uint64
	// verdicts counts verdicts by reason, at the reason's index.
	verdicts [len(reasons)]uint64
	rewinds  uint64
	rewound  uint64 // entities rewound
	tested   uint64 // reaches shots tested
}

// Compensator records the declared components of entities with hitboxes
// and judges shots against them.
type Compensator struct {
	world    *gw.World
	opts     Options
	hist     *gw.History
	window   float64 // ticks
	trade    float64 // Options.TradeWindow in ticks; negative: no trades
	hitboxes ecs.ID
	declared []declared
	targets  []Rewound
	pairs    [][2]unsafe.Pointer
	cols     []int // the declared components' columns in a tick's view
	self     Rewound
	data     []byte
	lastShot []shooterTick
	stats    stats
	// reaches are the recorded ticks' poses, by tick modulo the history's
	// capacity; noBroadphase (tests) rewinds every entity for every shot.
	// minGrid is the fewest entities a shot walks its tick's grid for
	// (gridMin; tests change it), cells the grids' scratch.
	reaches      []tickReaches
	noBroadphase bool
	minGrid      int
	cells        []int32
	// near and rw are a shot's entities near its ray and what rewinding
	// them needs (see aim).
	near []nearEntity
	rw   rewinding
}

type declared struct {
	id     ecs.ID
	typ    reflect.Type
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
		opts.Window = 750 * time.Millisecond
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
	if opts.TradeWindow == 0 {
		opts.TradeWindow = opts.Window
	}
	if opts.TradeWindow > opts.Window {
		return nil, fmt.Errorf("lagcomp: trade window %v outside ..%v (the window)", opts.TradeWindow, opts.Window)
	}
	window := float64(opts.Window) * float64(opts.TickRate) / float64(time.Second)
	trade := float64(opts.TradeWindow) * float64(opts.TickRate) / float64(time.Second)
	h, err := gw.NewHistory[components.Hitboxes](w, int(math.Ceil(window))+2)
	if err != nil {
		return nil, err
	}
	if err := gw.Register[components.Hitboxes](h); err != nil {
		return nil, err
	}
	return &Compensator{world: w, opts: opts, hist: h, window: window, trade: trade, hitboxes: ecs.ComponentID[components.Hitboxes](w.Arche()), minGrid: gridMin}, nil
}

// Register adds component T to what is recorded and rewound (typically the
// position and the facing), the same verb as ecs.Register. T must be plain
// data; registering must happen before the first record.
func Register[T any](c *Compensator) error {
	t := reflect.TypeFor[T]()
	if err := c.hist.RegisterType(t); err != nil {
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
	c.declared = append(c.declared, declared{id: ecs.ComponentID[T](c.world.Arche()), typ: t, size: t.Size(), interp: in})
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
	c.hist.Record(tick)
	c.stats.records++
	c.recordReaches(tick)
}

// reach is where a recorded entity stood at a tick (its Pose) and how far
// its hitboxes reach from there, whatever its yaw.
type reach struct {
	e   ecs.Entity
	pos [3]float32
	r   float32
	// sweep bounds its reach at any fraction of the way to the next
	// tick's pose: max(r, the next r) plus the distance between the two
	// positions, or r when it is not recorded then. Set when the next
	// tick is recorded (tickReaches.swept).
	sweep float32
}

// tickReaches are the reaches of a recorded tick, by its history row.
type tickReaches struct {
	tick  gw.Tick
	valid bool
	swept bool // rows' sweeps were set from the next tick's reaches
	rows  []reach
	grid  grid // built by the first shot that walks it (see walk)
}

// recordReaches poses every entity recorded at tick, once per record
// rather than once per shot: a shot rewinds and tests only the entities
// whose reach it passes through (see mayHit).
func (c *Compensator) recordReaches(tick gw.Tick) {
	if c.reaches == nil {
		c.reaches = make([]tickReaches, c.hist.Capacity())
	}
	slot := &c.reaches[uint32(tick)%uint32(len(c.reaches))]
	// The tick recorded again with every row's position and reach as
	// they were (after a kill, say) keeps its grid: it would bin them
	// all the same.
	old, same := slot.rows, slot.valid && slot.tick == tick && slot.grid.built
	slot.valid = false
	view, err := c.hist.View(tick)
	if err != nil {
		return
	}
	same = same && view.Len() == len(old)
	slot.tick, slot.valid, slot.swept, slot.rows = tick, true, false, slot.rows[:0]
	hc := view.Component(c.hitboxes)
	c.cols = c.cols[:0]
	for _, d := range c.declared {
		c.cols = append(c.cols, view.Component(d.id))
	}
	r := &c.self
	for i := 0; i < view.Len(); i++ {
		*r = Rewound{Entity: view.Entity(i), c: c, vals: r.vals[:0], Hitboxes: (*components.Hitboxes)(view.Value(i, hc))}
		for _, col := range c.cols {
			r.vals = append(r.vals, view.Value(i, col))
		}
		pos, _ := c.opts.Pose(r)
		a := reach{e: r.Entity, pos: pos, r: float32(extent(r.Hitboxes))}
		same = same && old[i].pos == a.pos && old[i].r == a.r
		slot.rows = append(slot.rows, a)
	}
	slot.grid.built = same
	c.sweep(tick-1, view, slot.rows)
}

// sweep sets the sweeps of tick's reaches from next, the reaches of the
// tick after it (recorded in view), once per record: a shot between the
// two tests each entity's sweep without a square root or a row lookup.
func (c *Compensator) sweep(tick gw.Tick, view gw.TickView, next []reach) {
	prev := &c.reaches[uint32(tick)%uint32(len(c.reaches))]
	if !prev.valid || prev.tick != tick {
		return
	}
	for i := range prev.rows {
		a := &prev.rows[i]
		a.sweep = a.r
		e, j, ok := a.e, i, true
		if i >= view.Len() || view.Entity(i) != e { // rows move only when entities come or go
			j, ok = view.Row(e)
		}
		if ok && j < len(next) {
			b := &next[j]
			d := raycast.Vec{float64(b.pos[0] - a.pos[0]), float64(b.pos[1] - a.pos[1]), float64(b.pos[2] - a.pos[2])}
			a.sweep = float32(max(float64(a.r), float64(b.r)) + math.Sqrt(raycast.Dot(d, d)))
		}
	}
	prev.swept = true
	prev.grid.modes[1].built = false
}

// reachesAt returns the reaches recorded for tick, with their sweeps to
// the next tick when swept (both recorded), or nil.
func (c *Compensator) reachesAt(tick gw.Tick, swept bool) *tickReaches {
	if len(c.reaches) == 0 {
		return nil
	}
	if slot := &c.reaches[uint32(tick)%uint32(len(c.reaches))]; slot.valid && slot.tick == tick && (!swept || slot.swept) {
		return slot
	}
	return nil
}

// mayHit reports whether ray can hit an entity that stood at a (a row
// of the tick before the view), at the tick itself or, swept, anywhere on
// its way to the tick after, and the distance along the ray before which
// it cannot: the blended pose lies within the distance between the two
// of a, as a linear blend of positions and a shortest-arc blend of angles
// keep it (see Options.Pose), so a sphere about a of its sweep holds
// every hitbox at any fraction between, and no hit comes before the
// ray enters it.
func mayHit(ray *raycast.Ray, a *reach, swept bool) (float64, bool) {
	r := float64(a.radius(swept))
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, true // nothing to bound it by: test it
	}
	return raycast.Sphere(*ray, raycast.Vec{float64(a.pos[0]), float64(a.pos[1]), float64(a.pos[2])}, r)
}

// extent bounds how far an entity's hitboxes reach from its position,
// whatever its yaw: a box reaches |offset| + |half| + radius, at most
// √(2(|offset|² + |half|²)) + radius, so one square root bounds them all.
func extent(hb *components.Hitboxes) float64 {
	if hb == nil {
		return 0
	}
	var sq, rad float32
	for k := range min(int(hb.N), len(hb.Boxes)) {
		b := &hb.Boxes[k]
		o, h := b.Offset, b.Half
		// Plain comparisons, not max: a NaN box, which no ray hits, is
		// left out rather than making every bound NaN.
		if v := o[0]*o[0] + o[1]*o[1] + o[2]*o[2] + h[0]*h[0] + h[1]*h[1] + h[2]*h[2]; v > sq {
			sq = v
		}
		if b.Radius > rad {
			rad = b.Radius
		}
	}
	return math.Sqrt(2*float64(sq)) + float64(rad)
}

// nearEntity is a recorded entity a shot's ray may hit: its row in the
// view tick's history and the distance along the ray before which no
// hitbox of it can be hit (the ray's entry into its reach).
type nearEntity struct {
	row  int32
	near float64
}

// before orders a shot's near entities: nearest entry first, ties by row.
func (n nearEntity) before(m nearEntity) bool {
	return n.near < m.near || n.near == m.near && n.row < m.row
}

// rewinding is what aim prepared for rewindRow: the two ticks' views, the
// fraction between them and the bytes each entity's blended values take.
type rewinding struct {
	v0, v1 gw.TickView
	f      float32
	stride int
	hc     int
}

// aim prepares a rewind to tick plus fraction (in [0, 1)), without
// touching the live world, and lists in c.near the recorded entities
// there that the ray may hit (see mayHit), nearest first (ties by row),
// or every entity, in row order, without a ray (the tests' Rewind) or
// without the tick's reaches. A shot tests the reaches of the entities
// in the cells of the tick's grid its ray passes near (see walk), or
// every reach with fewer than gridMin entities; its cost beyond that is
// the entities it rewinds, nearest first (see judge). It errors when
// that moment is outside the window ending at the newest recorded tick.
// Ticks compare wrap-safely.
func (c *Compensator) aim(tick gw.Tick, fraction float32, ray *raycast.Ray) error {
	newest, ok := c.hist.Newest()
	if !ok {
		return errors.New("lagcomp: nothing recorded yet")
	}
	if !c.inWindow(newest, tick, fraction) {
		return fmt.Errorf("lagcomp: view tick %d%+.3f outside the window of %.3f ticks ending at %d", tick, fraction, c.window, newest)
	}
	rw := &c.rw
	v0, err := c.hist.View(tick)
	if err != nil {
		return err
	}
	rw.v0, rw.v1, rw.f = v0, v0, fraction
	if fraction > 0 {
		if rw.v1, err = c.hist.View(tick + 1); err != nil {
			return err
		}
	}
	c.stats.rewinds++
	rw.stride = 0
	for _, d := range c.declared {
		rw.stride += (int(d.size) + 7) &^ 7
	}
	n := v0.Len()
	if need := rw.stride * n; cap(c.data) < need {
		c.data = make([]byte, need)
	}
	c.data = c.data[:cap(c.data)]
	if cap(c.targets) < n { // room for every entity, each with its values: a shot that rewinds more than any before allocates nothing
		grown := make([]Rewound, n)
		copy(grown, c.targets[:cap(c.targets)])
		for i := range grown {
			if grown[i].vals == nil {
				grown[i].vals = make([]unsafe.Pointer, 0, len(c.declared))
			}
		}
		c.targets = grown
		c.near = make([]nearEntity, 0, n)
		c.pairs = make([][2]unsafe.Pointer, 0, len(c.declared))
	}
	c.targets, c.near = c.targets[:0], c.near[:0]
	rw.hc = v0.Component(c.hitboxes)
	swept := fraction > 0
	var slot *tickReaches
	if ray != nil && !c.noBroadphase {
		slot = c.reachesAt(tick, swept)
	}
	switch {
	case slot == nil:
		for i := range n {
			c.near = append(c.near, nearEntity{row: int32(i)})
		}
	case n >= c.minGrid && len(slot.rows) == n && c.walk(slot, ray, swept):
	default:
		c.stats.tested += uint64(min(n, len(slot.rows)))
		for i := range n {
			near := 0.0
			if i < len(slot.rows) {
				t, ok := mayHit(ray, &slot.rows[i], swept)
				if !ok {
					continue
				}
				near = t
			}
			c.near = append(c.near, nearEntity{row: int32(i), near: near})
		}
	}
	// Insertion sort: a shot passes near a handful of entities.
	for i := 1; i < len(c.near); i++ {
		for j := i; j > 0 && c.near[j].before(c.near[j-1]); j-- {
			c.near[j], c.near[j-1] = c.near[j-1], c.near[j]
		}
	}
	return nil
}

// rewindRow rewinds the entity at row i of the view tick (see aim) and
// returns it, appended to c.targets.
func (c *Compensator) rewindRow(i int) *Rewound {
	rw := &c.rw
	v0, v1, f := rw.v0, rw.v1, rw.f
	e := v0.Entity(i)
	j, ok := i, true
	if f > 0 {
		j, ok = v1.Row(e)
	}
	base := len(c.targets) * rw.stride
	c.targets = c.targets[:len(c.targets)+1]
	c.stats.rewound++
	r := &c.targets[len(c.targets)-1]
	*r = Rewound{Entity: e, c: c, Hitboxes: (*components.Hitboxes)(v0.Value(i, rw.hc)), vals: r.vals[:0]}
	// Pair each declared value at t0 with the one at t0+1.
	c.pairs = c.pairs[:0]
	teleported := false
	nd := len(c.declared)
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
	r.position, r.yaw = c.opts.Pose(r)
	return r
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
// window (never extrapolating), the view against the age the server
// measured for the shooter (Shot.MaxViewAge), the death rule, the fire
// rate, the claimed origin against the shooter's recorded position (its
// distance, and no wall between them), then rewinds every other entity to
// the view tick and casts the ray against their hitboxes and the walls.
// The first rule that refuses names the verdict's Reason. It never writes
// the live world; the caller applies the consequences to the present.
func (c *Compensator) Judge(s Shot) Verdict {
	c.stats.shots++
	v := c.judge(s, c.opts.Present, true)
	c.stats.verdicts[v.Reason.index()]++
	if c.opts.Server != nil {
		c.opts.Server.ConfirmShot(s.Shooter, s.Tick, v.Hit, string(v.Reason), v.Target, v.Part)
	}
	if c.opts.OnJudge != nil {
		c.opts.OnJudge(c, s, v)
	}
	return v
}

// Probe judges a shot like Judge would in the given mode (present: against
// the present, lag compensation off) without counting it, confirming it
// or touching the fire-rate bookkeeping: a report judges the same shot
// both ways in one run to show what lag compensation changed. It costs
// what Judge costs.
func (c *Compensator) Probe(s Shot, present bool) Verdict { return c.judge(s, present, false) }

// Present reports whether Judge judges against the present (lag
// compensation off, Options.Present).
func (c *Compensator) Present() bool { return c.opts.Present }

// History returns the compensator's history of the entities with
// hitboxes: read it with gw.ValueAt or History.View (what a kill-cam or a
// hit review shows); never record into it.
func (c *Compensator) History() *gw.History { return c.hist }

// TickRate returns the server tick rate the compensator runs at
// (Options.TickRate, 60 when it was zero).
func (c *Compensator) TickRate() int { return c.opts.TickRate }

// Stats counts what a compensator did since it was made.
type Stats struct {
	// Records counts the ticks recorded, Shots the shots judged, Rewinds
	// the shots that rewound the history.
	Records, Shots, Rewinds uint64
	// Rewound counts the entities shots rewound, Tested the reaches
	// they tested before.
	Rewound, Tested uint64
	// Verdicts counts the judged shots by reason.
	Verdicts map[Reason]uint64
	// Shooters is how many shooters the fire-rate check tracks now (dead
	// ones are forgotten).
	Shooters int
}

// Stats returns the counters. It allocates the Verdicts map: call it for
// reports, not every tick.
func (c *Compensator) Stats() Stats {
	st := Stats{Records: c.stats.records, Shots: c.stats.shots, Rewinds: c.stats.rewinds, Rewound: c.stats.rewound, Tested: c.stats.tested,
		Verdicts: make(map[Reason]uint64, len(reasons)), Shooters: len(c.lastShot)}
	for i, r := range reasons {
		st.Verdicts[r] = c.stats.verdicts[i]
	}
	return st
}

func (c *Compensator) judge(s Shot, present, book bool) Verdict {
	newest, _ := c.hist.Newest()
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
	// The claim itself is judged even when the present is: a lagging
	// view claim is the client's, whatever mode the server runs in.
	if age := float64(s.Tick.Sub(s.ViewTick)) - float64(s.ViewFraction); !(age <= float64(s.MaxViewAge)) {
		v.Reason = ReasonViewImplausible
		return v
	}
	if !c.deathAllows(s) {
		v.Reason = ReasonShooterDead
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
	r, ok := c.shooterAt(s.Shooter, newest)
	if !ok {
		v.Reason = ReasonOriginMismatch
		return v
	}
	p, _ := c.opts.Pose(r)
	if reason, ok := c.originReachable(p, s.Origin); !ok {
		v.Reason = reason
		return v
	}
	dir := raycast.Vec{float64(s.Dir[0]), float64(s.Dir[1]), float64(s.Dir[2])}
	if l := math.Sqrt(raycast.Dot(dir, dir)); l > 0 {
		dir = raycast.Scale(dir, 1/l)
	}
	ray := raycast.Ray{Origin: raycast.Vec{float64(s.Origin[0]), float64(s.Origin[1]), float64(s.Origin[2])}, Dir: dir, Max: float64(c.opts.Range)}
	if err := c.aim(tick, frac, &ray); err != nil {
		v.Reason = ReasonOutsideWindow
		return v
	}
	wall := math.Inf(1)
	for _, w := range c.opts.Walls {
		lo := raycast.Vec{float64(w[0][0]), float64(w[0][1]), float64(w[0][2])}
		hi := raycast.Vec{float64(w[1][0]), float64(w[1][1]), float64(w[1][2])}
		if t, ok := raycast.AABB(ray, lo, hi); ok && t < wall {
			wall = t
		}
	}
	// Nearest first: once a visible target is hit, an entity the ray
	// enters only beyond that hit cannot be hit nearer, so it is neither
	// rewound nor tested. Among hits at one distance the lowest row wins,
	// whatever the order they are tested in.
	bestVis, bestHidden, bestRow := math.Inf(1), math.Inf(1), int32(-1)
	var vis Verdict
	for _, n := range c.near {
		if n.near > bestVis {
			break
		}
		if c.rw.v0.Entity(int(n.row)) == s.Shooter {
			continue
		}
		tg := c.rewindRow(int(n.row))
		if tg.Hitboxes == nil {
			continue
		}
		t, part, ok := hitTest(ray, tg)
		if !ok {
			continue
		}
		if c.opts.Visible == nil || c.opts.Visible(s.Shooter, tg) {
			if t < bestVis || t == bestVis && n.row < bestRow {
				bestVis, bestRow, vis = t, n.row, Verdict{Target: tg.Entity, Part: part, Distance: float32(t)}
			}
		} else if t < bestHidden {
			bestHidden = t
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
		// Nothing about the hidden target: not who, where nor which part.
		v.Reason = ReasonNotVisible
		return v
	}
	v.Reason = ReasonNoTarget
	return v
}

// shooterAt returns the shooter as recorded at tick, its components
// unblended, in c.self; false when the history does not hold it then.
func (c *Compensator) shooterAt(e ecs.Entity, tick gw.Tick) (*Rewound, bool) {
	view, err := c.hist.View(tick)
	if err != nil {
		return nil, false
	}
	row, ok := view.Row(e)
	if !ok {
		return nil, false
	}
	r := &c.self
	*r = Rewound{Entity: e, c: c, vals: r.vals[:0], Hitboxes: (*components.Hitboxes)(view.Value(row, view.Component(c.hitboxes)))}
	for _, d := range c.declared {
		r.vals = append(r.vals, view.Value(row, view.Component(d.id)))
	}
	return r, true
}

// originReachable checks a claimed origin against the shooter's recorded
// position p: within MaxOriginError, and no wall on the segment between
// them (a shot cannot start around a corner the shooter stands behind).
func (c *Compensator) originReachable(p, origin [3]float32) (Reason, bool) {
	d := raycast.Vec{float64(origin[0] - p[0]), float64(origin[1] - p[1]), float64(origin[2] - p[2])}
	l := math.Sqrt(raycast.Dot(d, d))
	if l > float64(c.opts.MaxOriginError) || math.IsNaN(l) {
		return ReasonOriginMismatch, false
	}
	if !clear3(c.opts.Walls, p, d, l) {
		return ReasonOccluded, false
	}
	return "", true
}

// LineOfSight reports whether the segment from a to b crosses none of the
// walls (axis-aligned boxes given by their min and max corners, as in
// Options.Walls): the test Judge applies between a shooter and the origin
// it claims. A bot deciding whether it sees a target uses the same test
// the server judges with. It costs one slab test per wall and allocates
// nothing.
func LineOfSight(walls [][2][3]float32, a, b [3]float32) bool {
	d := raycast.Vec{float64(b[0] - a[0]), float64(b[1] - a[1]), float64(b[2] - a[2])}
	return clear3(walls, a, d, math.Sqrt(raycast.Dot(d, d)))
}

// clear3 reports whether the segment from p along d, of length l = |d|,
// crosses none of the walls.
func clear3(walls [][2][3]float32, p [3]float32, d raycast.Vec, l float64) bool {
	if l == 0 {
		return true
	}
	seg := raycast.Ray{Origin: raycast.Vec{float64(p[0]), float64(p[1]), float64(p[2])}, Dir: raycast.Scale(d, 1/l), Max: l}
	for _, w := range walls {
		lo := raycast.Vec{float64(w[0][0]), float64(w[0][1]), float64(w[0][2])}
		hi := raycast.Vec{float64(w[1][0]), float64(w[1][1]), float64(w[1][2])}
		if _, ok := raycast.AABB(seg, lo, hi); ok {
			return false
		}
	}
	return true
}

// deathAllows applies the death rule (Options.Alive, TradeWindow): a
// shooter alive at the input's tick may shoot; a dead one only within the
// trade window after its death and while it could not have seen it: its
// view plus its interpolation delay before the death, and no snapshot of
// the death acknowledged. A death older than
// the history is outside any window.
func (c *Compensator) deathAllows(s Shot) bool {
	if c.opts.Alive == nil {
		return true
	}
	newest, _ := c.hist.Newest()
	at := s.Tick
	if at.After(newest) {
		at = newest
	}
	if r, ok := c.shooterAt(s.Shooter, at); !ok || c.opts.Alive(r) {
		return true // an unrecorded shooter is the origin check's to refuse
	}
	if c.trade < 0 {
		return false
	}
	// Walk back to the last tick it was alive: it died on the next one.
	limit := int(math.Ceil(c.trade))
	for back := 1; back <= limit+1; back++ {
		r, ok := c.shooterAt(s.Shooter, at.Add(-back))
		if !ok {
			return false
		}
		if c.opts.Alive(r) {
			death := at.Add(-back + 1)
			since := float64(s.Tick.Sub(death))
			// What the shooter knew of itself: its view plus the delay
			// it showed others with.
			knew := float64(death.Sub(s.ViewTick)) - float64(s.ViewFraction) - float64(max(s.InterpolationDelay, 0))
			seen := s.Acked != 0 && !s.Acked.Before(death)
			return since <= c.trade && knew > -deathTolerance && !seen
		}
	}
	return false
}

// deathTolerance is how far, in ticks, the shooter's claimed view plus
// interpolation delay may pass its death and still count as "could not
// have seen it": the render tick and the delay move smoothly, so what a
// client drew can run up to a tick past its newest snapshot.
const deathTolerance = 1

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
	if _, ok := raycast.Sphere(r, pos, extent(hb)); !ok {
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
