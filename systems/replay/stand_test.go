package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// spectated plays the test game with players bots for play (then they
// stand still) and, when spectators > 0, that many spectators seated on a
// Stand delay behind; it returns the harness, the stand (nil without
// spectators) and the recorder.
func spectated(t testing.TB, players, spectators int, delay, play, total time.Duration) (*harness.Harness, *Stand) {
	t.Helper()
	return spectatedMax(t, players, spectators, spectators, delay, play, total)
}

// spectatedMax is spectated with a Stand of max seats (when spectators >
// 0).
func spectatedMax(t testing.TB, players, spectators, max int, delay, play, total time.Duration) (*harness.Harness, *Stand) {
	t.Helper()
	ho, st := spectatedOptions(t, players, spectators, max, delay, play, spectators > 0)
	if st != nil {
		ho.Server.Spectators = st
	}
	h := runSpectated(t, ho, spectators, delay, total)
	return h, st
}

// runSpectated starts the harness of ho, runs it for delay and a second,
// adds the spectators (their seats wait for the match to be delay old),
// and runs on to total.
func runSpectated(t testing.TB, ho harness.Options, spectators int, delay, total time.Duration) *harness.Harness {
	t.Helper()
	h, err := harness.New(ho)
	require.NoError(t, err)
	h.Run(delay + time.Second)
	link := testgame.Link(100*time.Millisecond, 10*time.Millisecond, 0.02)
	for i := range spectators {
		require.NoError(t, h.AddClient(harness.ClientSpec{Link: link, Identity: fmt.Sprint("spectator-", i)}))
	}
	h.Run(total - delay - time.Second)
	return h
}

// spectatedOptions returns the harness options of spectated, and its
// Stand (when stand is set), which the caller installs.
func spectatedOptions(t testing.TB, players, spectators, max int, delay, play time.Duration, stand bool) (harness.Options, *Stand) {
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
	if stand {
		st, err = NewStand(rec, live, build, StandOptions{Delay: delay, MaxSpectators: max})
		require.NoError(t, err)
	}
	link := testgame.Link(100*time.Millisecond, 10*time.Millisecond, 0.02)
	stop := gw.Tick(play.Seconds() * testgame.TickRate)
	for i := range players {
		b := testgame.NewBot(uint64(i+1), stop)
		ho.Clients = append(ho.Clients, harness.ClientSpec{Link: link, Identity: fmt.Sprint("player-", i),
			Options: systems.ClientOptions{Input: systems.InputFunc(b.Input)}})
	}
	return ho, st
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

// MaxSpectators bites: the spectator past it is refused as full, counted
// by the live server and the stand; a spectator's message never reaches
// the world (its world is the recording's).
func TestSpectatorsAreCapped(t *testing.T) {
	h, st := spectatedMax(t, 2, 3, 2, 2*time.Second, time.Second, 4*time.Second)
	ss := h.Server.Stats()
	require.EqualValues(t, 2, ss.Spectators)
	require.EqualValues(t, 1, ss.SpectatorsRefused)
	sst := st.Stats()
	require.EqualValues(t, 2, sst.Seated)
	require.EqualValues(t, 1, sst.Refused)
	require.Equal(t, 2, sst.Watching)
	refused := 0
	for _, c := range h.Clients[2:] {
		var ce *systems.ConnError
		if errors.As(c.Err(), &ce) {
			require.Equal(t, netsync.RejectFull, ce.Reason)
			refused++
		}
	}
	require.Equal(t, 1, refused)
	require.NoError(t, sst.Err)

	for _, c := range h.Clients[2:] {
		if c.Err() == nil {
			require.NoError(t, systems.SendToServer(c.World(), 0, &testgame.Honk{Pulls: 1}))
		}
	}
	h.Run(time.Second)
	require.EqualValues(t, 2, st.Server().Stats().Messages.Refused.Unknown, "both seated spectators' honks refused")
	require.NoError(t, st.Stats().Err, "the spectators' world still follows the recording")
}

func TestStandOptionsAreChecked(t *testing.T) {
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	live := NewLive()
	rec, err := NewRecorder(live, s.Game(), RecorderOptions{})
	require.NoError(t, err)
	_, err = NewStand(rec, live, build, StandOptions{Delay: time.Second})
	require.ErrorContains(t, err, "delay 1s outside 2s..1h")
	_, err = NewStand(rec, live, build, StandOptions{MaxSpectators: 5000})
	require.ErrorContains(t, err, "max spectators 5000 outside 1..4096")
	_, err = NewStand(rec, nil, build, StandOptions{})
	require.Error(t, err)
}

// A spectator who comes before the match is Delay old is refused (there
// is nothing to show yet); one who comes after is seated.
func TestSpectatorsWaitForTheDelay(t *testing.T) {
	ho, st := spectatedOptions(t, 1, 0, 4, 2*time.Second, time.Hour, true)
	ho.Server.Spectators = st
	h, err := harness.New(ho)
	require.NoError(t, err)
	h.Run(500 * time.Millisecond)
	require.NoError(t, h.AddClient(harness.ClientSpec{Identity: "spectator-early"}))
	h.Run(time.Second)
	require.EqualValues(t, 1, h.Server.Stats().SpectatorsRefused)
	var ce *systems.ConnError
	require.ErrorAs(t, h.Clients[1].Err(), &ce)
	require.Equal(t, netsync.RejectFull, ce.Reason)
	h.Run(2 * time.Second)
	require.NoError(t, h.AddClient(harness.ClientSpec{Identity: "spectator-later"}))
	h.Run(2 * time.Second)
	require.EqualValues(t, 1, h.Server.Stats().Spectators)
	require.NoError(t, st.Stats().Err)
	require.Len(t, bodies(h.Clients[2].World()), 1, "the later spectator sees the player")

	h.Server.Close()
	h.Run(time.Second)
	require.ErrorAs(t, h.Clients[2].Err(), &ce)
	require.Equal(t, netsync.RejectClosed, ce.Reason, "the spectator is told the server closed")
	require.Zero(t, st.Stats().Watching)
}
