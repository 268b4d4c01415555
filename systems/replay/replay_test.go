package replay_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// recorded is a match of the test game recorded to a file, with the
// server's state hash after every tick.
type recorded struct {
	file   []byte
	hashes map[gw.Tick]uint64
	last   gw.Tick
}

// record plays a match of the test game with n bots for d, over links of
// 100 ms and 5 % loss, recorded.
func record(t testing.TB, n int, d time.Duration, opts replay.RecorderOptions) *recorded {
	t.Helper()
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	var buf bytes.Buffer
	rec, err := replay.NewRecorder(&buf, s.Game(), opts)
	require.NoError(t, err)
	var players []testgame.Player
	for i := range n {
		b := testgame.NewBot(uint64(i+1), gw.Tick(d.Seconds()*testgame.TickRate))
		players = append(players, testgame.Player{Link: testgame.Link(100*time.Millisecond, 10*time.Millisecond, 0.05),
			Input: systems.InputFunc(b.Input)})
	}
	ho := s.Options(7, players...)
	ho.Server.Recorder = rec
	h, err := harness.New(ho)
	require.NoError(t, err)
	r := &recorded{hashes: map[gw.Tick]uint64{}}
	prev := h.Server.World().Tick()
	for h.Time.Now() < d {
		h.Run(time.Millisecond)
		if tk := h.Server.World().Tick(); tk != prev {
			r.hashes[tk], prev = h.Server.StateHash(), tk
		}
	}
	r.last = prev
	require.NoError(t, rec.Close())
	r.file = buf.Bytes()
	return r
}

// build is the test game's Build.
func build(*replay.Header) (*replay.Setup, error) {
	s, err := testgame.NewSchema()
	if err != nil {
		return nil, err
	}
	return &replay.Setup{Game: s.Game()}, nil
}

func TestReplayReproducesEveryHash(t *testing.T) {
	r := record(t, 4, 5*time.Second, replay.RecorderOptions{})
	f, err := replay.Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	require.False(t, f.Truncated)
	p, err := replay.NewPlayer(f, build)
	require.NoError(t, err)
	for {
		ran, err := p.Step()
		require.NoError(t, err)
		if !ran {
			break
		}
		require.Equal(t, r.hashes[p.Tick()], p.Server().StateHash(), "tick %d", p.Tick())
	}
	require.Equal(t, r.last, p.Tick())
	t.Logf("%d bytes, %d ticks, %d hashes checked", len(r.file), p.Tick(), p.Checked())
	require.EqualValues(t, len(r.hashes), p.Checked())
}

func TestFileOfAnotherSchemaIsRefused(t *testing.T) {
	r := record(t, 1, time.Second, replay.RecorderOptions{})
	f, err := replay.Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	f.Header.SchemaHash ^= 1
	_, err = replay.NewPlayer(f, build)
	var se *replay.SchemaError
	require.ErrorAs(t, err, &se)
	require.Contains(t, err.Error(), "recorded with schema")
	_ = errors.New
}
