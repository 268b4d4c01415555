package lagcomp

import (
	"math"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/raycast"
)

// Scene is a judged shot as a kill-cam or a hit review shows it: the ray
// the shooter fired, every entity the history held at the tick the shot
// was judged at, posed as the rewind posed it, and the verdict. The
// shooter's client drew those entities from the same recorded states,
// blended the same way (Options.Schema), so the scene is what the shooter
// saw and what the server judged against at once. A Scene owns its
// memory: it stays valid after the history moves on.
type Scene struct {
	Shot    Shot
	Verdict Verdict
	// View is the fractional tick the entities are posed at: the
	// shooter's view, or the newest recorded tick for a compensator that
	// judges against the present.
	View float64
	// Origin and Dir are the shot's ray as the shooter claimed it (Cast
	// normalizes Dir as Judge does); Range is its length (Options.Range).
	Origin, Dir [3]float32
	Range       float32
	// Walls are the compensator's walls (Options.Walls), shared, not
	// copied: read them, never write them.
	Walls [][2][3]float32
	// Refused reports that a rule refused the shot before its ray was
	// cast (the view's window or age, the death rule, the fire rate, the
	// origin: Verdict.Reason names it); Cast then shows what the ray
	// would have met.
	Refused bool
	// Posed holds every entity recorded at View, in the history's order,
	// the shooter included. It is empty when View lies outside the window
	// (a shot refused as ReasonOutsideWindow).
	Posed []Posed
}

// Posed is one entity of a Scene.
type Posed struct {
	Entity   ecs.Entity
	Shooter  bool // the entity that fired
	Position [3]float32
	Yaw      float32
	Hitboxes components.Hitboxes
	// Visible is what Options.Visible said of the entity as a target of
	// this shooter; true without a Visible option.
	Visible bool
}

// Capture fills dst with the scene of shot s, judged v: call it while the
// history still holds s's view, in the tick the shot was judged (the
// Options.OnJudge hook is the place). It reuses dst.Posed, so a caller
// that keeps one Scene allocates only when a scene holds more entities
// than any before. It costs one rewind of every recorded entity.
func (c *Compensator) Capture(s Shot, v Verdict, dst *Scene) {
	newest, _ := c.hist.Newest()
	tick, frac := s.ViewTick, s.ViewFraction
	if c.opts.Present {
		tick, frac = newest, 0
	}
	*dst = Scene{Shot: s, Verdict: v, View: float64(tick) + float64(frac), Origin: s.Origin, Dir: s.Dir, Range: c.opts.Range,
		Walls: c.opts.Walls, Posed: dst.Posed[:0]}
	switch v.Reason {
	case ReasonHit, ReasonNoTarget, ReasonNotVisible:
	case ReasonOccluded: // by a wall on the ray, or between the shooter and its claimed origin
		if r, ok := c.shooterAt(s.Shooter, newest); ok {
			p, _ := c.opts.Pose(r)
			_, ok = c.originReachable(p, s.Origin)
			dst.Refused = !ok
		}
	default:
		dst.Refused = true
	}
	counted := c.stats // a capture is not a rewind of a shot: Stats stay the shots'
	defer func() { c.stats = counted }()
	if c.aim(tick, frac, nil) != nil {
		return
	}
	for _, n := range c.near {
		r := c.rewindRow(int(n.row))
		p := Posed{Entity: r.Entity, Shooter: r.Entity == s.Shooter, Position: r.position, Yaw: r.yaw, Visible: true}
		if r.Hitboxes != nil {
			p.Hitboxes = *r.Hitboxes
		}
		if !p.Shooter && c.opts.Visible != nil {
			p.Visible = c.opts.Visible(s.Shooter, r)
		}
		dst.Posed = append(dst.Posed, p)
	}
}

// Cast casts the scene's ray against its posed hitboxes and walls, as
// Judge does once a shot has passed its rules (Refused is false): the
// nearest visible hit,
// or the wall before it (ReasonOccluded), or a hidden target alone
// (ReasonNotVisible), or nothing (ReasonNoTarget). A kill-cam shows it;
// that it equals the verdict of a shot that reached the cast is the check
// that the scene is what the server judged. The shooter is never a target.
func (sc *Scene) Cast() Verdict {
	dir := raycast.Vec{float64(sc.Dir[0]), float64(sc.Dir[1]), float64(sc.Dir[2])}
	if l := math.Sqrt(raycast.Dot(dir, dir)); l > 0 {
		dir = raycast.Scale(dir, 1/l)
	}
	ray := raycast.Ray{Origin: raycast.Vec{float64(sc.Origin[0]), float64(sc.Origin[1]), float64(sc.Origin[2])}, Dir: dir, Max: float64(sc.Range)}
	wall := math.Inf(1)
	for _, w := range sc.Walls {
		lo := raycast.Vec{float64(w[0][0]), float64(w[0][1]), float64(w[0][2])}
		hi := raycast.Vec{float64(w[1][0]), float64(w[1][1]), float64(w[1][2])}
		if t, ok := raycast.AABB(ray, lo, hi); ok && t < wall {
			wall = t
		}
	}
	bestVis, bestHidden := math.Inf(1), math.Inf(1)
	var vis Verdict
	for i := range sc.Posed {
		p := &sc.Posed[i]
		if p.Shooter || p.Hitboxes.N == 0 {
			continue
		}
		t, part, ok := hitTest(ray, &Rewound{Entity: p.Entity, Hitboxes: &p.Hitboxes, position: p.Position, yaw: p.Yaw})
		switch {
		case !ok:
		case p.Visible && t < bestVis: // the first in order wins a tie, as Judge's lowest row does
			bestVis, vis = t, Verdict{Target: p.Entity, Part: part, Distance: float32(t)}
		case !p.Visible && t < bestHidden:
			bestHidden = t
		}
	}
	switch {
	case !math.IsInf(bestVis, 1) && wall < bestVis:
		vis.Reason, vis.Tick = ReasonOccluded, sc.View
		return vis
	case !math.IsInf(bestVis, 1):
		vis.Hit, vis.Reason, vis.Tick = true, ReasonHit, sc.View
		return vis
	case !math.IsInf(bestHidden, 1):
		return Verdict{Reason: ReasonNotVisible, Tick: sc.View}
	}
	return Verdict{Reason: ReasonNoTarget, Tick: sc.View}
}
