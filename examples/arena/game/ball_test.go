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

// ballWorld is a world with the ball's physics alone.
type ballWorld struct {
	w    *gw.World
	sys  *BallSystem
	pos  generic.Map[Position]
	vel  generic.Map[Velocity]
	ball ecs.Entity
}

func newBallWorld(at Position, v Velocity) *ballWorld {
	w := gw.NewWorld(gw.WorldOptions{})
	m := generic.NewMap4[Position, Velocity, Ball, components.Predicted](w.Arche())
	bw := &ballWorld{w: w, sys: NewBallSystem(60), pos: generic.NewMap[Position](w.Arche()), vel: generic.NewMap[Velocity](w.Arche())}
	bw.ball = m.NewWith(&at, &v, &Ball{}, &components.Predicted{})
	return bw
}

func (bw *ballWorld) player(id components.GhostID, p Position, v Velocity, hp int16) {
	m := generic.NewMap4[components.Ghost, Position, Velocity, Health](bw.w.Arche())
	m.NewWith(&components.Ghost{ID: id}, &p, &v, &Health{HP: hp})
}

func (bw *ballWorld) ticks(n int) {
	for range n {
		bw.sys.Update(bw.w)
	}
}

// A player running into the ball pushes it out to touching and sends it
// off faster than it runs; one standing still nudges it at BallKick; the
// dead push nothing; the players do not move.
func TestBallIsPushedOutAndKicked(t *testing.T) {
	reach := Radius + BallRadius
	runner := newBallWorld(Position{X: 1}, Velocity{})
	runner.player(1, Position{X: 1 - reach/2}, Velocity{X: MaxSpeed}, MaxHP)
	runner.ticks(1)
	p, v := *runner.pos.Get(runner.ball), *runner.vel.Get(runner.ball)
	assert.InDelta(t, MaxSpeed+BallKick-BallFriction/60, v.X, 1e-5, "the runner's speed and the kick, less a tick of friction")
	assert.InDelta(t, 0, v.Y, 1e-6)
	assert.InDelta(t, 1-reach/2+reach+v.X/60, p.X, 1e-5, "out to touching, then a tick of flight")

	still := newBallWorld(Position{X: 1, Y: 1}, Velocity{})
	still.player(1, Position{X: 1, Y: 1 - reach/2}, Velocity{}, MaxHP)
	still.player(2, Position{X: 1, Y: 1 + reach/2}, Velocity{}, 0)
	still.ticks(1)
	v = *still.vel.Get(still.ball)
	assert.InDelta(t, BallKick-BallFriction/60, v.Y, 1e-5, "nudged away from the living one")
	assert.InDelta(t, 0, v.X, 1e-6)
	q := generic.NewFilter2[components.Ghost, Position]().Query(still.w.Arche())
	for q.Next() {
		g, p := q.Get()
		want := Position{X: 1, Y: 1 - reach/2}
		if g.ID == 2 {
			want.Y = 1 + reach/2
		}
		assert.Equal(t, want, *p, "the players stay where they are")
	}
}

// Friction stops the ball exactly, after about v²/2f of travel.
func TestBallStopsByFriction(t *testing.T) {
	bw := newBallWorld(Position{X: -2, Y: 2}, Velocity{X: 6})
	bw.ticks(60 * 3)
	assert.Equal(t, Velocity{}, *bw.vel.Get(bw.ball))
	assert.InDelta(t, -2+6*6/(2*BallFriction), bw.pos.Get(bw.ball).X, 0.1)
	at := *bw.pos.Get(bw.ball)
	bw.ticks(10)
	assert.Equal(t, at, *bw.pos.Get(bw.ball), "at rest it stays")
}

// The ball bounces off the arena's edge and the pillars, keeping
// BallBounce of its speed into them.
func TestBallBouncesOffTheEdgeAndThePillars(t *testing.T) {
	edge := newBallWorld(Position{X: HalfSize - BallRadius - 0.01, Y: -2}, Velocity{X: 6})
	edge.ticks(1)
	v := *edge.vel.Get(edge.ball)
	assert.InDelta(t, -(6-BallFriction/60)*BallBounce, v.X, 1e-5)
	assert.Equal(t, HalfSize-BallRadius, edge.pos.Get(edge.ball).X)

	pillar := newBallWorld(Position{X: 4.25 - BallRadius - 0.01, Y: 0}, Velocity{X: 6})
	pillar.ticks(1)
	v = *pillar.vel.Get(pillar.ball)
	assert.InDelta(t, -(6-BallFriction/60)*BallBounce, v.X, 1e-5)
	assert.InDelta(t, 4.25-BallRadius, pillar.pos.Get(pillar.ball).X, 1e-5)
}

// ballMatch plays d at 150 ms and 5 % loss with client 1 dribbling: it
// runs at the ball as its client draws it for 3 s, stopping when it is
// there, then for 1 s toward the corner furthest from it (6 units, past
// BallFar), and over again;
// client 2 runs in circles, a player who may touch the ball too but
// shoots no one. Every client runs the
// determinism check.
func ballMatch(t *testing.T, d time.Duration) (*Match, *Report) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT, cfg.Loss = 2, d, 150*time.Millisecond, 5
	var m *Match
	balls := generic.NewFilter1[Position]().With(generic.T[Ball]())
	me := generic.NewFilter1[Position]().With(generic.T2[Health, components.Predicted]()...)
	where := func(w *gw.World, f *generic.Filter1[Position]) (Position, bool) {
		q := f.Query(w.Arche())
		if !q.Next() {
			return Position{}, false
		}
		p := *q.Get()
		q.Close()
		return p, true
	}
	cfg.Client = func(i int, spec *harness.ClientSpec) {
		spec.Options.SyncTest = 4
		if i != 0 {
			spec.Options.Input = circling(&m, d)
			return
		}
		spec.Options.Input = systems.InputFunc(func(w *gw.World, tick gw.Tick) Command {
			now := m.Harness.Time.Now()
			b, okb := where(w, balls)
			p, okp := where(w, me)
			if now >= d || !okb || !okp {
				return Command{}
			}
			to := b // the ball, then the corner furthest from it (the diagonals miss the pillars)
			away := now%(4*time.Second) >= 3*time.Second
			if away {
				to = Position{X: -8 * sign(b.X), Y: -8 * sign(b.Y)}
			}
			dx, dy := to.X-p.X, to.Y-p.Y
			l := float32(math.Hypot(float64(dx), float64(dy)))
			if l < 1.2 { // at the ball: the stop overruns it, a touch
				return Command{}
			}
			return Command{MoveX: dx / l, MoveY: dy / l}
		})
	}
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	return m, m.Run(nil)
}

// The ball at the link: the dribbler's client predicts it while
// near and interpolates it when far, switching each time, the ball moves
// on the server (pushed), no switch fails, the determinism check of
// every client finds nothing across the switches, and the match
// converges: the dribbler's client, predicting the ball at the end or
// not, holds every predicted ghost where the server has it.
func TestBallSwitchesNearThePlayerAndConverges(t *testing.T) {
	m, r := ballMatch(t, 30*time.Second)
	b := r.Clients[0].Ball
	t.Logf("ball switches %+v, mispredictions %v", b, r.Clients[0].MispredictionsBy)
	assert.GreaterOrEqual(t, b.SwitchedToPredicted, uint64(5), "near it every 4 s")
	assert.GreaterOrEqual(t, b.SwitchedToInterpolated, uint64(5))
	assert.LessOrEqual(t, b.SwitchedToPredicted-b.SwitchedToInterpolated, uint64(1), "on and off in turn")
	for i, ps := range m.Players {
		assert.NoErrorf(t, ps.Ball.Err, "client %d", i+1)
	}
	var ball Position
	q := generic.NewFilter1[Position]().With(generic.T[Ball]()).Query(m.Harness.Server.World().Arche())
	for q.Next() {
		ball = *q.Get()
	}
	assert.NotEqual(t, Position{}, ball, "pushed from the centre")
	for i, c := range m.Harness.Clients {
		st := c.Stats()
		assert.NoErrorf(t, st.FirstDesync, "client %d", i+1)
		assert.Positive(t, st.SyncTestChecks)
	}
	assert.True(t, r.Converged, "%s %s", r.Clients[0].Divergence, r.Clients[1].Divergence)
}

// circling runs a player in a circle of about 9 units until d of m's
// match.
func circling(m **Match, d time.Duration) *systems.InputSource {
	return systems.InputFunc(func(_ *gw.World, tick gw.Tick) Command {
		if (*m).Harness.Time.Now() >= d {
			return Command{}
		}
		a := float64(tick) / 90
		return Command{MoveX: float32(math.Cos(a)), MoveY: float32(math.Sin(a))}
	})
}

// sign is 1 for x >= 0, else -1.
func sign(x float32) float32 {
	if x < 0 {
		return -1
	}
	return 1
}
