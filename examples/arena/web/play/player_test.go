package play_test

import (
	"math"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
)

// arena is a game server on virtual time with the arena's movement, and
// the players connected to it over links of half an RTT each way.
type arena struct {
	clock   *gw.VirtualTime
	net     *transport.MemoryNetwork
	server  *systems.Server
	players []*play.Player
}

func newArena(t testing.TB) *arena {
	t.Helper()
	a := &arena{clock: &gw.VirtualTime{}}
	a.net = transport.NewMemoryNetwork(a.clock, 1)
	ln, err := a.net.Listen("arena")
	require.NoError(t, err)
	schema, err := game.NewSchema()
	require.NoError(t, err)
	a.server, err = systems.NewServer(a.clock, ln, game.NewGame(schema, play.TickRate, schema.SpawnPlayer, nil), systems.ServerOptions{})
	require.NoError(t, err)
	return a
}

// join connects a player over a link of rtt.
func (a *arena) join(t testing.TB, rtt time.Duration, opts play.Options) *play.Player {
	t.Helper()
	l := transport.LinkConfig{Latency: rtt / 2}
	conn, err := a.net.Dial("arena", transport.Conditions{Up: l, Down: l})
	require.NoError(t, err)
	p, err := play.New(a.clock, conn, opts)
	require.NoError(t, err)
	a.players = append(a.players, p)
	return p
}

// run advances d of virtual time in 4 ms frames.
func (a *arena) run(d time.Duration) {
	for end := a.clock.Now() + d; a.clock.Now() < end; {
		a.clock.Advance(4 * time.Millisecond)
		a.server.Update()
		for _, p := range a.players {
			p.Step()
		}
	}
}

func TestPlayerPredictsAheadOfTheServer(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 200*time.Millisecond, play.Options{})
	assert.Equal(t, "connecting", p.View().State)
	a.run(time.Second)
	v := p.View()
	require.Equal(t, "connected", v.State)
	require.True(t, v.HasOwn)
	require.True(t, v.HasConfirmed)
	assert.Equal(t, v.Own, v.Confirmed, "standing still, prediction and server agree")

	// Run left, past the centre (a pillar stands to the right).
	p.SetControls(play.Controls{MoveX: -1, AimX: -10})
	a.run(time.Second)
	v = p.View()
	// At full speed (6 units/s), 200 ms ahead of the newest snapshot's
	// tick and then some for the snapshot's way back.
	assert.Greater(t, v.Confirmed.X-v.Own.X, float32(1), "the own player runs ahead of the confirmed state")
	assert.InDelta(t, math.Pi, math.Abs(float64(v.Own.Yaw)), 1e-3, "aiming left, at the pointed spot")

	p.SetControls(play.Controls{AimX: -10})
	a.run(time.Second)
	v = p.View()
	assert.InDelta(t, v.Confirmed.X, v.Own.X, 1e-3, "stopped, the prediction converges to the server")
	tl := v.Timeline
	assert.Greater(t, tl.RTTms, 190.0)
	assert.Greater(t, tl.Ahead, 6.0, "a 100 ms one-way trip is 6 ticks")
	assert.Positive(t, tl.DownBps)
	assert.Positive(t, tl.UpBps)
	assert.Greater(t, tl.Tick, tl.Confirmed)
	assert.InDelta(t, 30, len(tl.Errors), 1, "a sample per 100 ms")
	assert.Empty(t, v.Others)
}

func TestPlayerSeesOthersInterpolated(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 50*time.Millisecond, play.Options{InterpDelay: 100 * time.Millisecond})
	other := a.join(t, 50*time.Millisecond, play.Options{})
	a.run(time.Second)
	v := p.View()
	require.Len(t, v.Others, 1)
	assert.Equal(t, other.View().Own.Ghost, v.Others[0].Ghost)
	assert.Equal(t, game.SpawnPoint(2).X, v.Others[0].X)
	assert.Equal(t, 100.0, v.Timeline.InterpDelayMS, "the fixed delay")
	assert.Greater(t, other.View().Timeline.InterpDelayMS, 0.0, "the adaptive delay")
}

func TestPlayerDiagonalStaysOnTheUnitCircle(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 0, play.Options{})
	p.SetControls(play.Controls{MoveX: -1, MoveY: 1})
	a.run(time.Second)
	st := a.server.Stats()
	assert.Greater(t, st.InputsApplied, uint64(50))
	assert.Zero(t, st.InputsClamped, "the diagonal is scaled to length 1, not clamped by the server")
	v := p.View()
	start := game.SpawnPoint(1)
	assert.Less(t, v.Own.X, start.X)
	assert.Greater(t, v.Own.Y, start.Y)
}

// TestPlayerNamesMispredictions shoves the player on the server alone, a
// change the client cannot predict, and reads the diagnosis.
func TestPlayerNamesMispredictions(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	shoved := false
	players := generic.NewFilter1[game.Position]()
	a.server.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
		if shoved || a.clock.Now() < time.Second {
			return
		}
		q := players.Query(w.Arche())
		for q.Next() {
			q.Get().Y += 0.5
			shoved = true
		}
	}))
	a.run(2 * time.Second)
	tl := p.View().Timeline
	assert.True(t, shoved)
	assert.Equal(t, uint64(1), tl.Mispredictions)
	assert.Equal(t, uint64(1), tl.Rollbacks)
	assert.Regexp(t, `^game\.Position\.Y predicted 0, server 0\.5$`, tl.LastMispredicted)
	assert.InDelta(t, 0.5, tl.MaxError, 1e-6)
	assert.Contains(t, tl.Errors, tl.MaxError, "the plot shows it")
}

func TestPlayerFires(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 0, play.Options{})
	a.run(500 * time.Millisecond)
	p.Fire()
	p.Fire() // within one tick: one shot
	a.run(100 * time.Millisecond)
	assert.Equal(t, uint64(1), p.View().Timeline.ShotsFired)
}

// A shot carries its tick (modulo 256) and origin, and every later
// command repeats them: the server judges a shot whose press it applies
// late on the tick it was fired, from where it was fired.
func TestPlayerCommandsCarryTheLatestShot(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 80*time.Millisecond, play.Options{})
	type applied struct {
		tick gw.Tick
		cmd  game.Command
	}
	var seen []applied
	cmds := generic.NewFilter1[game.Command]()
	a.server.Schedule().Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := cmds.Query(w.Arche())
		for q.Next() {
			seen = append(seen, applied{w.Tick(), *q.Get()})
		}
	}))
	a.run(500 * time.Millisecond)
	p.Fire()
	a.run(500 * time.Millisecond)
	fired := -1
	for i, s := range seen {
		if s.cmd.Fire.Pressed() {
			require.Equal(t, -1, fired, "one shot")
			fired = i
		}
	}
	require.GreaterOrEqual(t, fired, 0, "the server applied the shot")
	shot := seen[fired].cmd
	spawn := game.SpawnPoint(1)
	assert.Equal(t, float32(uint32(seen[fired].tick)%256), shot.Shot, "the shot's tick, applied on time")
	assert.InDelta(t, spawn.X, shot.OriginX, 0.01, "fired from where the player stands")
	assert.InDelta(t, spawn.Y, shot.OriginY, 0.01)
	for _, s := range seen[fired+1:] {
		assert.Equalf(t, [3]float32{shot.Shot, shot.OriginX, shot.OriginY}, [3]float32{s.cmd.Shot, s.cmd.OriginX, s.cmd.OriginY}, "tick %d repeats the latest shot", s.tick)
	}
}

func TestPlayerBotInput(t *testing.T) {
	a := newArena(t)
	moves := 0
	p := a.join(t, 0, play.Options{Input: func(*gw.World, gw.Tick) game.Command {
		moves++
		return game.Command{MoveY: -1}
	}})
	a.run(time.Second)
	assert.Greater(t, moves, 30)
	assert.Less(t, p.View().Own.Y, game.SpawnPoint(1).Y)
}

func TestPlayerRefusesBadOptions(t *testing.T) {
	a := newArena(t)
	conn, err := a.net.Dial("arena", transport.Conditions{})
	require.NoError(t, err)
	_, err = play.New(a.clock, conn, play.Options{InterpDelay: 2 * time.Second})
	assert.ErrorContains(t, err, "play: ")
	assert.ErrorContains(t, err, "2s")
}
