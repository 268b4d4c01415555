package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems/replay"
	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// newKey writes a fresh key file into dir and returns its path and key.
func newKey(t *testing.T, dir string) (string, [udp.KeySize]byte) {
	t.Helper()
	path := filepath.Join(dir, "arena.key")
	require.NoError(t, writeKeyFile(path))
	key, err := readKeyFile(path)
	require.NoError(t, err)
	return path, key
}

// newSecret writes a token endpoint secret file and returns its path and
// text.
func newSecret(t *testing.T, dir string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, "tokens.secret")
	const secret = "a secret the matchmaker and the server share"
	require.NoError(t, os.WriteFile(path, []byte(secret+"\n"), 0o600))
	return path, secret
}

func TestKeyFileHoldsExactly32RawBytes(t *testing.T) {
	dir := t.TempDir()
	path, key := newKey(t, dir)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(udp.KeySize), fi.Size())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.NotEqual(t, [udp.KeySize]byte{}, key)

	err = writeKeyFile(path)
	require.Error(t, err, "an existing key is never overwritten")
	assert.Contains(t, err.Error(), "already exists")
	again, err := readKeyFile(path)
	require.NoError(t, err)
	assert.Equal(t, key, again)

	for _, tc := range []struct {
		content []byte
		want    string
	}{
		{nil, "holds 0 bytes; it must hold exactly 32 raw bytes"},
		{bytes.Repeat([]byte{7}, 31), "holds 31 bytes"},
		{bytes.Repeat([]byte{7}, 33), "holds more than 32 bytes"},
		{append(bytes.Repeat([]byte{7}, 32), '\n'), "holds more than 32 bytes"},
		{make([]byte, 32), "only zero bytes"},
	} {
		bad := filepath.Join(dir, "bad.key")
		require.NoError(t, os.WriteFile(bad, tc.content, 0o600))
		_, err := readKeyFile(bad)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), bad, "the error names the file")
	}
	_, err = readKeyFile(filepath.Join(dir, "missing.key"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestIsNetworkRun(t *testing.T) {
	for _, args := range [][]string{
		{"-serve", "127.0.0.1:40000"}, {"--serve=127.0.0.1:40000"}, {"-quiet", "-connect", "x"}, {"-genkey", "k"},
	} {
		assert.True(t, isNetworkRun(args), args)
	}
	for _, args := range [][]string{
		nil, {"-clients", "8"}, {"-report", "serve.json"}, {"---serve", "x"}, {"--", "-serve"},
	} {
		assert.False(t, isNetworkRun(args), args)
	}
}

func TestNetworkFlagsAreRefusedByName(t *testing.T) {
	dir := t.TempDir()
	keyPath, _ := newKey(t, dir)
	secretPath, _ := newSecret(t, dir)
	short := filepath.Join(dir, "short.key")
	require.NoError(t, os.WriteFile(short, []byte("too short"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-serve", "127.0.0.1:0"}, "-serve needs -key FILE"},
		{[]string{"-serve", "127.0.0.1:0", "-key", short}, "holds 9 bytes"},
		{[]string{"-serve", "127.0.0.1:0", "-connect", "127.0.0.1:1", "-key", keyPath}, "exactly one of -serve ADDR, -connect ADDR and -genkey FILE"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-max-clients", "0"}, "-max-clients 0: allowed range is 1..64"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-duration", "-1s"}, "-duration -1s"},
		{[]string{"-serve", "0.0.0.0:0", "-key", keyPath}, "give -public IP:PORT"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-tick-rate", "5"}, "-tick-rate 5"},
		{[]string{"-connect", "127.0.0.1:40000"}, "-connect needs -key FILE"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-tokens", "http://127.0.0.1:1/token"}, "not both"},
		{[]string{"-connect", "0.0.0.0:40000", "-key", keyPath}, "want a specific IP and a port"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-public", "127.0.0.1:40000"}, "-public is a -serve flag"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-clients", "65"}, "-clients 65: allowed range is 1..64"},
		{[]string{"-connect", "127.0.0.1:40000", "-tokens", "ftp://host/x", "-token-secret", secretPath}, "scheme must be http or https"},
		{[]string{"-connect", "127.0.0.1:40000", "-tokens", "http://127.0.0.1:1/token"}, "-tokens URL needs -token-secret FILE"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-tokens", "127.0.0.1:0"}, "-tokens needs -token-secret FILE"},
		{[]string{"-genkey", filepath.Join(dir, "arena.key")}, "already exists"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-rooms", "0"}, "-rooms 0: allowed range is 1..16"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-rooms", "17"}, "-rooms 17: allowed range is 1..16"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-grace", "500ms"}, "-grace 500ms: allowed range is 1s..1h"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-grace", "2h"}, "-grace 2h0m0s: allowed range is 1s..1h"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-room", "arena-2"}, "-room is a -connect flag"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-agones", "-public", "127.0.0.1:7777"}, "-public with -agones"},
		{[]string{"-serve", "127.0.0.1:0", "-key", keyPath, "-metrics", "nonsense"}, "-metrics nonsense"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-rooms", "2"}, "-rooms is a -serve flag"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-agones"}, "-agones is a -serve flag"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-metrics", "127.0.0.1:0"}, "-metrics is a -serve flag"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-grace", "5s"}, "-grace is a -serve flag"},
		{[]string{"-connect", "127.0.0.1:40000", "-key", keyPath, "-room", ""}, "room of 0 bytes outside 1..64"},
	} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), tc.args, &out, &errOut)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
	}
}

func TestTokenURL(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:40001":                  "http://127.0.0.1:40001/token",
		"http://127.0.0.1:40001":           "http://127.0.0.1:40001/token",
		"https://mm.example/":              "https://mm.example/token",
		"http://mm.example/arena/tokens?a": "http://mm.example/arena/tokens?a",
		"localhost:40001":                  "http://localhost:40001/token",
	} {
		got, err := tokenURL(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestTokenEndpointServesTokensForItsServer(t *testing.T) {
	_, key := newKey(t, t.TempDir())
	_, secret := newSecret(t, t.TempDir())
	server := netip.MustParseAddrPort("127.0.0.1:40000")
	svc, err := tokens.New(tokens.Options{Key: key, ProtocolID: arenaProtocolID, Secret: secret, PublicAddress: server,
		Rooms: func(room string) bool { return room == roomName(1) }})
	require.NoError(t, err)
	ts, err := serveTokens("127.0.0.1:0", svc, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	web := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	defer web.CloseIdleConnections()
	ctx := context.Background()

	a, err := fetchToken(ctx, web, ts.URL(), secret, roomName(1), "p1", server)
	require.NoError(t, err)
	b, err := fetchToken(ctx, web, ts.URL(), secret, roomName(1), "p2", server)
	require.NoError(t, err)
	assert.Len(t, a, udp.ConnectTokenSize)
	assert.NotEqual(t, a, b, "every request gets a token of its own")
	tok, err := udp.ParseConnectToken(a)
	require.NoError(t, err)
	assert.Equal(t, arenaProtocolID, tok.ProtocolID)
	assert.Equal(t, []netip.AddrPort{server}, tok.ServerAddresses)
	assert.Equal(t, uint64(2), ts.svc.Stats().Issued)

	_, err = fetchToken(ctx, web, ts.URL(), "a wrong secret of some length", roomName(1), "p3", server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.Equal(t, uint64(1), ts.svc.Stats().Refused["unauthorized"], "anyone else is refused, counted")
	res, err := web.Get(ts.URL())
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, "a GET, as a cross-site link would send, gets nothing")
	_, err = fetchToken(ctx, web, ts.URL(), secret, roomName(1), "p4", netip.MustParseAddrPort("127.0.0.1:40002"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not for -connect 127.0.0.1:40002")
	_, err = fetchToken(ctx, web, ts.URL()+"x", secret, roomName(1), "p5", server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
	_, err = fetchToken(ctx, web, ts.URL(), secret, "arena-9", "p7", server)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown_room", "a room the server does not run")
	ts.close()
	_, err = fetchToken(ctx, web, ts.URL(), secret, roomName(1), "p6", server)
	assert.Error(t, err, "a closed endpoint serves nothing")
}

func TestDroppedFoldsEveryRefusalIntoOneReason(t *testing.T) {
	s := udp.Stats{Malformed: 1, AuthFailed: 2, BadToken: 4, ExpiredToken: 8, WrongProtocol: 16, WrongAddress: 32,
		TokenReused: 64, ClientInUse: 128, Replayed: 256, UnknownClient: 512, ServerFull: 1024, RateLimited: 2048,
		Timeout: 4096, PendingFull: 8192, PendingAddressFull: 16384, PendingExpired: 32768,
		TokenHistoryFull: 1 << 16, QueueFull: 1 << 17}
	assert.Equal(t, droppedReport{Malformed: 3, BadToken: 4 + 16 + 32 + 64 + 128, ExpiredToken: 8, Replayed: 256,
		UnknownClient: 512, ServerFull: 1024 + 8192, RateLimited: 2048 + 16384, Timeout: 4096 + 32768}, droppedFrom(s))
	n := netcodeFrom(s)
	assert.Equal(t, uint64(1<<17), n.QueueFull, "the full counters are kept one to one")
	assert.Equal(t, uint64(2), n.AuthFailed)
}

// quietGame is the arena's configuration for tests of the network modes.
func quietGame(clients int, play time.Duration) game.Config {
	cfg := game.DefaultConfig()
	cfg.RTT, cfg.Jitter, cfg.Loss = 0, 0, 0
	cfg.Clients, cfg.Duration = clients, play
	return cfg
}

// The real endpoints (systems.Server and systems.Client) over transport/udp
// on 127.0.0.1, in real time: the -serve process's fleet member (one room
// on its own goroutine) and eight bot clients driven from the test's
// goroutine. Every client's prediction of its own player matches the
// server's snapshots once the bots stand still (convergedSnapshots in a
// row), every connection ends cleanly, and the report counts them. A 3 s
// match; the long tier plays 10 s
// (TestServerAndEightClientsOverUDPConvergeAfterTenSeconds).
func TestServerAndEightClientsOverUDPConverge(t *testing.T) {
	eightClientsOverUDP(t, 3*time.Second)
}

// The same for a 10 s match. Long tier (11 s of real time).
func TestServerAndEightClientsOverUDPConvergeAfterTenSeconds(t *testing.T) {
	skipUnlessLong(t)
	eightClientsOverUDP(t, 10*time.Second)
}

// servedArena runs a -serve process's server in the background until the
// test ends it (stop), and returns its report then.
type servedArena struct {
	*arenaServer
	stop context.CancelFunc
	done chan *serverReport
}

// serveArena starts the server of o.
func serveArena(t *testing.T, o serverOptions) *servedArena {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	srv, err := newArenaServer(ctx, o)
	require.NoError(t, err)
	s := &servedArena{arenaServer: srv, stop: stop, done: make(chan *serverReport, 1)}
	go func() {
		r, err := srv.run(ctx, nil)
		assert.NoError(t, err)
		s.done <- r
	}()
	t.Cleanup(stop)
	return s
}

// end stops the server (a SIGTERM) and returns its report.
func (s *servedArena) end(t *testing.T) *serverReport {
	t.Helper()
	s.stop()
	select {
	case r := <-s.done:
		return r
	case <-time.After(60 * time.Second):
		require.FailNow(t, "the server did not end")
		return nil
	}
}

// eightClientsOverUDP plays a match of the given length in real time.
func eightClientsOverUDP(t *testing.T, play time.Duration) {
	defer goleak.VerifyNone(t)
	_, key := newKey(t, t.TempDir())
	discard := slog.New(slog.DiscardHandler)
	recording := filepath.Join(t.TempDir(), "room.gwr")
	srv := serveArena(t, serverOptions{Game: quietGame(8, time.Second), Bind: "127.0.0.1:0", Key: key, Rooms: 1, Logger: discard,
		Record: recording})
	cl, err := newArenaClients(context.Background(), clientsOptions{Game: quietGame(8, play),
		Server: srv.listener.PublicAddress(), Key: key, Logger: discard})
	require.NoError(t, err)

	step := time.NewTicker(4 * time.Millisecond)
	defer step.Stop()
	frames := 0
	// until updates the clients once per step until cond holds, failing
	// past the deadline (generous: a loaded 2-core machine may starve
	// the loop for seconds).
	until := func(what string, limit time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "no %s within %v", what, limit)
			<-step.C
			frames++
			cl.update(frames%4 == 0)
		}
	}
	until("connection of all 8 clients", 60*time.Second, func() bool { return cl.connectedAll })
	until("end of the match", 60*time.Second, cl.playedOut)
	for _, b := range cl.bots {
		require.Empty(t, b.end, "client %d's connection ended during the match", b.index+1)
	}
	until("convergence of every client to the server", 30*time.Second, func() bool { return cl.report().Converged })

	r := cl.finishRun("the match is over")
	assert.True(t, r.Clean)
	require.Len(t, r.Clients, 8)
	// play at 60 Hz is 60 ticks a second and more; a starved loop drops
	// what exceeds the clock's catch-up cap (499 of 600 seen at load 15
	// on 2 cores), so a third of it says "played the match" robustly.
	minTicks := uint64(play.Seconds() * 60 / 3)
	for _, c := range r.Clients {
		assert.True(t, c.Connected)
		t.Logf("client %d: %d ticks, %d moving inputs", c.ID, c.Ticks, c.MovingInputs)
		assert.Greater(t, c.Ticks, minTicks, "client %d played %v at 60 Hz", c.ID, play)
		assert.Greater(t, c.MovingInputs, uint64(0))
		assert.Equal(t, "left: the match is over", c.End)
	}
	until("the server to see every client leave", 30*time.Second, func() bool {
		rs := srv.fleet.Rooms().Rooms()
		return len(rs) == 1 && rs[0].Clients == 0
	})
	sr := srv.end(t)
	assert.Equal(t, uint64(8), sr.Connections.Accepted)
	assert.Equal(t, 8, sr.Connections.Peak)
	assert.Equal(t, uint64(8), sr.Connections.Left)
	assert.Zero(t, sr.Connections.OpenAtEnd)
	assert.Greater(t, sr.Server.InputsApplied, 8*minTicks)
	assert.Greater(t, sr.Server.Shots.Fired, uint64(0))
	assert.Equal(t, droppedReport{UnknownClient: sr.Dropped.UnknownClient}, sr.Dropped,
		"honest clients are never refused (the redundant disconnect packets after the first reach no connection)")
	require.Len(t, sr.Rooms, 1)
	room := sr.Rooms[0]
	assert.Equal(t, roomName(1), room.Name)
	assert.Equal(t, 8, room.Peak)
	assert.Equal(t, sr.Server.InputsApplied, room.Server.InputsApplied, "one room: the server's counts are its own")
	assert.Equal(t, drainReport{Reason: "signal", Seconds: sr.Drain.Seconds, GraceS: 30, Finished: 1}, sr.Drain,
		"nobody played any more: the room finished at once")

	// The room recorded its match as it ran (-record), and the file
	// replays with no network: every hash equal, the same shots.
	require.NotNil(t, room.Recording)
	assert.Empty(t, room.RecordingError)
	assert.Equal(t, recording, room.Recording.File)
	fh, err := os.Open(recording)
	require.NoError(t, err)
	defer fh.Close()
	f, err := replay.Open(fh)
	require.NoError(t, err)
	assert.EqualValues(t, room.Recording.Bytes, f.Size)
	rr, err := game.Replay(f)
	require.NoError(t, err)
	assert.Empty(t, rr.Mismatch)
	assert.Equal(t, room.Ticks, rr.Server.Ticks)
	assert.Equal(t, room.Server.Shots, rr.Server.Shots)
	assert.Equal(t, room.Server.Rockets, rr.Server.Rockets)
}

// Tokens the server must refuse reach no connection and are counted in
// the report under their reason.
func TestServerReportCountsRefusedTokens(t *testing.T) {
	_, key := newKey(t, t.TempDir())
	srv := serveArena(t, serverOptions{Game: quietGame(8, time.Second), Bind: "127.0.0.1:0", Key: key, Rooms: 1,
		Logger: slog.New(slog.DiscardHandler)})
	addr := srv.listener.PublicAddress()
	var otherKey [udp.KeySize]byte
	copy(otherKey[:], "another key, another game's key!")
	past := time.Now().Add(-time.Minute)
	params := []udp.TokenParams{
		{PrivateKey: otherKey, ProtocolID: arenaProtocolID, ClientID: 1, ServerAddresses: []netip.AddrPort{addr},
			Create: time.Now(), Expire: time.Now().Add(time.Minute), TimeoutSeconds: 5},
		{PrivateKey: key, ProtocolID: arenaProtocolID, ClientID: 2, ServerAddresses: []netip.AddrPort{addr},
			Create: past, Expire: past.Add(30 * time.Second), TimeoutSeconds: 5},
	}
	var dialed []*udp.Client
	for _, p := range params {
		tok, _, err := udp.MakeConnectToken(p)
		require.NoError(t, err)
		c, err := udp.Dial(tok, udp.ClientOptions{})
		require.NoError(t, err)
		dialed = append(dialed, c)
	}
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for st := srv.listener.Stats(); st.BadToken == 0 || st.ExpiredToken == 0; st = srv.listener.Stats() {
		require.True(t, time.Now().Before(deadline), "the refusals were not counted: %+v", st)
		<-poll.C
	}
	for _, c := range dialed {
		require.NoError(t, c.Close())
	}
	r := srv.end(t)
	assert.Positive(t, r.Dropped.BadToken)
	assert.Positive(t, r.Dropped.ExpiredToken)
	assert.Zero(t, r.Connections.Accepted)
}

// When the game's goodbye is lost, netcode's redundant disconnect packets
// still end the clients cleanly.
func TestClientsSeeANetcodeDisconnectAsClean(t *testing.T) {
	_, key := newKey(t, t.TempDir())
	discard := slog.New(slog.DiscardHandler)
	srv := serveArena(t, serverOptions{Game: quietGame(2, time.Second), Bind: "127.0.0.1:0", Key: key, Rooms: 1, Logger: discard})
	cl, err := newArenaClients(context.Background(), clientsOptions{Game: quietGame(2, time.Minute),
		Server: srv.listener.PublicAddress(), Key: key, Logger: discard})
	require.NoError(t, err)
	step := time.NewTicker(4 * time.Millisecond)
	defer step.Stop()
	deadline := time.Now().Add(60 * time.Second)
	for !cl.connectedAll {
		require.True(t, time.Now().Before(deadline), "the clients did not connect")
		<-step.C
		cl.update(true)
	}
	require.NoError(t, srv.listener.Close()) // netcode only: no game goodbye
	for !cl.update(true) {
		require.True(t, time.Now().Before(deadline), "the clients did not see the disconnect")
		<-step.C
	}
	r := cl.finishRun("")
	assert.True(t, r.Clean)
	for _, c := range r.Clients {
		assert.Equal(t, "the server closed: netcode disconnect", c.End)
	}
	srv.end(t)
}

// -genkey warns when the key lands inside a git work tree, where `git add .`
// would publish it, and stays quiet elsewhere.
func TestGenkeyWarnsInsideAGitWorkTree(t *testing.T) {
	outside := t.TempDir()
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-genkey", filepath.Join(outside, "a.key")}, &out, &errOut))
	assert.NotContains(t, out.String(), "warning")

	repo := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(repo, "keys"), 0o755))
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"-genkey", filepath.Join(repo, "keys", "b.key")}, &out, &errOut))
	assert.Contains(t, out.String(), "warning: "+filepath.Join(repo, "keys", "b.key")+" is inside the git work tree "+repo)
}
