package serverbench_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/harness/serverbench"
	"github.com/ghostwire/ghostwire/transport"
)

// recordedMatch runs a 3-bot match of the test game for 8 s over lossy,
// jittery, duplicating and reordering links, recording the clients'
// traffic. It returns the harness, the recorder and a build function for
// a twin of its server.
func recordedMatch(t *testing.T) (*harness.Harness, *serverbench.Recorder, func(*gw.VirtualTime, transport.Listener) (*systems.Server, error)) {
	t.Helper()
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	link := testgame.Link(120*time.Millisecond, 15*time.Millisecond, 0.05)
	link.Up.Duplicate, link.Up.Reorder = 0.03, 0.05
	rec := &serverbench.Recorder{}
	var players []testgame.Player
	for i := range 3 {
		players = append(players, testgame.Player{Link: link, Input: testgame.NewBot(uint64(i+1), 6*testgame.TickRate).Source(),
			Wrap: rec.Wrap(link)})
	}
	opts := s.Options(7, players...)
	h, err := harness.New(opts)
	require.NoError(t, err)
	rec.Now = h.Time.Now
	h.Run(8 * time.Second)
	return h, rec, serverbench.Build(opts, opts.SetupServer)
}

// The twin, stepped as the harness stepped, runs the same match: the same
// ticks, inputs, snapshots and bytes, to the last counter.
func TestTwinRunsTheSameMatch(t *testing.T) {
	h, rec, build := recordedMatch(t)
	require.Positive(t, rec.Sends())
	tw, err := serverbench.NewTwin(7, rec, build)
	require.NoError(t, err)
	from := h.Time.Now() * 3 / 4 // past the first 256 ticks: each connection's ring of sent snapshots has its capacity
	before, startAllocs := serverbench.Run(time.Millisecond, 0, from, tw)
	m, allocs := serverbench.Run(time.Millisecond, from, h.Time.Now(), tw)
	assert.Positive(t, m[0].Wall)
	want, got := h.Server.Stats(), tw.Server.Stats()
	assert.Equal(t, h.Server.World().Tick(), tw.Server.World().Tick())
	assert.Equal(t, int(want.Ticks), before[0].Ticks+m[0].Ticks)
	assert.InDelta(t, 3*m[0].Ticks, before[0].Ticks, 3, "a quarter of the run measured")
	assert.Positive(t, startAllocs, "the start of the match: buffers grow")
	assert.Less(t, allocs, startAllocs/10, "the steady state allocates next to nothing (a slice may still grow to a new high)")
	assert.Positive(t, want.InputsApplied)
	assert.Equal(t, want, got, "every counter of the twin's server")
}

// A twin on another seed draws other losses and delays: it does not run
// the same match, and the counters show it.
func TestTwinOnAnotherSeedDiverges(t *testing.T) {
	h, rec, build := recordedMatch(t)
	tw, err := serverbench.NewTwin(8, rec, build)
	require.NoError(t, err)
	serverbench.Run(time.Millisecond, 0, h.Time.Now(), tw)
	assert.NotEqual(t, h.Server.Stats(), tw.Server.Stats())
}

// Twins run together are each the same match as run alone.
func TestTwinsRunTogether(t *testing.T) {
	h, rec, build := recordedMatch(t)
	a, err := serverbench.NewTwin(7, rec, build)
	require.NoError(t, err)
	b, err := serverbench.NewTwin(7, rec, build)
	require.NoError(t, err)
	ms, _ := serverbench.Run(time.Millisecond, 0, h.Time.Now(), a, b)
	require.Len(t, ms, 2)
	for _, tw := range []*serverbench.Twin{a, b} {
		assert.Equal(t, h.Server.Stats(), tw.Server.Stats())
	}
	assert.Equal(t, ms[0].Ticks, ms[1].Ticks)
	assert.Equal(t, int(h.Server.Stats().Ticks), ms[0].Ticks)
}
