package game

import (
	"math/rand/v2"
	"time"

	"github.com/mlange-42/arche/ecs"
)

// How bots aim (-bot-aim). The headless match's bots aim perfectly: they
// are the lag compensator's steady load, and the figures of its reports
// and docs were measured with them. The web page's aim like people, so
// that a person can win a duel.
const (
	AimPerfect = "perfect" // also ""
	AimHuman   = "human"
)

// Aim is how a bot aims. The zero value aims perfectly: it fires the moment
// its weapon is ready at the nearest living player in view, exactly at
// where its client draws it.
type Aim struct {
	// Reaction is how long a target must have been in view before the
	// bot first fires at it (a new target, or one that came back into
	// view), plus up to ReactionSpread more, drawn per target.
	Reaction, ReactionSpread time.Duration
	// Error is the standard deviation of the shot's direction, in
	// radians: 0.2 rad puts a shot at 3 units (a chase's range) 0.6 units
	// off on average, about a player's width.
	Error float64
	// Pause is the most ticks, drawn per shot, a bot waits past its
	// weapon's FireInterval before it fires again.
	Pause int
}

// HumanAim is -bot-aim human: a person's reaction of 300 to 500 ms, an
// aim that hits about half its shots at the ranges the arena's bots fight
// at (the perfect aim hits them all), and a trigger finger slower than the
// weapon (2.7 shots a second at 60 Hz, the weapon allows 4). A person who
// reacts in 250 ms and hits two shots in three wins a duel against it
// (TestAPersonWinsADuelAgainstHumanAim).
var HumanAim = Aim{Reaction: 300 * time.Millisecond, ReactionSpread: 200 * time.Millisecond, Error: 0.2, Pause: FireInterval}

// AimOf returns the aim named by -bot-aim: HumanAim for "human", the
// perfect aim for "perfect" or "".
func AimOf(name string) Aim {
	if name == AimHuman {
		return HumanAim
	}
	return Aim{}
}

// validAim reports whether name is an aim -bot-aim accepts.
func validAim(name string) bool { return name == "" || name == AimPerfect || name == AimHuman }

// aimer is a bot's state for its Aim: the target it has in view and since
// when, and its own random source (the bot's moves draw from another, so
// that they do not depend on the aim).
type aimer struct {
	rng      *rand.Rand
	target   ecs.Entity // the player in view; the zero entity when none
	seenAt   time.Duration
	reaction time.Duration
}

// sees notes what the bot has in view at now (the zero entity: nothing)
// and reports whether it has had it in view long enough to fire.
func (a *aimer) sees(aim Aim, target ecs.Entity, now time.Duration) bool {
	if target != a.target {
		a.target, a.seenAt, a.reaction = target, now, aim.Reaction
		if aim.ReactionSpread > 0 {
			a.reaction += time.Duration(a.rng.Int64N(int64(aim.ReactionSpread)))
		}
	}
	return !target.IsZero() && now-a.seenAt >= a.reaction
}

// miss returns the angle by which a shot misses its aim.
func (a *aimer) miss(aim Aim) float64 {
	if aim.Error == 0 {
		return 0
	}
	return a.rng.NormFloat64() * aim.Error
}

// pause returns the extra ticks before the next shot.
func (a *aimer) pause(aim Aim) int {
	if aim.Pause <= 0 {
		return 0
	}
	return a.rng.IntN(aim.Pause + 1)
}
