package game

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/replay"
)

// recordMatch plays cfg recorded and returns its report and the file.
func recordMatch(t *testing.T, cfg Config) (*Report, []byte) {
	t.Helper()
	var buf bytes.Buffer
	cfg.Record = &buf
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	r := m.Run(nil)
	require.NoError(t, m.Recorder.Close())
	return r, buf.Bytes()
}

// checkReplay replays file and checks it reproduces report's match.
func checkReplay(t *testing.T, r *Report, file []byte) *ReplayReport {
	t.Helper()
	f, err := replay.Open(bytes.NewReader(file))
	require.NoError(t, err)
	rr, err := Replay(f)
	require.NoError(t, err)
	require.Empty(t, rr.Mismatch)
	require.Equal(t, r.Server.Ticks, rr.Server.Ticks)
	require.EqualValues(t, r.Server.Ticks, rr.Checked, "a hash every tick")
	require.Equal(t, r.Server.Shots, rr.Server.Shots)
	require.Equal(t, r.Server.Rockets, rr.Server.Rockets)
	require.Equal(t, r.Server.Kills, rr.Server.Kills)
	require.Equal(t, r.Config, rr.Config)
	require.Positive(t, r.Server.Shots.Fired)
	return rr
}

// recordedConfig is the match of the replay tests: 8 bots at 150 ms and
// 5 % loss, with chat so that messages are recorded too.
func recordedConfig(d time.Duration) Config {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT, cfg.Loss, cfg.Chat = 8, d, 150*time.Millisecond, 5, true
	return cfg
}

// A recorded arena match replays with every hash equal and the same
// outcome: the default tier's short match.
func TestRecordedMatchReplays(t *testing.T) {
	r, file := recordMatch(t, recordedConfig(5*time.Second))
	rr := checkReplay(t, r, file)
	t.Logf("%d bytes for %d ticks, %.0f ticks/s replayed", len(file), rr.Server.Ticks, rr.TicksPerSecond)
}

// The long tier's 5-minute match.
func TestRecordedFiveMinuteMatchReplays(t *testing.T) {
	skipUnlessLong(t)
	r, file := recordMatch(t, recordedConfig(5*time.Minute))
	rr := checkReplay(t, r, file)
	t.Logf("%d bytes for %d ticks, %.0f ticks/s replayed", len(file), rr.Server.Ticks, rr.TicksPerSecond)
}
