package lagcomp_test

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// A compensator declares the rules its options switch on, in the order it
// checks them.
func TestCompensatorDeclaresItsRules(t *testing.T) {
	bare := newScene(t, lagcomp.Options{TickRate: 60})
	assert.Equal(t, []lagcomp.Reason{lagcomp.ReasonOutsideWindow, lagcomp.ReasonViewImplausible, lagcomp.ReasonOriginMismatch},
		bare.lc.Rules())
	full := newScene(t, lagcomp.Options{TickRate: 60, MinShotInterval: 6,
		Walls:   [][2][3]float32{{{4, -1, -1}, {5, 1, 1}}},
		Visible: func(ecs.Entity, *lagcomp.Rewound) bool { return true },
		Alive:   func(*lagcomp.Rewound) bool { return true }})
	assert.Equal(t, []lagcomp.Reason{lagcomp.ReasonOutsideWindow, lagcomp.ReasonViewImplausible, lagcomp.ReasonShooterDead,
		lagcomp.ReasonFireRate, lagcomp.ReasonOriginMismatch, lagcomp.ReasonOccluded, lagcomp.ReasonNotVisible}, full.lc.Rules())
}

// reasonTooFar is a game's own rule.
const reasonTooFar lagcomp.Reason = "too_far"

// shortRange is a game's judge: the compensator's rules and one of its
// own, shots at a view before tick 30 are refused (a stand-in for any rule
// of the game), checked first.
type shortRange struct{ *lagcomp.Compensator }

func (j shortRange) Judge(s lagcomp.Shot) lagcomp.Verdict {
	if s.ViewTick < 30 {
		return lagcomp.Verdict{Reason: reasonTooFar}
	}
	return j.Compensator.Judge(s)
}

func (j shortRange) Rules() []lagcomp.Reason {
	return append([]lagcomp.Reason{reasonTooFar}, j.Compensator.Rules()...)
}

// A game's judge takes the compensator's place: its verdicts name its own
// rule, and the compensator's rules still hold behind it.
func TestAGameJudgeReplacesTheCompensator(t *testing.T) {
	s := newScene(t, lagcomp.Options{TickRate: 60})
	var j lagcomp.Judge = shortRange{s.lc}
	require.Contains(t, j.Rules(), reasonTooFar)
	assert.Equal(t, reasonTooFar, j.Judge(s.aim(10, 2.5, 25)).Reason, "its own rule refuses")
	v := j.Judge(s.aim(10, 4, 40))
	assert.True(t, v.Hit, "the compensator judges what it lets through: %v", v.Reason)
	assert.Equal(t, lagcomp.ReasonOutsideWindow, j.Judge(s.aim(10, 6.5, 65)).Reason, "and its rules hold")
}
