package game

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// Bots aim exactly at where their client draws the target and fire when
// they see it: with lag compensation at least 99 % of those shots are hits;
// judged against the present (the other mode, same shots, same run) far
// fewer are.
func TestLagCompensatedShotsHitWhatTheShooterSaw(t *testing.T) {
	for _, rtt := range []time.Duration{50 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond} {
		t.Run(fmt.Sprint(rtt), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Clients, cfg.Duration, cfg.RTT, cfg.Jitter, cfg.Loss = 4, 60*time.Second, rtt, 20*time.Millisecond, 2
			_, r := run(t, cfg)
			sh := r.Server.Shots
			require.Greater(t, sh.Fired, uint64(300), "the bots must fight")
			rate := float64(sh.Hits) / float64(sh.Fired)
			present := float64(sh.OtherModeHits) / float64(sh.Fired)
			t.Logf("rtt %v: %d shots, %.1f%% hits with lag compensation, %.1f%% against the present; %v", rtt, sh.Fired, 100*rate, 100*present, sh.Verdicts)
			assert.GreaterOrEqual(t, rate, 0.99)
			assert.LessOrEqual(t, float64(sh.Verdicts["view_implausible"]), 0.005*float64(sh.Fired), "honest views stay inside the plausible age")
			assert.Less(t, present, rate-0.2, "without compensation the targets have moved on")
			assert.Greater(t, sh.Kills, uint64(10))
			assert.True(t, r.Converged)
			var fired uint64
			for _, c := range r.Clients {
				fired += c.ShotsFired
			}
			assert.GreaterOrEqual(t, fired, sh.Fired, "every judged shot was first a predicted shot effect")
		})
	}
}

func TestLagCompensationOffIsTheOtherMode(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT = 4, 20*time.Second, 150*time.Millisecond
	_, on := run(t, cfg)
	cfg.LagComp = false
	_, off := run(t, cfg)
	assert.Equal(t, "off", off.Config.LagComp)
	onRate := float64(on.Server.Shots.Hits) / float64(on.Server.Shots.Fired)
	offRate := float64(off.Server.Shots.Hits) / float64(off.Server.Shots.Fired)
	assert.Less(t, offRate, onRate-0.2)
	assert.Greater(t, float64(off.Server.Shots.OtherModeHits)/float64(off.Server.Shots.Fired), 0.99,
		"judged at the view tick, the off-mode shots would have hit")
}

// A client pulling the trigger every tick is refused by the fire rate; one
// claiming to shoot from 5 units away is refused by the origin check.
func TestServerRefusesImpossibleShots(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Jitter, cfg.Loss = 3, 10*time.Second, 0, 0
	cfg.Client = func(i int, spec *harness.ClientSpec) {
		switch i {
		case 1: // trigger-happy: fires every tick at whoever it sees
			bot := NewBot(99, &gw.VirtualTime{}, time.Hour)
			spec.Options.Input = systems.InputFunc(func(w *gw.World, tick gw.Tick) Command {
				bot.ready = 0
				return bot.Input(w, tick)
			})
		case 2: // claims to shoot from 5 units to its right
			bot := NewBot(98, &gw.VirtualTime{}, time.Hour)
			spec.Options.Input = systems.InputFunc(func(w *gw.World, tick gw.Tick) Command {
				c := bot.Input(w, tick)
				if c.Fire.Pressed() {
					c.OriginX += 5
				}
				return c
			})
		}
	}
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	for _, p := range m.Players[1:] {
		require.Nil(t, p.Bot)
	}
	r := m.Run(nil)
	v := r.Server.Shots.Verdicts
	assert.Greater(t, v["fire_rate"], uint64(20))
	assert.Greater(t, v["origin_mismatch"], uint64(3))
	assert.Zero(t, v["outside_window"])
}

// Remote players stay smooth on a bad link: no drawn step longer than 1.5
// times the longest step the game allows per tick (teleports excluded),
// and extrapolation never beyond its cap.
func TestRemoteGhostsStaySmoothAtTenPercentLoss(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Loss, cfg.Jitter = 4, 60*time.Second, 10, 30*time.Millisecond
	m, r := run(t, cfg)
	for _, c := range r.Clients {
		assert.LessOrEqualf(t, c.MaxRemoteStep, 1.5, "client %d", c.ID)
		assert.Greater(t, c.MaxRemoteStep, 0.3, "remote players did move")
		assert.LessOrEqual(t, c.MaxExtrapolation, m.Harness.Clients[0].Stats().ExtrapolationCap)
		assert.Greater(t, c.InterpDelayMS, 45.0, "the adaptive delay grows with jitter past its floor of two ticks (33 ms)")
		assert.Greater(t, c.Teleports, uint64(0), "respawns show as teleports")
	}
	assert.True(t, r.Converged)
}

func TestExtrapolationIsCapped(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Loss, cfg.Jitter = 3, 30*time.Second, 30, 40*time.Millisecond
	cfg.InterpDelay = 20 * time.Millisecond // far too short: forces extrapolation
	_, r := run(t, cfg)
	for _, c := range r.Clients {
		assert.Greater(t, c.ExtrapolatedTicks, 10.0)
		assert.LessOrEqual(t, c.MaxExtrapolation, 4.0, "the default cap")
		assert.InDelta(t, 20, c.InterpDelayMS, 0.01, "a fixed delay stays fixed")
	}
}

// A respawn is a teleport: remote clients show the player at the spot it
// died, then at its spawn point, with no frame in between; the owner's
// smoothing snaps instead of sliding.
func TestRespawnTeleportsWithoutASlide(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 4, 30*time.Second
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	c := m.Harness.Clients[0]
	type frame struct {
		p     Position
		alive bool
	}
	last := map[components.GhostID]frame{}
	teleports, slides := 0, 0
	f := generic.NewFilter4[Position, Health, components.Interpolated, components.Ghost]()
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
		q := f.Query(w.Arche())
		for q.Next() {
			p, h, in, g := q.Get()
			prev, ok := last[g.ID]
			last[g.ID] = frame{*p, h.Alive()}
			if !ok {
				continue
			}
			if in.Teleported {
				teleports++
				assert.False(t, prev.alive, "a teleport comes from the dead body")
				assert.True(t, h.Alive())
				sp := SpawnPoint(g.Owner)
				assert.Less(t, length(p.X-sp.X, p.Y-sp.Y), float32(0.5), "straight to the spawn point")
			} else if !prev.alive && h.Alive() {
				slides++
			}
		}
	}))
	r := m.Run(nil)
	assert.Greater(t, teleports, 3)
	assert.Zero(t, slides, "no respawn may be blended")
	var snaps uint64
	for _, cl := range r.Clients {
		snaps += cl.SmoothingSnaps
	}
	assert.Greater(t, snaps, uint64(0), "own respawns snap instead of sliding")
}

// Small corrections of the own player (shoves it could not predict) are
// smoothed: the drawn position never jumps by more than a fraction of the
// correction in one frame.
func TestOwnCorrectionsAreSmoothed(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 6, 20*time.Second
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	c, ps := m.Harness.Clients[0], m.Players[0]
	own := generic.NewFilter2[Position, Health]().With(generic.T[components.Predicted]())
	var prev [3]float32
	var have bool
	var maxJump float32
	smoothed := 0
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
		q := own.Query(w.Arche())
		for q.Next() {
			p, h := q.Get()
			v := ps.Smoother.Visual(q.Entity())
			if v[0] != p.X {
				smoothed++ // drawn off its position: a correction is being smoothed
			}
			if have && h.Alive() {
				d := length(v[0]-prev[0], v[1]-prev[1])
				if d < TeleportDistance {
					maxJump = max(maxJump, d)
				}
			}
			prev, have = v, h.Alive()
		}
	}))
	r := m.Run(nil)
	require.Greater(t, r.Clients[0].Mispredictions, uint64(5))
	assert.Greater(t, smoothed, 10, "frames drawn with a correction offset")
	assert.Less(t, float64(maxJump), 2.5*float64(MaxStep(cfg.TickRate)), "no visible jump of the own player")
	assert.False(t, math.IsNaN(float64(maxJump)))
}

// shotRig is a server world with the arena's compensator and trigger, a
// shooter at (-3, 2) and a target at (3, 2) with a clear line between.
type shotRig struct {
	w               *gw.World
	shots           *ShotSystem
	lc              *lagcomp.Compensator
	shooter, target ecs.Entity
	input           generic.Map[Command]
	head            generic.Map[components.InputHeader]
}

func newShotRig(t *testing.T, lagComp bool) *shotRig {
	w := gw.NewWorld(gw.WorldOptions{})
	lc, err := lagcomp.New(w, lagcomp.Options{
		TickRate: 60, Walls: wallCorners(), Range: ShotRange, MinShotInterval: FireInterval, MaxOriginError: MaxOriginError,
		Schema: mustSchema(t).Schema, Present: !lagComp,
		Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
			p, f := lagcomp.Get[Position](r), lagcomp.Get[Facing](r)
			return [3]float32{p.X, p.Y, 0}, f.Yaw
		},
		Visible: func(_ ecs.Entity, tg *lagcomp.Rewound) bool { return lagcomp.Get[Health](tg).Alive() },
	})
	require.NoError(t, err)
	require.NoError(t, lagcomp.Register[Position](lc))
	require.NoError(t, lagcomp.Register[Facing](lc))
	require.NoError(t, lagcomp.Register[Health](lc))
	spawn := generic.NewMap6[Position, Facing, Health, components.Hitboxes, Command, components.InputHeader](w.Arche())
	hb := PlayerHitboxes()
	r := &shotRig{w: w, lc: lc, shots: NewShotSystem(w, lc), input: generic.NewMap[Command](w.Arche()),
		head: generic.NewMap[components.InputHeader](w.Arche())}
	r.shooter = spawn.NewWith(&Position{X: -3, Y: 2}, &Facing{}, &Health{HP: MaxHP}, &hb, &Command{}, &components.InputHeader{})
	r.target = spawn.NewWith(&Position{X: 3, Y: 2}, &Facing{}, &Health{HP: MaxHP}, &hb, &Command{}, &components.InputHeader{})
	for tick := gw.Tick(1); tick < 20; tick++ {
		r.tick(tick, false)
	}
	return r
}

// tick records tick and runs the trigger, the shooter firing at the target
// (as it stood one tick earlier) if fire is set.
func (r *shotRig) tick(tick gw.Tick, fire bool) {
	r.w.SetTick(tick)
	*r.input.Get(r.shooter) = Command{}
	*r.head.Get(r.shooter) = components.InputHeader{Tick: tick}
	if fire {
		*r.input.Get(r.shooter) = Command{Fire: 1, OriginX: -3, OriginY: 2}
		*r.head.Get(r.shooter) = components.InputHeader{Tick: tick, HasView: true, ViewTick: tick - 1, MaxViewAge: 2}
	}
	r.lc.Update(r.w)
	r.shots.Update(r.w)
}

// A shot refused for its fire rate would be refused in the other mode too
// (the fire rate does not depend on the mode): it is no other-mode hit.
func TestFireRateRefusalIsNoOtherModeHit(t *testing.T) {
	for _, lagComp := range []bool{true, false} {
		r := newShotRig(t, lagComp)
		r.tick(20, true)
		r.tick(21, true) // one tick later: too soon
		st := r.shots.Stats
		require.Equal(t, uint64(2), st.Fired)
		require.Equal(t, uint64(1), st.Hits, "lag compensation %v", lagComp)
		require.Equal(t, uint64(1), st.Verdicts["fire_rate"])
		assert.Equal(t, uint64(1), st.OtherModeHits, "lag compensation %v: only the accepted shot hits in the other mode", lagComp)
	}
}

// The history of a tick must hold what the snapshot of that tick carries
// (the clients draw it): a target killed on tick 20 is sent dead for tick
// 20, so a later shot that saw tick 20 finds it not visible, not a hit.
func TestTargetKilledOnATickIsDeadInThatTicksHistory(t *testing.T) {
	r := newShotRig(t, true)
	health := generic.NewMap[Health](r.w.Arche())
	health.Get(r.target).HP = Damage
	r.tick(20, true)
	require.Equal(t, uint64(1), r.shots.Stats.Kills)
	require.False(t, health.Get(r.target).Alive(), "the snapshot of tick 20 sends the target dead")
	for tick := gw.Tick(21); tick < 40; tick++ {
		r.tick(tick, false)
	}
	hp, ok := gw.ValueAt[Health](r.lc.History(), 20, r.target)
	require.True(t, ok)
	assert.False(t, hp.Alive(), "the history of tick 20 holds the target alive: %+v", hp)
	for _, frac := range []float32{0, 0.5} {
		shot := lagcomp.Shot{Shooter: r.shooter, Tick: 40, ViewTick: 20, ViewFraction: frac, Origin: [3]float32{-3, 2, 0}, Dir: [3]float32{1, 0, 0}, MaxViewAge: 20}
		assert.Equal(t, lagcomp.ReasonNotVisible, r.lc.Probe(shot, false).Reason, "view 20 + %v", frac)
	}
}

// A hit that leaves its target alive does not record the tick again: the
// arena's rules read only whether a player is alive, which the hit did not
// change, so a later shot at the view of that tick is judged alike.
func TestTargetHitNotKilledKeepsThatTicksHistory(t *testing.T) {
	r := newShotRig(t, true)
	health := generic.NewMap[Health](r.w.Arche())
	health.Get(r.target).HP = 2 * Damage
	r.tick(20, true)
	require.Equal(t, uint64(1), r.shots.Stats.Hits)
	require.Zero(t, r.shots.Stats.Kills)
	require.Equal(t, int16(Damage), health.Get(r.target).HP)
	for tick := gw.Tick(21); tick < 40; tick++ {
		r.tick(tick, false)
	}
	hp, ok := gw.ValueAt[Health](r.lc.History(), 20, r.target)
	require.True(t, ok)
	assert.Equal(t, int16(2*Damage), hp.HP, "tick 20 as recorded before the hit")
	shot := lagcomp.Shot{Shooter: r.shooter, Tick: 40, ViewTick: 20, Origin: [3]float32{-3, 2, 0}, Dir: [3]float32{1, 0, 0}, MaxViewAge: 20}
	v := r.lc.Probe(shot, false)
	assert.True(t, v.Hit, "alive either way: %+v", v)
}

// onlyFromCover is a game's own judge for the test below: it refuses every
// shot fired from the open half of the arena (x < 0) with its own reason,
// and leaves the rest to the compensator.
type onlyFromCover struct{ *lagcomp.Compensator }

const reasonInTheOpen lagcomp.Reason = "in_the_open"

func (j onlyFromCover) Judge(s lagcomp.Shot) lagcomp.Verdict {
	if s.Origin[0] < 0 {
		return lagcomp.Verdict{Reason: reasonInTheOpen}
	}
	return j.Compensator.Judge(s)
}

func (j onlyFromCover) Rules() []lagcomp.Reason {
	return append([]lagcomp.Reason{reasonInTheOpen}, j.Compensator.Rules()...)
}

// A game replaces the judge: the arena's shots go to it, its refusals are
// counted under its own reason, and the report declares its rules.
func TestArenaShotsGoToTheGamesJudge(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 4, 10*time.Second
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	m.Shots.Judge = onlyFromCover{m.Shots.LC}
	r := m.Run(nil)
	sh := r.Server.Shots
	assert.Positive(t, sh.Verdicts[string(reasonInTheOpen)], "shots from the open were refused by the game's rule")
	assert.Positive(t, sh.Hits, "the others were judged by the compensator")
	assert.Equal(t, sh.Fired, sumVerdicts(sh.Verdicts))
	assert.Equal(t, []string{"in_the_open", "outside_window", "view_implausible", "shooter_dead", "fire_rate", "origin_mismatch", "occluded", "not_visible"}, sh.Rules)
}

func sumVerdicts(v map[string]uint64) uint64 {
	var n uint64
	for _, c := range v {
		n += c
	}
	return n
}

// A shot whose input came after its tick ran is applied on a later tick
// (components.Press) with its command's claims; the server judges it on the
// tick it claims only when that tick ran on a substitute, so no claim moves
// an on-time shot earlier (to beat the fire rate, or to see an older view).
func TestLateShotsAreJudgedOnTheirOwnTick(t *testing.T) {
	var r recentInputs
	real := func(tick gw.Tick) *components.InputHeader {
		return &components.InputHeader{Tick: tick, HasView: true, ViewTick: tick - 6, ViewFraction: 0.25}
	}
	for tick := gw.Tick(100); tick < 110; tick++ {
		r.observe(real(tick))
	}
	r.observe(&components.InputHeader{Tick: 110}) // its input is late
	h := real(111)
	r.observe(h)
	tick, view, frac := r.fired(h, 110)
	assert.Equal(t, gw.Tick(110), tick, "the late shot is judged on its tick")
	assert.Equal(t, gw.Tick(104), view, "with the view as far behind it")
	assert.Equal(t, float32(0.25), frac)

	tick, view, _ = r.fired(h, 109)
	assert.Equal(t, gw.Tick(111), tick, "109 ran on its own input: the claim is ignored")
	assert.Equal(t, gw.Tick(105), view)
	tick, _, _ = r.fired(h, 111-64)
	assert.Equal(t, gw.Tick(111), tick, "older than what the server remembers")

	// Pressed on a substitute too (the next input is late as well): the
	// view is the last one claimed, as far behind the shot's tick.
	sub := &components.InputHeader{Tick: 112}
	r.observe(sub)
	tick, view, frac = r.fired(sub, 110)
	assert.Equal(t, gw.Tick(110), tick)
	assert.InDelta(t, 110-5.75, float64(view)+float64(frac), 1e-6)

	// A gap of more than 64 ticks forgets what ran on substitutes.
	r.observe(real(300))
	tick, _, _ = r.fired(real(300), 299)
	assert.Equal(t, gw.Tick(300), tick)
}

// A shot's tick goes on the wire modulo 256 and comes back as the latest
// tick with that code, across the wrap too.
func TestShotTickRoundTrip(t *testing.T) {
	for _, fired := range []gw.Tick{0, 255, 256, 1000, ^gw.Tick(0) - 3} {
		for _, late := range []int{0, 1, 63, 255} {
			assert.Equal(t, fired, shotTick(shotCode(fired), fired.Add(late)), "fired %d, %d ticks before", fired, late)
		}
	}
}
