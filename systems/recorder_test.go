package systems_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// A match with a held place, a place taken back, a live connection
// replaced and a place given up at the end of its grace is recorded with
// every one of them (Connected, Reconnected, Disconnected, the neutral
// inputs of a held place), and its replay through a Playback reproduces
// every tick's state.
func TestRecorderSeesEveryConnectionEvent(t *testing.T) {
	var file bytes.Buffer
	g := newTestGame()
	rec, err := replay.NewRecorder(&file, g.game(), replay.RecorderOptions{})
	require.NoError(t, err)
	hashes := map[gw.Tick]uint64{}
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: time.Second, Timeout: 500 * time.Millisecond,
		Recorder: hashing{rec, hashes}}, "alice", "bob", "carol")
	h := r.h
	run := h.Run
	r.connected(t, 0)
	r.connected(t, 1)
	r.connected(t, 2)
	run(time.Second)
	r.cut(0) // alice is held, then takes her place back
	run(900 * time.Millisecond)
	require.Equal(t, 1, h.Server.Stats().Held)
	r.add(t, "alice")
	r.connected(t, 3)
	run(500 * time.Millisecond)
	r.add(t, "bob") // bob's new connection replaces his live one
	r.connected(t, 4)
	run(500 * time.Millisecond)
	r.cut(2) // carol is held past her grace: given up
	run(2500 * time.Millisecond)
	st := h.Server.Stats()
	require.Equal(t, uint64(2), st.Reconnects)
	require.Equal(t, uint64(1), st.ReconnectsExpired)
	require.NoError(t, rec.Close())

	f, err := replay.Open(&file)
	require.NoError(t, err)
	p, err := replay.NewPlayer(f, func(*replay.Header) (*replay.Setup, error) { return &replay.Setup{Game: newTestGame().game()}, nil })
	require.NoError(t, err)
	for {
		ran, err := p.Step()
		require.NoError(t, err)
		if !ran {
			break
		}
		require.Equal(t, hashes[p.Tick()], p.Server().StateHash(), "tick %d", p.Tick())
	}
	require.Len(t, hashes, int(p.Tick()))
	require.Equal(t, h.Server.World().Tick(), p.Tick())
	require.Equal(t, 2, players(p.Server().World()), "alice and bob, carol gone")
}

// hashing is a recorder that also keeps the state hash after each tick.
type hashing struct {
	*replay.Recorder
	hashes map[gw.Tick]uint64
}

func (r hashing) Ticked(s *systems.Server) {
	r.hashes[s.World().Tick()] = s.StateHash()
	r.Recorder.Ticked(s)
}
