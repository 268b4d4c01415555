package game

import (
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
)

// rocketWorld is a world with the rocket system alone, as the prediction
// stage runs it (each system's commands applied after it).
type rocketWorld struct {
	w      *gw.World
	sched  *gw.Schedule
	schema *Schema
}

func newRocketWorld(t *testing.T) *rocketWorld {
	t.Helper()
	schema, err := NewSchema()
	require.NoError(t, err)
	w := gw.NewWorld(gw.WorldOptions{})
	w.SetTick(100)
	s := gw.NewSchedule()
	s.Add(gw.StagePrediction, NewRocketSystem(w, schema, 60))
	return &rocketWorld{w: w, sched: s, schema: schema}
}

// player adds a predicted player of conn at p.
func (rw *rocketWorld) player(conn components.ConnID, p Position, hp int16) ecs.Entity {
	m := generic.NewMap7[components.Ghost, Position, Velocity, Health, Launcher, Command, components.Predicted](rw.w.Arche())
	return m.NewWith(&components.Ghost{ID: components.GhostID(conn), Owner: conn}, &p, &Velocity{}, &Health{HP: hp},
		&Launcher{Ready: rw.w.Tick()}, &Command{}, &components.Predicted{})
}

// rocket adds a predicted rocket of conn's at p flying at v for left
// ticks, as the endpoint makes it once it took the spawn request.
func (rw *rocketWorld) rocket(conn components.ConnID, p Position, vx, vy float32, left uint16) ecs.Entity {
	m := generic.NewMap4[components.Ghost, Position, Rocket, components.Predicted](rw.w.Arche())
	return m.NewWith(&components.Ghost{ID: 100, Owner: conn}, &p, &Rocket{VX: vx, VY: vy, Left: left}, &components.Predicted{})
}

// tick runs the next tick.
func (rw *rocketWorld) tick() {
	rw.sched.Tick(rw.w)
}

// requests returns the spawn requests of the tick and their rockets.
func (rw *rocketWorld) requests() ([]components.SpawnGhost, []Position, []Rocket) {
	var reqs []components.SpawnGhost
	var at []Position
	var rs []Rocket
	q := generic.NewFilter3[components.SpawnGhost, Position, Rocket]().Query(rw.w.Arche())
	for q.Next() {
		req, p, r := q.Get()
		reqs, at, rs = append(reqs, *req), append(at, *p), append(rs, *r)
	}
	return reqs, at, rs
}

// A press fires a rocket from the player's edge toward its aim, a spawn
// request of the rocket type owned by the shooter, and starts the
// launcher's cooldown: a press during it fires nothing, nor does a dead
// player's, and the launcher fires again once it is ready.
func TestRocketIsFiredOnlyWhenTheLauncherIsReady(t *testing.T) {
	rw := newRocketWorld(t)
	me := rw.player(3, Position{X: 1, Y: 2}, MaxHP)
	cmd := generic.NewMap[Command](rw.w.Arche())
	launcher := generic.NewMap[Launcher](rw.w.Arche())
	health := generic.NewMap[Health](rw.w.Arche())
	cmd.Get(me).Rocket, cmd.Get(me).Aim = 1, math.Pi/2
	rw.tick()
	reqs, at, rs := rw.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, components.SpawnGhost{Type: uint16(rw.schema.Rocket), Owner: 3}, reqs[0])
	assert.InDelta(t, 1, at[0].X, 1.0/256)
	assert.InDelta(t, 2+Radius+RocketRadius, at[0].Y, 1.0/256)
	assert.InDelta(t, 0, rs[0].VX, 1.0/256)
	assert.Equal(t, RocketSpeed, rs[0].VY)
	assert.Equal(t, RocketLife(60), rs[0].Left)
	assert.Equal(t, uint16(80), rs[0].Left, "20 units at 15 a second, 60 ticks a second")
	cooldown := ticksOf(RocketCooldown, 60)
	assert.Equal(t, rw.w.Tick().Add(cooldown), launcher.Get(me).Ready)

	for range cooldown - 1 { // still pressed: nothing until it is ready
		rw.tick()
	}
	reqs, _, _ = rw.requests()
	assert.Len(t, reqs, 1, "no second rocket during the cooldown")
	health.Get(me).HP = 0
	rw.tick()
	reqs, _, _ = rw.requests()
	assert.Len(t, reqs, 1, "the dead fire nothing")
	health.Get(me).HP = MaxHP
	rw.tick()
	reqs, _, _ = rw.requests()
	assert.Len(t, reqs, 2, "ready again")
}

// A rocket explodes (a predicted despawn on the tick) on a pillar, on the
// arena's edge, on a living player other than its shooter and at the end
// of its range; it flies through its shooter and past the dead.
func TestRocketExplodesOnPillarsPlayersAndItsRange(t *testing.T) {
	rw := newRocketWorld(t)
	rw.player(1, Position{X: -3, Y: -3}, MaxHP)
	rw.player(2, Position{X: 3, Y: -3}, MaxHP)
	rw.player(4, Position{X: -8, Y: -8}, 0)
	step := RocketSpeed / 60
	rockets := map[string]ecs.Entity{
		"pillar": rw.rocket(1, Position{X: 4.25 - RocketRadius - step/2, Y: 0}, RocketSpeed, 0, 50),
		"edge":   rw.rocket(1, Position{X: 0, Y: HalfSize - RocketRadius - step/2}, 0, RocketSpeed, 50),
		"player": rw.rocket(1, Position{X: 3 - Radius - RocketRadius - step/2, Y: -3}, RocketSpeed, 0, 50),
		"range":  rw.rocket(1, Position{X: 0, Y: -7}, 0, 0, 1),
		"own":    rw.rocket(1, Position{X: -3 - step/2, Y: -3}, RocketSpeed, 0, 50),
		"dead":   rw.rocket(1, Position{X: -8 - step/2, Y: -8}, RocketSpeed, 0, 50),
	}
	rw.tick()
	gone := generic.NewMap[components.Despawned](rw.w.Arche())
	for name, e := range rockets {
		wantGone := name != "own" && name != "dead"
		if assert.Equalf(t, wantGone, gone.Has(e), "%s", name) && wantGone {
			assert.Equalf(t, rw.w.Tick(), gone.Get(e).Tick, "%s: despawned on the tick", name)
		}
	}
	pos := generic.NewMap[Position](rw.w.Arche())
	before := *pos.Get(rockets["pillar"])
	rw.tick()
	assert.Equal(t, before, *pos.Get(rockets["pillar"]), "an exploded rocket flies no further")
}

// The splash: full damage within a player's radius, falling linearly to
// nothing SplashRadius beyond it.
func TestSplashDamageFallsOffWithDistance(t *testing.T) {
	assert.Equal(t, int16(RocketDamage), SplashDamage(0))
	assert.Equal(t, int16(RocketDamage), SplashDamage(Radius))
	assert.Equal(t, int16(RocketDamage/2), SplashDamage(Radius+SplashRadius/2))
	assert.Equal(t, int16(1), SplashDamage(Radius+SplashRadius-0.01))
	assert.Zero(t, SplashDamage(Radius+SplashRadius))
	assert.Zero(t, SplashDamage(100))
}

// A magazine holds MagazineSize rockets and gets one back every refill
// ticks after the first was spent, up to full.
func TestMagazineRefusesWhenEmptyAndRefills(t *testing.T) {
	m := Magazine{Rockets: MagazineSize}
	const refill = 120
	for i := range MagazineSize {
		assert.Truef(t, m.take(gw.Tick(10+i), refill), "rocket %d", i+1)
	}
	assert.False(t, m.take(20, refill), "empty")
	assert.False(t, m.take(129, refill), "the first comes back at 130")
	assert.True(t, m.take(130, refill))
	assert.False(t, m.take(131, refill))
	assert.True(t, m.take(10+3*refill, refill), "two more back by then")
	assert.True(t, m.take(10+3*refill, refill))
	assert.False(t, m.take(10+3*refill, refill))
	full := Magazine{Rockets: MagazineSize}
	assert.True(t, full.take(5000, refill))
	assert.Equal(t, int8(MagazineSize-1), full.Rockets)
	assert.Equal(t, gw.Tick(5000+refill), full.Refill, "the refill starts when a full magazine is spent from")
}

// rocketRun is what the shooting client of rocketMatch saw.
type rocketRun struct {
	m          *Match
	r          *Report
	duplicates int
	// refusedLife is the longest a predicted rocket that no ghost took
	// over stayed in the client's world.
	refusedLife time.Duration
	removed     int
}

// rocketMatch plays the link, 150 ms and 5 % loss, for d: client
// 1 presses the rocket trigger whenever its launcher is ready (as its
// client predicts it), turning its aim a little each tick, so its rockets
// end on pillars, the edge, the other player or their range, and its
// magazine runs dry (the server refuses some); client 2 runs in a circle
// without shooting. The shooter's client runs the determinism check. On
// every frame of the shooter's client it checks that no two entities hold
// one ghost ID, and it times the predicted rockets no ghost took over.
func rocketMatch(t *testing.T, d time.Duration) *rocketRun {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT, cfg.Loss = 2, d, 150*time.Millisecond, 5
	run := &rocketRun{}
	aim := float32(0)
	launchers := generic.NewFilter1[Launcher]().With(generic.T[components.Predicted]())
	cfg.Client = func(i int, spec *harness.ClientSpec) {
		if i == 1 {
			spec.Options.Input = circling(&run.m, d)
			return
		}
		spec.Options.SyncTest = 4
		spec.Options.Input = systems.InputFunc(func(w *gw.World, tick gw.Tick) Command {
			if run.m.Harness.Time.Now() >= d {
				return Command{Aim: aim}
			}
			aim += 0.05
			cmd := Command{Aim: aim, MoveX: float32(math.Cos(float64(aim) / 7))}
			q := launchers.Query(w.Arche())
			for q.Next() {
				if !tick.Before(q.Get().Ready) {
					cmd.Rocket = 1
				}
			}
			return cmd
		})
	}
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	run.m = m
	type life struct {
		born    time.Duration
		matched bool
	}
	lives := map[ecs.Entity]*life{}
	rockets := generic.NewFilter1[components.Ghost]().With(generic.T[Rocket]())
	c := m.Harness.Clients[0]
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
		now := m.Harness.Time.Now()
		ids := map[components.GhostID]bool{}
		q := generic.NewFilter1[components.Ghost]().Query(w.Arche())
		for q.Next() {
			if id := q.Get().ID; id != 0 {
				if ids[id] {
					run.duplicates++
				}
				ids[id] = true
			}
		}
		rq := rockets.Query(w.Arche())
		for rq.Next() {
			l := lives[rq.Entity()]
			if l == nil {
				l = &life{born: now}
				lives[rq.Entity()] = l
			}
			l.matched = l.matched || rq.Get().ID != 0
		}
		for e, l := range lives {
			if !w.Arche().Alive(e) {
				if !l.matched {
					run.refusedLife = max(run.refusedLife, now-l.born)
					run.removed++
				}
				delete(lives, e)
			}
		}
	}))
	run.r = m.Run(nil)
	return run
}

// The test of predicted spawns, in the arena: at 150 ms and 5 %
// loss, of 200 rockets and more, every one the shooter's client predicts
// is taken over by its server ghost or removed and counted, none left
// pending, none held twice; its launch sound plays once per rocket
// however often the ticks are replayed; those the server refused for an
// empty magazine leave the client within the bound
// docs/predicted-spawns.md states (a round trip plus SpawnMatchWindow + 8
// ticks, with the client's lead and a lost snapshot of slack); the
// determinism check of the shooter's client finds nothing; the match
// converges.
func TestRocketsAreMatchedOrRemovedAt150msAnd5PercentLoss(t *testing.T) {
	run := rocketMatch(t, 160*time.Second)
	require.GreaterOrEqual(t, run.r.Clients[0].Projectiles.Predicted, uint64(200), "the issue's 200 rockets, one every cooldown")
	checkRockets(t, run)
}

// checkRockets checks what TestRocketsAreMatchedOrRemovedAt150msAnd5PercentLoss
// states of a rocketMatch.
func checkRockets(t *testing.T, run *rocketRun) {
	t.Helper()
	r, m := run.r, run.m
	p := r.Clients[0].Projectiles
	t.Logf("projectiles %+v; server %+v; refused rockets lived at most %v", p, r.Server.Rockets, run.refusedLife)
	assert.Equal(t, p.Predicted, p.Matched+p.UnmatchedRemoved, "every one matched or removed")
	assert.Zero(t, p.Pending)
	assert.Equal(t, p.Predicted, p.Launched, "one launch sound per rocket")
	ro := r.Server.Rockets
	assert.Equal(t, p.Predicted, ro.Fired+ro.Refused, "the server decided on every rocket the client predicted")
	assert.Positive(t, ro.Refused, "the magazine ran dry")
	assert.GreaterOrEqual(t, p.UnmatchedRemoved, ro.Refused, "each refusal removed on the client")
	// A rocket fired point-blank at a pillar lives a tick or two on the
	// server; when the snapshots of those ticks are lost, its ghost never
	// reaches the client, whose prediction (which exploded alike) is
	// removed unmatched: 5 of 82 in this match.
	assert.LessOrEqual(t, ro.Fired-p.Matched, ro.Fired/10, "every rocket the server made took its prediction over, or ended unseen")
	assert.Equal(t, int(p.UnmatchedRemoved), run.removed, "the client counted the rockets it removed")
	assert.Zero(t, run.duplicates, "no ghost ID on two entities")
	// A round trip and its jitter, the SpawnMatchWindow and 8 ticks, 3
	// of the client's lead over the server and 2 for lost snapshots.
	bound := 150*time.Millisecond + 2*m.Config.Jitter + time.Duration(8+8+3+2)*time.Second/60
	assert.LessOrEqual(t, run.refusedLife, bound)
	assert.Equal(t, r.Server.Rockets.Fired, r.Server.Rockets.Exploded, "every rocket ended on the server")
	st := m.Harness.Clients[0].Stats()
	assert.NoError(t, st.FirstDesync)
	assert.Positive(t, st.SyncTestChecks)
	assert.True(t, r.Converged, r.Clients[0].Divergence)
	assert.NotContains(t, r.Clients[0].MispredictionsBy, "game.Health", "splash damage is the server's")
}
