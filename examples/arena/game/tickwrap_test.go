package game

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// wrapMatch plays a 20 s match of four bots on a lossy link, the server
// starting at tick start, and returns its report and the hits scored in
// the first 10 s.
func wrapMatch(t *testing.T, start gw.Tick) (*Report, uint64) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Duration, cfg.Jitter, cfg.Loss = 20*time.Second, 10*time.Millisecond, 2
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	m.Harness.Server.World().SetTick(start)
	var early uint64
	r := m.Run(func(s Second) {
		if s.At == 10*time.Second {
			early = m.Shots.Stats.Hits
		}
	})
	r.Wall = WallReport{}
	return r, early
}

// The arena plays the same match whether its server starts at tick 0 or
// 600 ticks (10 s) before 2³¹ or 2³²: the same inputs applied, the same
// mispredictions, and lag-compensated shots hit as often before and after
// the wrap, none refused as outside the rewind window. (Bots whose weapon
// was "ready at tick 0" held fire for the 2³¹ ticks before the wrap.)
func TestArenaPlaysTheSameMatchAcrossTheTickWrap(t *testing.T) {
	far, farEarly := wrapMatch(t, 0)
	require.Greater(t, farEarly, uint64(3), "the bots hit each other in the first 10 s")
	require.Greater(t, far.Server.Shots.Hits-farEarly, uint64(3), "and in the next 10 s")
	t.Logf("from tick 0: hits %d + %d, inputs missing %d, mispredictions %d",
		farEarly, far.Server.Shots.Hits-farEarly, far.Server.InputsMissing, mispredictions(far))
	for _, start := range []gw.Tick{1<<31 - 600, 1<<32 - 600} {
		r, early := wrapMatch(t, start)
		t.Logf("from tick %d: hits %d + %d, inputs missing %d, mispredictions %d",
			start, early, r.Server.Shots.Hits-early, r.Server.InputsMissing, mispredictions(r))
		assert.Zero(t, r.Server.Shots.Verdicts["outside_window"], "start %d", start)
		assert.Zero(t, r.Server.InputsRejected, "start %d", start)
		assert.Zero(t, r.Server.BadPackets, "start %d", start)
		assert.Equal(t, farEarly, early, "start %d: hits before the wrap", start)
		// The same match: the server's counters and verdicts exactly, the
		// clients' counters exactly and their float measurements up to
		// rounding (the render tick is a larger number there).
		assert.Equal(t, far.Server, r.Server, "start %d", start)
		require.Len(t, r.Clients, len(far.Clients))
		for i, c := range r.Clients {
			f := far.Clients[i]
			assert.Equal(t, f.Mispredictions, c.Mispredictions, "start %d, client %d", start, c.ID)
			assert.Equal(t, f.Rollbacks, c.Rollbacks, "start %d, client %d", start, c.ID)
			assert.Equal(t, f.ShotsFired, c.ShotsFired, "start %d, client %d", start, c.ID)
			assert.Equal(t, f.Teleports, c.Teleports, "start %d, client %d", start, c.ID)
			assert.True(t, c.Converged, "start %d, client %d", start, c.ID)
			assert.InDelta(t, f.MaxRemoteStep, c.MaxRemoteStep, 1e-4, "start %d, client %d: no jump at the wrap", start, c.ID)
			assert.InDelta(t, f.ExtrapolatedTicks, c.ExtrapolatedTicks, 1e-3, "start %d, client %d", start, c.ID)
			assert.InDelta(t, f.InterpDelayMS, c.InterpDelayMS, 1e-3, "start %d, client %d", start, c.ID)
		}
	}
}

func mispredictions(r *Report) uint64 {
	var n uint64
	for _, c := range r.Clients {
		n += c.Mispredictions
	}
	return n
}
