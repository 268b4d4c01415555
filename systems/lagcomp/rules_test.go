package lagcomp_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// A view older than the server measured for the connection is refused
// with its own reason, before anything is rewound; one inside is judged.
func TestViewOlderThanMeasuredIsImplausible(t *testing.T) {
	s := newScene(t, lagcomp.Options{})
	shot := s.aim(10, 4, 40) // 20 ticks before the shot's tick 60
	shot.MaxViewAge = 19.9
	assert.Equal(t, lagcomp.ReasonViewImplausible, s.lc.Judge(shot).Reason)
	shot.MaxViewAge = 20
	assert.Equal(t, lagcomp.ReasonHit, s.lc.Judge(shot).Reason)
	shot.ViewTick, shot.ViewFraction = 39, 0.95 // 20.05 ticks
	assert.Equal(t, lagcomp.ReasonViewImplausible, s.lc.Judge(shot).Reason)
	shot.MaxViewAge = 0 // the zero value trusts no age at all
	shot.ViewTick, shot.ViewFraction = 60, 0
	assert.NotEqual(t, lagcomp.ReasonViewImplausible, s.lc.Judge(shot).Reason, "a view of the shot's own tick")
	assert.Equal(t, uint64(2), s.lc.Stats().Verdicts[lagcomp.ReasonViewImplausible])
}

// A pillar stands between the shooter at (0, 0) and (0, 1.95). An origin
// claimed there, inside the distance tolerance, is refused: the shot
// cannot start around the corner. A shooter really standing there is
// judged normally, and hits.
func TestForgedOriginAroundAPillar(t *testing.T) {
	pillar := [][2][3]float32{{{-0.5, 0.8, -1}, {0.5, 1.2, 1}}}
	s := newScene(t, lagcomp.Options{Walls: pillar, MaxOriginError: 2})
	forged := s.aim(10, 4, 40)
	forged.Origin = [3]float32{0, 1.95, 0}
	forged.Dir = [3]float32{10, 4 - 1.95, 0}
	v := s.lc.Judge(forged)
	assert.Equal(t, lagcomp.ReasonOccluded, v.Reason)
	assert.False(t, v.Hit)
	assert.Zero(t, v.Target, "refused before any target was looked at")

	honest := newScene(t, lagcomp.Options{Walls: pillar, MaxOriginError: 2})
	honest.pos.Get(honest.shooter).Y = 1.95
	honest.w.SetTick(60)
	honest.lc.Record(60)
	shot := honest.aim(10, 4, 40)
	shot.Origin, shot.Dir = forged.Origin, forged.Dir
	v = honest.lc.Judge(shot)
	assert.Equal(t, lagcomp.ReasonHit, v.Reason)
	assert.Equal(t, honest.target, v.Target)
}

// Life marks the living in the death-rule tests.
type Life struct{ HP int32 }

// deathScene is a scene whose shooter dies on tick 50.
func deathScene(t *testing.T, trade time.Duration) *scene {
	s := newScene(t, lagcomp.Options{TradeWindow: trade, Alive: func(r *lagcomp.Rewound) bool {
		l := lagcomp.Get[Life](r)
		return l == nil || l.HP > 0
	}})
	// The shooter is dead from tick 50 on: record those ticks again (a
	// record replaces the tick's earlier one).
	life := generic.NewMap[Life](s.w.Arche())
	life.Get(s.shooter).HP = 0
	for tick := gw.Tick(50); tick <= 60; tick++ {
		s.pos.Get(s.target).Y = float32(tick) * 0.1
		s.w.SetTick(tick)
		s.lc.Record(tick)
	}
	return s
}

// shotAt aims at the target as it stood at view, fired on input tick.
func (s *scene) shotAt(tick gw.Tick, view float64) lagcomp.Shot {
	shot := s.aim(10, float32(view)*0.1, view)
	shot.Tick = tick
	return shot
}

// The death rule: by default a shooter that died on tick 50 still trades
// with a view from before its death (its own latency is the limit); not
// with a view that showed its death. A trade window bounds how long after
// the death; a negative one refuses every shot after it.
func TestDeathRules(t *testing.T) {
	def := deathScene(t, 0)
	assert.Equal(t, lagcomp.ReasonHit, def.lc.Judge(def.shotAt(58, 45)).Reason, "a trade: the view predates the death")
	assert.Equal(t, lagcomp.ReasonHit, def.lc.Judge(def.shotAt(58, 50)).Reason, "a view at the death's tick is within the tick of tolerance")
	assert.Equal(t, lagcomp.ReasonShooterDead, def.lc.Judge(def.shotAt(58, 51)).Reason, "the view showed the shooter dead")
	assert.Equal(t, lagcomp.ReasonHit, def.lc.Judge(def.shotAt(49, 40)).Reason, "input tick before the death")
	late := def.shotAt(58, 45)
	late.InterpolationDelay = 6 // its own state showed tick 51: past its death
	assert.Equal(t, lagcomp.ReasonShooterDead, def.lc.Judge(late).Reason, "it saw itself die")
	late.InterpolationDelay, late.Acked = 4, 50 // it had the snapshot of its death
	assert.Equal(t, lagcomp.ReasonShooterDead, def.lc.Judge(late).Reason, "it acknowledged its death")
	late.Acked = 49
	assert.Equal(t, lagcomp.ReasonHit, def.lc.Judge(late).Reason, "it could not know")

	window := deathScene(t, 50*time.Millisecond) // 3 ticks
	assert.Equal(t, lagcomp.ReasonHit, window.lc.Judge(window.shotAt(53, 45)).Reason, "3 ticks after the death")
	assert.Equal(t, lagcomp.ReasonShooterDead, window.lc.Judge(window.shotAt(54, 45)).Reason, "4 ticks after the death")

	strict := deathScene(t, -1)
	assert.Equal(t, lagcomp.ReasonShooterDead, strict.lc.Judge(strict.shotAt(50, 45)).Reason, "the input tick is the death's")
	assert.Equal(t, lagcomp.ReasonHit, strict.lc.Judge(strict.shotAt(49, 40)).Reason, "the input tick before the death")
	assert.Equal(t, uint64(1), strict.lc.Stats().Verdicts[lagcomp.ReasonShooterDead])

	_, err := lagcomp.New(gw.NewWorld(gw.WorldOptions{}), lagcomp.Options{TradeWindow: time.Second,
		Pose: func(*lagcomp.Rewound) ([3]float32, float32) { return [3]float32{}, 0 }})
	assert.ErrorContains(t, err, "trade window 1s outside ..750ms")
}

// A shooter dead for longer than the history reaches is refused, not
// judged as if it had never died.
func TestDeathOlderThanTheHistory(t *testing.T) {
	s := deathScene(t, 0)
	life := generic.NewMap[Life](s.w.Arche())
	require.Zero(t, life.Get(s.shooter).HP)
	for tick := gw.Tick(61); tick <= 100; tick++ {
		s.w.SetTick(tick)
		s.lc.Record(tick)
	}
	assert.Equal(t, lagcomp.ReasonShooterDead, s.lc.Judge(s.shotAt(100, 75)).Reason)
}
