package game

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/replay"
	"github.com/ghostwire/ghostwire/transport"
)

// spectatedArena plays cfg's arena match (its bots, its links) with
// spectators seated on a replay.Stand delay behind (none: no stand), for
// cfg.Duration, then total; it returns the harness and the stand.
func spectatedArena(t *testing.T, cfg Config, spectators int, delay, total time.Duration) (*harness.Harness, *replay.Stand) {
	t.Helper()
	m, err := newMatch(cfg)
	require.NoError(t, err)
	conf, err := cfg.Recording()
	require.NoError(t, err)
	game := m.game()
	live := replay.NewLive()
	rec, err := replay.NewRecorder(live, game, replay.RecorderOptions{Config: conf})
	require.NoError(t, err)
	opts := harness.Options{Seed: cfg.Seed, Game: game, Server: m.serverOptions(), SetupServer: m.setupServer}
	opts.Server.Recorder = rec
	opts.Server.Spectator = func(c transport.Conn) bool {
		id, _ := harness.Identity(c)
		return strings.HasPrefix(id, "spectator")
	}
	var st *replay.Stand
	if spectators > 0 {
		var last *Match
		st, err = replay.NewStand(rec, live, ReplayBuild(&last), replay.StandOptions{Delay: delay, MaxSpectators: spectators})
		require.NoError(t, err)
		opts.Server.Spectators = st
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	m.Harness, m.clock = h, h.Time
	for i := range cfg.Clients {
		o := systems.ClientOptions{InterpolationDelay: cfg.InterpDelay}
		m.playerOptions(i, &o)
		require.NoError(t, h.AddClient(harness.ClientSpec{Link: cfg.Link(), Identity: fmt.Sprint("player-", i), Options: o}))
	}
	// The spectators come once the match is delay old: their world
	// begins then.
	h.Run(delay + time.Second)
	for i := range spectators {
		require.NoError(t, h.AddClient(harness.ClientSpec{Link: cfg.Link(), Identity: fmt.Sprint("spectator-", i)}))
	}
	h.Run(total - delay - time.Second)
	return h, st
}

// playersAt returns the position of every player ghost in a world.
func playersAt(a *harness.Harness, c *systems.Client) map[components.GhostID]Position {
	w := a.Server.World()
	if c != nil {
		w = c.World()
	}
	out := map[components.GhostID]Position{}
	q := generic.NewFilter2[components.Ghost, Position]().With(generic.T[Health]()).Query(w.Arche())
	for q.Next() {
		g, p := q.Get()
		out[g.ID] = *p
	}
	return out
}

// checkSpectators plays 8 bots at 150 ms and 5 % loss with 32 spectators
// delay behind, and the same match with none: the players' match is the
// same bit for bit; the spectators' world follows the recording delay
// back with every hash equal; once the bots have stood still for longer
// than the delay, every spectator shows every player where the server
// has it.
func checkSpectators(t *testing.T, play, delay time.Duration) {
	cfg := recordedConfig(play)
	cfg.Ball, cfg.Rockets = false, false // nothing moves once the bots stand still
	total := play + delay + 4*time.Second
	h, st := spectatedArena(t, cfg, 32, delay, total)
	alone, _ := spectatedArena(t, cfg, 0, delay, total)

	require.Equal(t, alone.Server.StateHash(), h.Server.StateHash(), "the same match with and without spectators")
	for i := range cfg.Clients {
		a, b := alone.Clients[i].Stats(), h.Clients[i].Stats()
		require.Equal(t, a.SnapshotsReceived, b.SnapshotsReceived, "player %d's snapshots", i)
		require.Equal(t, a.BytesReceived, b.BytesReceived, "player %d's bytes", i)
	}
	require.Equal(t, cfg.Clients, h.Server.Stats().Connections)
	sst := st.Stats()
	require.NoError(t, sst.Err)
	require.Equal(t, 32, sst.Watching)
	rate := cfg.TickRate
	behind := int(h.Server.World().Tick().Sub(sst.Tick))
	require.GreaterOrEqual(t, behind, int(delay.Seconds())*rate)
	require.LessOrEqual(t, behind, int(delay.Seconds()+1)*rate)
	want := playersAt(h, nil)
	require.Len(t, want, cfg.Clients)
	for _, c := range h.Clients[cfg.Clients:] {
		_, owns := c.Player()
		require.False(t, owns)
		require.Equal(t, want, playersAt(h, c), "a spectator shows every player where the server has it")
	}
}

func TestSpectatorsWatchTheArenaADelayBack(t *testing.T) {
	checkSpectators(t, 3*time.Second, 3*time.Second)
}

// The tournament's 30 s delay. Long tier.
func TestSpectatorsWatchTheArenaThirtySecondsBack(t *testing.T) {
	skipUnlessLong(t)
	checkSpectators(t, 20*time.Second, 30*time.Second)
}
