package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// spectated plays the test game with players bots for play (then they
// stand still) and, when spectators > 0, that many spectators seated on a
// Stand delay behind; it returns the harness, the stand (nil without
// spectators) and the recorder.
func spectated(t *testing.T, players, spectators int, delay, play, total time.Duration) (*harness.Harness, *Stand) {
	t.Helper()
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	live := NewLive()
	rec, err := NewRecorder(live, s.Game(), RecorderOptions{})
	require.NoError(t, err)
	ho := harness.Options{Seed: 5, Game: s.Game(), Server: systems.ServerOptions{Recorder: rec,
		Spectator: func(c transport.Conn) bool {
			id, _ := harness.Identity(c)
			return strings.HasPrefix(id, "spectator")
		}}}
	var st *Stand
	if spectators > 0 {
		st, err = NewStand(rec, live, build, StandOptions{Delay: delay, MaxSpectators: spectators})
		require.NoError(t, err)
		ho.Server.Spectators = st
	}
	link := testgame.Link(100*time.Millisecond, 10*time.Millisecond, 0.02)
	stop := gw.Tick(play.Seconds() * testgame.TickRate)
	for i := range players {
		b := testgame.NewBot(uint64(i+1), stop)
		ho.Clients = append(ho.Clients, harness.ClientSpec{Link: link, Identity: fmt.Sprint("player-", i),
			Options: systems.ClientOptions{Input: systems.InputFunc(b.Input)}})
	}
	for i := range spectators {
		ho.Clients = append(ho.Clients, harness.ClientSpec{Link: link, Identity: fmt.Sprint("spectator-", i)})
	}
	h, err := harness.New(ho)
	require.NoError(t, err)
	h.Run(total)
	return h, st
}

// bodies returns the Body of every car ghost a world holds, by ghost ID.
func bodies(w *gw.World) map[components.GhostID]testgame.Body {
	m := map[components.GhostID]testgame.Body{}
	q := generic.NewFilter2[components.Ghost, testgame.Body]().Query(w.Arche())
	for q.Next() {
		g, b := q.Get()
		m[g.ID] = *b
	}
	return m
}

// 8 players and 32 spectators 3 s behind: the spectators own nothing and
// are not the live server's connections; the players' match is the one
// they play with no spectator, bit for bit (their links, snapshots and
// the world); the spectators' world follows the recording 3 s back with
// every hash equal, and once the players stand still each spectator
// shows every car where the live server has it.
func TestSpectatorsWatchTheRecordingADelayBack(t *testing.T) {
	const players, spectators = 8, 32
	delay := 3 * time.Second
	h, st := spectated(t, players, spectators, delay, 4*time.Second, 12*time.Second)
	alone, _ := spectated(t, players, 0, delay, 4*time.Second, 12*time.Second)

	ss := h.Server.Stats()
	require.Equal(t, players, ss.Connections, "spectators are not the live server's connections")
	require.EqualValues(t, spectators, ss.Spectators)
	require.Zero(t, ss.SpectatorsRefused)
	require.Equal(t, alone.Server.World().Tick(), h.Server.World().Tick())
	require.Equal(t, alone.Server.StateHash(), h.Server.StateHash(), "the same match with and without spectators")
	for i := range players {
		a, b := alone.Clients[i].Stats(), h.Clients[i].Stats()
		require.Equal(t, a.SnapshotsReceived, b.SnapshotsReceived, "player %d's snapshots", i)
		require.Equal(t, a.BytesReceived, b.BytesReceived, "player %d's bytes", i)
	}

	sst := st.Stats()
	require.NoError(t, sst.Err)
	require.Equal(t, spectators, sst.Watching)
	behind := int(h.Server.World().Tick().Sub(sst.Tick))
	require.GreaterOrEqual(t, behind, 3*testgame.TickRate)
	require.LessOrEqual(t, behind, 4*testgame.TickRate)
	want := bodies(h.Server.World())
	require.Len(t, want, players)
	for i := players; i < players+spectators; i++ {
		c := h.Clients[i]
		_, owns := c.Player()
		require.False(t, owns, "spectator %d owns nothing", i)
		cs := c.Stats()
		require.Positive(t, cs.SnapshotsReceived)
		require.False(t, cs.NewestSnapshot.After(sst.Tick), "spectator %d is sent the delayed world only", i)
		require.Equal(t, want, bodies(c.World()), "spectator %d shows every car where it stands", i)
	}
}
