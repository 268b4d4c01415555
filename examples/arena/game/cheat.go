package game

import (
	"math"

	"github.com/ghostwire/ghostwire/components"
)

// The cheats a bot can play (-cheat); "all" deals them out in this order
// over the cheaters.
const (
	CheatNone      = ""
	CheatBacktrack = "backtrack" // claims a view BacktrackTicks older (and no interpolation delay), aiming at where targets stood then
	CheatOrigin    = "origin"    // fires at targets behind a wall from an origin forged 1.95 units away, past the wall
	CheatFireRate  = "firerate"  // fires every tick it sees a target
	CheatDeadshot  = "deadshot"  // keeps firing while it is dead
	CheatAll       = "all"
)

// cheats lists the cheats "all" deals out.
var cheats = [...]string{CheatBacktrack, CheatOrigin, CheatFireRate, CheatDeadshot}

// BacktrackTicks is how much older a view than the one it showed the
// backtracking cheat claims: 200 ms, inside the 750 ms window at the
// round trips the arena plays.
const BacktrackTicks = 12

// forgedOrigin is how far from its position the origin cheat fires from:
// inside MaxOriginError.
const forgedOrigin = 1.95

// validCheat reports whether c names a cheat or "all".
func validCheat(c string) bool {
	if c == CheatNone || c == CheatAll {
		return true
	}
	for _, k := range cheats {
		if k == c {
			return true
		}
	}
	return false
}

// cheatOf returns the cheat of client i: the last Cheaters clients cheat.
func (c Config) cheatOf(i int) string {
	k := i - (c.Clients - c.Cheaters)
	if k < 0 || c.Cheat == CheatNone {
		return CheatNone
	}
	if c.Cheat == CheatAll {
		return cheats[k%len(cheats)]
	}
	return c.Cheat
}

// backtrack is a backtracking cheater's claim (systems.ClientOptions.ClaimView):
// a view BacktrackTicks older than the one it showed, with no
// interpolation delay, as a modified client would send.
func backtrack(h *components.InputHeader) {
	if h.HasView {
		h.ViewTick = h.ViewTick.Add(-BacktrackTicks)
		h.InterpolationDelay = 0
	}
}

// forgeOrigin returns an origin up to forgedOrigin from me, on the far
// side of a wall from me, from which (tx, ty) is in line of sight: the
// corner the origin cheat shoots around.
func forgeOrigin(me Position, tx, ty float32) (Position, bool) {
	for _, r := range []float64{forgedOrigin, 1.5, 1} {
		for k := 0; k < 32; k++ {
			a := float64(k) * 2 * math.Pi / 32
			o := Position{X: me.X + float32(r*math.Cos(a)), Y: me.Y + float32(r*math.Sin(a))}
			if !LineOfSight(me.X, me.Y, o.X, o.Y) && LineOfSight(o.X, o.Y, tx, ty) {
				return o, true
			}
		}
	}
	return Position{}, false
}

// nearestPillar returns the centre of the pillar nearest to p.
func nearestPillar(p Position) (float32, float32) {
	var bx, by float32
	best := float32(math.MaxFloat32)
	for _, w := range Walls {
		cx, cy := (w.Min[0]+w.Max[0])/2, (w.Min[1]+w.Max[1])/2
		if d := length(cx-p.X, cy-p.Y); d < best {
			best, bx, by = d, cx, cy
		}
	}
	return bx, by
}
