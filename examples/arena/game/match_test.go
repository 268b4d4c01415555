package game

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

func run(t *testing.T, cfg Config) (*Match, *Report) {
	t.Helper()
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	return m, m.Run(nil)
}

func TestOneClientCleanLinkNeverMispredicts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT, cfg.Jitter, cfg.Loss = 1, 60*time.Second, 100*time.Millisecond, 0, 0
	_, r := run(t, cfg)
	c := r.Clients[0]
	assert.Zero(t, c.Mispredictions)
	assert.Zero(t, c.Rollbacks)
	assert.Zero(t, c.ReplayedTicks)
	assert.True(t, r.Converged)
	assert.Zero(t, c.InputDelayTicks)
	assert.Greater(t, c.MovingInputs, uint64(1000), "the bot must actually play")
	assert.Equal(t, c.MovingInputs, c.Footsteps)
	assert.Zero(t, r.Server.InputsLate)
	assert.InDelta(t, 100, c.RTTms, 1)
}

func TestOneClientBadLinkMispredictsAtMostOnce(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT, cfg.Jitter, cfg.Loss = 1, 60*time.Second, 150*time.Millisecond, 20*time.Millisecond, 5
	_, r := run(t, cfg)
	c := r.Clients[0]
	assert.LessOrEqual(t, c.Mispredictions, uint64(1))
	assert.True(t, r.Converged)
	assert.Equal(t, c.MovingInputs, c.Footsteps)
	assert.Greater(t, r.Server.InputsApplied, uint64(3500))
}

func TestEightCollidingClientsAreCorrectedAndConverge(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 8, 30*time.Second
	cfg.Ball, cfg.Rockets = false, false // the players alone: one own ghost per client
	m, r := run(t, cfg)
	require.True(t, r.Converged, "every client's own ghost must equal the server's at the end")
	assert.Equal(t, r.ComparedTick, uint32(m.Harness.Server.World().Tick()), "compared at the server's last tick")
	assert.GreaterOrEqual(t, r.SettledS, cfg.Settle().Seconds())
	assert.True(t, m.serverQuiet(), "nothing in flight on the server when compared")
	var mispredicted uint64
	for i, c := range r.Clients {
		mispredicted += c.Mispredictions
		assert.Equalf(t, c.MovingInputs, c.Footsteps, "client %d: a footstep per moving input, none replayed", c.ID)
		assert.NoError(t, m.Harness.CheckOwnState(i))
		var by uint64
		for comp, n := range c.MispredictionsBy {
			assert.Containsf(t, []string{"game.Position", "game.Velocity", "game.Facing", "game.Health"}, comp, "client %d", c.ID)
			by += n
		}
		assert.Equalf(t, c.Mispredictions, by, "client %d: one own ghost, one component named per misprediction", c.ID)
		assert.Equal(t, 0.0, c.FinalError)
		assert.GreaterOrEqual(t, c.Rollbacks, c.Mispredictions)
		if c.Mispredictions > 0 {
			assert.Greater(t, c.ReplayedTicks, uint64(0))
		}
	}
	assert.Greater(t, mispredicted, uint64(0), "players collide, so predictions must sometimes be wrong")
}

// TestSpeedHackGainsNothing: a client whose clock runs twice as fast sends
// inputs for ticks far ahead; the server applies one input per tick, so it
// moves exactly as far as an honest client holding the same key.
func TestSpeedHackGainsNothing(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Jitter, cfg.Loss = 2, 3*time.Second, 0, 0
	holdUp := systems.InputFunc(func(*gw.World, gw.Tick) Command { return Command{MoveY: 1} })
	cfg.Client = func(i int, spec *harness.ClientSpec) {
		spec.Options.Input = holdUp
		if i == 1 {
			spec.Options.FixedScale = 2
		}
	}
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	ys := map[components.ConnID][]float32{}
	pos := generic.NewFilter2[components.Ghost, Position]().With(generic.T[Health]())
	m.Harness.Server.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
		q := pos.Query(w.Arche())
		for q.Next() {
			g, p := q.Get()
			ys[g.Owner] = append(ys[g.Owner], p.Y)
		}
	}))
	m.Run(nil)
	moved := func(y []float32, ticks int) float32 {
		for i := 1; i < len(y); i++ {
			if y[i] != y[0] {
				require.Greater(t, len(y), i+ticks)
				return y[i-1+ticks] - y[i-1]
			}
		}
		require.Fail(t, "never moved")

		return 0
	}
	honest, cheat := moved(ys[1], 40), moved(ys[2], 40)
	assert.Greater(t, honest, float32(2))
	assert.Equal(t, honest, cheat, "40 ticks of holding the key move both players exactly as far")
	st, ok := m.Harness.Server.ConnStats(2)
	require.True(t, ok)
	assert.Greater(t, st.Inputs.TooFarAhead, uint64(0), "the cheater's inputs far ahead were refused")
	assert.LessOrEqual(t, st.Inputs.Applied+st.Inputs.Missing, m.Harness.Server.Stats().Ticks, "never more than one input per tick")
}

// TestHostileInputsCannotExceedTheSpeedCap plays a client whose input
// function returns moves 10 times too long, NaN and infinite axes: the
// library quantizes and validates them as the server will (a hand-made
// client sending raw codes is the framework's own test,
// internal/testgame's TestHandMadeClientIsClampedAndRefused), and the
// player never moves faster than MaxSpeed.
func TestHostileInputsCannotExceedTheSpeedCap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Jitter, cfg.Loss = 1, 3*time.Second, 0, 0
	crazy := systems.InputFunc(func(_ *gw.World, tick gw.Tick) Command {
		if tick%2 == 0 {
			return Command{MoveX: 10, MoveY: 10}
		}
		return Command{MoveX: float32(math.NaN()), MoveY: float32(math.Inf(1))}
	})
	cfg.Client = func(_ int, spec *harness.ClientSpec) { spec.Options.Input = crazy }
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	var maxSpeed float32
	vel := generic.NewFilter1[Velocity]()
	m.Harness.Server.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
		q := vel.Query(w.Arche())
		for q.Next() {
			v := q.Get()
			maxSpeed = max(maxSpeed, length(v.X, v.Y))
		}
	}))
	m.Run(nil)
	assert.Greater(t, maxSpeed, MaxSpeed*0.9, "the hostile player did run")
	assert.LessOrEqual(t, maxSpeed, MaxSpeed*1.0001, "nobody outruns the cap")
	assert.Zero(t, m.Harness.Server.Stats().InputsRejected, "what the library sends always decodes")
}

func TestSameSeedSameReport(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Dup, cfg.Reorder = 4, 10*time.Second, 2, 2
	js := func() string {
		_, r := run(t, cfg)
		r.Wall = WallReport{}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		return string(b)
	}
	first := js()
	assert.Equal(t, first, js())
	cfg.Seed++
	assert.NotEqual(t, first, js(), "another seed plays another match")
}

// Ten minutes of a 4-bot match: the heap at the end is within 2 MiB of
// the heap at minute 1, the server's input buffers and the clients'
// histories hold no more than their capacity. Long tier (3.3 s); the
// default tier plays three minutes.
func TestBuffersStayBoundedOverTenMinutes(t *testing.T) {
	skipUnlessLong(t)
	buffersStayBounded(t, 10*time.Minute)
}

func TestBuffersStayBoundedOverThreeMinutes(t *testing.T) {
	buffersStayBounded(t, 3*time.Minute)
}

func buffersStayBounded(t *testing.T, d time.Duration) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 4, d
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var atMinute uint64
	m.Run(func(s Second) {
		if s.At == time.Minute {
			atMinute = heap()
		}
	})
	end := heap()
	assert.Less(t, end, atMinute+2<<20, "heap grew from %d to %d bytes between minute 1 and %v", atMinute, end, d)
	st := m.Harness.Server.Stats()
	assert.LessOrEqual(t, st.MaxBuffered, 64, "server input buffers hold at most their capacity")
	for _, c := range m.Harness.Clients {
		held := 0
		h := c.World().History()
		newest, _ := h.Newest()
		for tick := newest - 1000; tick <= newest; tick++ {
			if h.Has(tick) {
				held++
			}
		}
		assert.Equal(t, h.Capacity(), held)
	}
}

func TestConfigValidationNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Clients = 0 }, "-clients 0: allowed range is 1..64"},
		{func(c *Config) { c.Duration = time.Millisecond }, "-duration 1ms"},
		{func(c *Config) { c.TickRate = 5 }, "-tick-rate 5"},
		{func(c *Config) { c.RTT = -time.Second }, "-rtt -1s"},
		{func(c *Config) { c.Jitter = time.Second }, "-jitter 1s"},
		{func(c *Config) { c.Loss = 75 }, "-loss 75"},
		{func(c *Config) { c.Dup = math.NaN() }, "-dup NaN"},
		{func(c *Config) { c.Reorder = -1 }, "-reorder -1"},
		{func(c *Config) { c.Rollback = RollbackPolicy(9) }, "-rollback"},
		{func(c *Config) { c.Crates = -1 }, "-crates -1: allowed range is 0..10000"},
		{func(c *Config) { c.Crates = MaxCrates + 1 }, "-crates 10001"},
	} {
		cfg := DefaultConfig()
		tc.mod(&cfg)
		err := cfg.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		_, err = NewMatch(cfg)
		assert.Error(t, err)
	}
	require.NoError(t, DefaultConfig().Validate())
}

func TestSteadyStateTicksDoNotAllocate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 8, time.Hour
	// A rocket is an entity made and removed, and a switch of the ball
	// hands it between the prediction and the interpolation: both
	// allocate, as a player joining does.
	cfg.Ball, cfg.Rockets = false, false
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	m.Harness.Run(20 * time.Second) // every ring filled, every archetype seen
	tick := time.Second / time.Duration(cfg.TickRate)
	allocs := testing.AllocsPerRun(300, func() { m.Harness.Run(tick) })
	assert.Zero(t, allocs, "a tick of server, 8 clients, rollbacks and links allocates")
}

// The report names what differs at the compared tick: here the server's
// player moved by hand after the match, which no client predicted.
func TestReportNamesTheDivergence(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 2, 3*time.Second
	m, r := run(t, cfg)
	require.True(t, r.Converged)
	var id components.GhostID
	q := generic.NewFilter1[components.Ghost]().With(generic.T[components.InputHeader]()).Query(m.Harness.Clients[1].World().Arche())
	for q.Next() {
		id = q.Get().ID
	}
	e, ok := m.Harness.Server.Ghosts().Entity(id)
	require.True(t, ok)
	pos := generic.NewMap[Position](m.Harness.Server.World().Arche())
	pos.Get(e).X += 3
	r = m.report()
	assert.False(t, r.Converged)
	assert.True(t, r.Clients[0].Converged)
	assert.False(t, r.Clients[1].Converged)
	assert.Contains(t, r.Clients[1].Divergence, "Position.X")
	assert.Contains(t, r.Clients[1].Divergence, fmt.Sprintf("tick %d", r.ComparedTick))
}
