package play

import (
	"math"
	"time"

	"github.com/mlange-42/arche/ecs"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
)

// Shot is one of the own player's shots as the server judged it
// (systems.ClientOptions.OnConfirm), for the view to draw: a tracer from
// where it was fired to where it stopped (the target it hit, or the first
// wall or the range's end) and, when it hit, a hit marker at its end.
type Shot struct {
	FromX, FromY, ToX, ToY float32
	Hit                    bool
	// Reason is the verdict's (lagcomp.Reason: "hit", "occluded",
	// "no_target"...).
	Reason string
	// AgeMS is how long ago the verdict arrived.
	AgeMS float64
}

// ShotShown is how long a view shows a shot after its verdict arrived.
const ShotShown = 600 * time.Millisecond

// maxFired bounds the shots waiting for their verdict: past it the
// oldest is forgotten (its verdict, if it still comes, draws nothing).
const maxFired = 64

// fired is a shot sent and not yet judged: its tick, origin and aim.
type fired struct {
	tick gw.Tick
	x, y float32
	aim  float32
}

// judged is a shot with its verdict and when the verdict arrived.
type judged struct {
	Shot
	at time.Duration
}

// shots holds the own player's shots from trigger to tracer; the
// Player's lock guards it.
type shots struct {
	fired  []fired
	judged []judged
}

// fire records a shot sent on tick from (x, y) toward aim.
func (s *shots) fire(tick gw.Tick, x, y, aim float32) {
	if len(s.fired) == maxFired {
		s.fired = append(s.fired[:0], s.fired[1:]...)
	}
	s.fired = append(s.fired, fired{tick, x, y, aim})
}

// confirm takes the server's verdict of the shot of tick at now; target is
// the ghost it hit (or the zero entity), at where this client draws it.
// Verdicts come in the order of the shots, so the shots before it are
// done with too.
func (s *shots) confirm(now time.Duration, tick gw.Tick, hit bool, reason string, target *game.Position) {
	i := 0
	for i < len(s.fired) && s.fired[i].tick != tick {
		i++
	}
	if i == len(s.fired) {
		return // forgotten, or fired by a connection before this one
	}
	f := s.fired[i]
	s.fired = append(s.fired[:0], s.fired[i+1:]...)
	dx, dy := float32(math.Cos(float64(f.aim))), float32(math.Sin(float64(f.aim)))
	reach := rayReach(f.x, f.y, dx, dy)
	if hit && target != nil {
		// Up to the target as drawn now: the point of the ray nearest it.
		reach = min(max((target.X-f.x)*dx+(target.Y-f.y)*dy, 0), reach)
	}
	s.judged = append(s.judged, judged{Shot{FromX: f.x, FromY: f.y, ToX: f.x + dx*reach, ToY: f.y + dy*reach,
		Hit: hit, Reason: reason}, now})
}

// shown returns the shots judged within ShotShown of now, forgetting the
// older ones.
func (s *shots) shown(now time.Duration) []Shot {
	keep := s.judged[:0]
	for _, j := range s.judged {
		if now-j.at < ShotShown {
			keep = append(keep, j)
		}
	}
	clear(s.judged[len(keep):])
	s.judged = keep
	out := make([]Shot, len(keep))
	for i, j := range keep {
		out[i] = j.Shot
		out[i].AgeMS = float64(now-j.at) / float64(time.Millisecond)
	}
	return out
}

// rayReach is how far a shot from (x, y) in the unit direction (dx, dy)
// flies: to the first pillar or the arena's edge, at most game.ShotRange.
func rayReach(x, y, dx, dy float32) float32 {
	reach := float32(game.ShotRange)
	// The edge: the ray leaves the square where it crosses a side ahead.
	for _, side := range [...]struct{ p, d float32 }{{x, dx}, {y, dy}} {
		if side.d > 0 {
			reach = min(reach, (game.HalfSize-side.p)/side.d)
		} else if side.d < 0 {
			reach = min(reach, (-game.HalfSize-side.p)/side.d)
		}
	}
	for _, w := range game.Walls {
		if t, ok := slab(x, y, dx, dy, w.Min[0], w.Min[1], w.Max[0], w.Max[1]); ok {
			reach = min(reach, t)
		}
	}
	return max(reach, 0)
}

// slab returns where the ray first enters the box (x0, y0)-(x1, y1), if it
// does ahead of its origin.
func slab(x, y, dx, dy, x0, y0, x1, y1 float32) (float32, bool) {
	enter, leave := float32(0), float32(math.MaxFloat32)
	for _, a := range [...]struct{ p, d, lo, hi float32 }{{x, dx, x0, x1}, {y, dy, y0, y1}} {
		if a.d == 0 {
			if a.p < a.lo || a.p > a.hi {
				return 0, false
			}
			continue
		}
		t0, t1 := (a.lo-a.p)/a.d, (a.hi-a.p)/a.d
		if t0 > t1 {
			t0, t1 = t1, t0
		}
		enter, leave = max(enter, t0), min(leave, t1)
	}
	return enter, enter <= leave
}

// targetPosition returns where this client draws the entity a verdict
// names, or nil when it shows none.
func (p *Player) targetPosition(w *gw.World, e ecs.Entity) *game.Position {
	a := w.Arche()
	if e.IsZero() || !a.Alive(e) || !a.Has(e, ecs.ComponentID[game.Position](a)) {
		return nil
	}
	return (*game.Position)(a.Get(e, ecs.ComponentID[game.Position](a)))
}
