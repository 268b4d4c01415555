package replay

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// A Player follows a Live recording while the match runs, 3 seconds
// behind it: it is never more than a second (a chunk) further back, every
// recorded hash is checked on the way, and once the recorder is closed it
// reaches the match's last tick. The same bytes, written to a file, open
// as the same recording.
func TestLiveRecordingIsFollowedWithADelay(t *testing.T) {
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	live := NewLive()
	var file bytes.Buffer
	rec, err := NewRecorder(io.MultiWriter(live, &file), s.Game(), RecorderOptions{})
	require.NoError(t, err)
	var players []testgame.Player
	for i := range 3 {
		b := testgame.NewBot(uint64(i+1), gw.Tick(1<<30))
		players = append(players, testgame.Player{Link: testgame.Link(80*time.Millisecond, 5*time.Millisecond, 0.02),
			Input: systems.InputFunc(b.Input)})
	}
	ho := s.Options(3, players...)
	ho.Server.Recorder = rec
	h, err := harness.New(ho)
	require.NoError(t, err)

	const delay = 3 * testgame.TickRate
	var p *Player
	for h.Time.Now() < 8*time.Second {
		h.Run(10 * time.Millisecond)
		if p == nil && live.Started() {
			p, err = NewPlayer(live.File(), build)
			require.NoError(t, err)
		}
		now := h.Server.World().Tick()
		if p == nil || now < delay {
			continue
		}
		require.NoError(t, p.RunTo(now-delay))
		behind := int(now.Sub(p.Tick()))
		require.GreaterOrEqual(t, behind, delay)
		require.LessOrEqual(t, behind, delay+testgame.TickRate+1, "at most a chunk further back")
	}
	require.Greater(t, p.Checked(), uint64(4*testgame.TickRate))
	require.NoError(t, rec.Close())
	end := h.Server.World().Tick()
	require.NoError(t, p.RunTo(end))
	require.Equal(t, end, p.Tick())
	require.Equal(t, h.Server.StateHash(), p.Server().StateHash())

	f, err := Open(&file)
	require.NoError(t, err)
	require.Equal(t, live.File().Size, f.Size)
	require.Len(t, f.ticks, len(live.File().ticks))
}

// Bytes arriving a few at a time make the same recording.
func TestLiveTakesBytesInAnyPieces(t *testing.T) {
	r := record(t, 2, 2*time.Second, RecorderOptions{})
	live := NewLive()
	for b := r.file; len(b) > 0; {
		n := min(len(b), 7)
		_, err := live.Write(b[:n])
		require.NoError(t, err)
		b = b[n:]
	}
	whole, err := Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	require.Equal(t, whole.ticks, live.File().ticks)
	require.Equal(t, whole.keyframes, live.File().keyframes)
	require.Equal(t, whole.Header, live.File().Header)

	bad := NewLive()
	_, err = bad.Write([]byte("GWRX"))
	require.ErrorContains(t, err, "not a ghostwire replay")
	_, err = bad.Write(r.file)
	require.Error(t, err, "the error sticks")
}
