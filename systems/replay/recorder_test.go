package replay

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
)

// ticksAllocs runs a playback of the test game with four players, recorded
// to io.Discard when record is set, and returns its heap allocations per
// tick in steady state (after ten seconds of ticks).
func ticksAllocs(t *testing.T, record bool) float64 {
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	g := s.Game()
	var opts systems.ServerOptions
	if record {
		rec, err := NewRecorder(io.Discard, g, RecorderOptions{KeyframeEvery: 60})
		require.NoError(t, err)
		opts.Recorder = rec
	}
	pb, err := systems.NewPlayback(g, opts)
	require.NoError(t, err)
	for c := range components.ConnID(4) {
		require.NoError(t, pb.Connect(c+1, components.GhostID(c+1)))
	}
	in := make([]byte, s.Schema.InputSize())
	step := func() {
		tick := pb.Server().World().Tick() + 1
		for c := range components.ConnID(4) {
			in[0] = byte(tick) * byte(c)
			h := components.InputHeader{Tick: tick, HasView: true, ViewTick: tick - 6, ViewFraction: 0.5}
			require.NoError(t, pb.Input(c+1, &h, in))
		}
		pb.Tick()
	}
	for range 600 {
		step()
	}
	return testing.AllocsPerRun(300, step)
}

// The recorder allocates nothing per tick in steady state: the same
// ticks allocate as much with it as without.
func TestRecorderAllocatesNothingPerTick(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's instrumentation allocates")
	}
	plain, recorded := ticksAllocs(t, false), ticksAllocs(t, true)
	require.Equal(t, plain, recorded, "allocations per tick: %v without the recorder, %v with", plain, recorded)
}
