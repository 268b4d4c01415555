package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport/websocket"
)

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, b
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, strings.TrimSpace(string(b))
}

func TestServerServesPageAndClient(t *testing.T) {
	_, url := startServer(t, Options{})
	res, page := get(t, url+"/")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(page), `<canvas id="views"`)
	for _, f := range []string{"app.js", "style.css", "wasm_exec.js"} {
		res, b := get(t, url+"/"+f)
		assert.Equal(t, http.StatusOK, res.StatusCode, f)
		assert.NotEmpty(t, b, f)
	}
	_, execJS := get(t, url+"/wasm_exec.js")
	assert.Contains(t, string(execJS), "globalThis.Go", "the Go installation's loader")

	res, wasm := get(t, url+"/client.wasm")
	assert.Equal(t, "application/wasm", res.Header.Get("Content-Type"))
	require.GreaterOrEqual(t, len(wasm), 4)
	assert.Equal(t, "\x00asm", string(wasm[:4]), "a WebAssembly module")

	_, b := get(t, url+"/arena.json")
	var a Arena
	require.NoError(t, json.Unmarshal(b, &a))
	assert.Equal(t, Arena{HalfSize: 10, Radius: 0.5, BallRadius: 0.4, RocketRadius: 0.15, SplashRadius: 2.5, TickRate: 60, Walls: [][4]float32{
		{4.25, -0.75, 5.75, 0.75}, {-5.75, -0.75, -4.25, 0.75}, {-0.75, 4.25, 0.75, 5.75}, {-0.75, -5.75, 0.75, -4.25}}}, a)
}

// The server builds the page's client for GOOS=js GOARCH=wasm with the
// local Go toolchain and serves it. Long tier: the build takes a minute
// with a cold build cache.
func TestServerBuildsAndServesTheClient(t *testing.T) {
	skipUnlessLong(t)
	_, url := startServer(t, Options{})
	res, wasm := get(t, url+"/client.wasm")
	assert.Equal(t, "application/wasm", res.Header.Get("Content-Type"))
	require.Greater(t, len(wasm), 1<<20, "the client, not a stand-in")
	assert.Equal(t, "\x00asm", string(wasm[:4]), "a WebAssembly module")
}

// dialPlayer connects a native client to the page's socket of a session.
func dialPlayer(t *testing.T, url, session string) *play.Player {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()
	conn, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/ws?session="+session, websocket.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	p, err := play.New(gw.NewRealTime(), conn, play.Options{})
	require.NoError(t, err)
	return p
}

// truthOf returns the server's player of ghost, from the newest frame.
func truthOf(s *Server, ghost uint32) (TruthPlayer, Truth, bool) {
	var tr Truth
	if err := json.Unmarshal(*s.truth.Load(), &tr); err != nil {
		panic(err)
	}
	for _, p := range tr.Players {
		if p.Ghost == ghost {
			return p, tr, true
		}
	}
	return TruthPlayer{}, tr, false
}

// TestNativeClientPlays connects the page's client code, natively, over
// WebSocket, and plays 150 ticks (2.5 s of real time, longer on a starved
// machine) against two bots: it connects, predicts, moves on the server
// and fires.
func TestNativeClientPlays(t *testing.T) {
	s, url := startServer(t, Options{Bots: 2, Seed: 3})
	p := dialPlayer(t, url, "native")
	frame := time.NewTicker(8 * time.Millisecond)
	defer frame.Stop()
	step := func() bool {
		<-frame.C
		p.Step()
		return true
	}
	waitFor(t, slow, "the own player arrives", func() bool { return step() && p.View().HasOwn })
	v := p.View()
	assert.Equal(t, "connected", v.State)
	start, _, ok := truthOf(s, v.Own.Ghost)
	require.True(t, ok, "the server has the player")

	// Run right (and a bit up, off the others' spawn circle) and fire
	// now and then for 150 ticks: counted in ticks, not seconds, so that
	// a loaded machine, which drops ticks past the clock's catch-up cap,
	// plays as much.
	p.SetControls(play.Controls{MoveX: 1, MoveY: 0.3, AimX: 10, AimY: 0})
	const played = 150
	ticks := p.Client().Stats().Ticks
	// The bots shoot back, so the player may die and respawn at its spawn
	// point: the farthest it got counts.
	farthest := start.X
	for p.Client().Stats().Ticks-ticks < played {
		step()
		if p.Client().Stats().Ticks%30 == 0 {
			p.Fire()
		}
		if now, _, ok := truthOf(s, v.Own.Ghost); ok {
			farthest = max(farthest, now.X)
		}
		require.NoError(t, p.Client().Err())
	}
	st := p.Client().Stats()
	assert.True(t, p.Client().Connected())
	assert.NoError(t, p.Client().Err())
	// The server sends a snapshot a tick; half of them is robust.
	assert.Greater(t, st.SnapshotsReceived, uint64(played/2))
	assert.True(t, st.HasConfirmed)
	_, tr, ok := truthOf(s, v.Own.Ghost)
	require.True(t, ok)
	assert.Greater(t, farthest-start.X, float32(1), "the server moved the player right")
	assert.Len(t, tr.Players, 3)
	assert.Positive(t, p.View().Timeline.ShotsFired)
	assert.Positive(t, p.View().Timeline.Judged, "the server confirms its verdicts to the page")
	assert.Positive(t, tr.Shots.Fired)
	assert.Positive(t, s.Stats().Sockets)
	tl := p.View().Timeline
	assert.Positive(t, tl.Tick)
	assert.Positive(t, tl.DownBps)
	assert.Positive(t, tl.UpBps)
	assert.GreaterOrEqual(t, len(tl.Errors), 20, "an error sample per 100 ms, over 2.5 s at least")
}

// TestPlayerCloseDropsAtOnce closes a connected page client, as the page
// does when it reconnects with another interpolation delay: the server
// drops the player on its goodbye, not on its timeout.
func TestPlayerCloseDropsAtOnce(t *testing.T) {
	s, url := startServer(t, Options{Bots: 1, Seed: 5})
	p := dialPlayer(t, url, "leaving")
	waitFor(t, slow, "the own player arrives", func() bool { p.Step(); return p.View().HasOwn })
	waitFor(t, slow, "the server counts the bot and the page", func() bool { return s.Stats().Server.Connections == 2 })

	p.Close()
	p.Close()
	assert.Equal(t, "disconnected", p.View().State)
	assert.Contains(t, p.View().Err, "closed")
	waitFor(t, slow, "the server drops the page", func() bool { return s.Stats().Server.Connections == 1 })
	st := s.Stats().Server
	assert.Equal(t, uint64(1), st.Dropped)
	assert.Zero(t, st.TimedOut, "dropped on the goodbye, not the timeout")
}

// TestServerCloseTellsClients ends the web server's game loop: a
// connected page client hears the server close at once instead of timing
// out.
func TestServerCloseTellsClients(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	build, cancelBuild := context.WithTimeout(ctx, slow)
	defer cancelBuild()
	s, err := New(build, Options{Seed: 6})
	require.NoError(t, err)
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	p := dialPlayer(t, hs.URL, "stay")
	waitFor(t, slow, "the own player arrives", func() bool { p.Step(); return p.View().HasOwn })

	cancel()
	require.NoError(t, <-done)
	waitFor(t, slow, "the client hears the server close", func() bool { p.Step(); return !p.Client().Connected() })
	var ce *systems.ConnError
	require.ErrorAs(t, p.Client().Err(), &ce)
	assert.False(t, ce.Local, "told by the server, not timed out: %v", ce)
	assert.False(t, ce.Refused)
	assert.Equal(t, "disconnected", p.View().State)
}

// TestLinkEndpointChangesRTT sets a session's link as the page's slider
// does and waits for the client to measure the round trip.
func TestLinkEndpointChangesRTT(t *testing.T) {
	_, url := startServer(t, Options{Seed: 4})
	p := dialPlayer(t, url, "slider")
	frame := time.NewTicker(8 * time.Millisecond)
	defer frame.Stop()
	step := func() systems.ClientStats {
		<-frame.C
		p.Step()
		return p.Client().Stats()
	}
	// Nothing added yet: loopback's round trip, once the estimate has
	// forgotten a slow start on a loaded machine.
	waitFor(t, slow, "connected with a measured RTT", func() bool {
		st := step()
		return st.HasConfirmed && st.RTT > 0 && st.RTT < 150*time.Millisecond
	})

	code, body := post(t, url+"/link?session=slider", `{"RTTms":200,"JitterMS":0,"LossPct":0,"DupPct":0}`)
	require.Equal(t, http.StatusOK, code, body)
	waitFor(t, slow, "the client measures the added 200 ms", func() bool { return step().RTT > 180*time.Millisecond })
	assert.Less(t, step().RTT, 400*time.Millisecond)
}

func TestLinkEndpointRefusesBadInput(t *testing.T) {
	_, url := startServer(t, Options{})
	for _, c := range []struct{ query, body, want string }{
		{"?session=a", `{"RTTms":5000}`, "link RTTms 5000: allowed range is 0..2000"},
		{"?session=a", `{"Latency":5}`, `link: json: unknown field "Latency"`},
		{"?session=a", `not json`, "link: invalid character 'o' in literal null (expecting 'u')"},
		{"", `{}`, `session "": want 1..64 letters, digits or dashes`},
		{"?session=a%20b", `{}`, `session "a b": want 1..64 letters, digits or dashes`},
	} {
		code, body := post(t, url+"/link"+c.query, c.body)
		assert.Equal(t, http.StatusBadRequest, code, c.body)
		assert.Equal(t, c.want, body)
	}
	code, body := post(t, url+"/link?session=a", `{"RTTms":40,"JitterMS":6,"LossPct":0.2}`)
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"RTTms":40,"JitterMS":6,"LossPct":0.2,"DupPct":0}`, body)

	res, _ := get(t, url+"/ws?session=")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
}

func TestLagCompEndpointSwitchesJudging(t *testing.T) {
	s, url := startServer(t, Options{ServerSettings: true})
	lagComp := func() bool {
		_, tr, _ := truthOf(s, 0)
		return tr.LagComp
	}
	assert.True(t, lagComp(), "on by default")
	code, _ := post(t, url+"/lagcomp", `{"On":false}`)
	assert.Equal(t, http.StatusNoContent, code)
	waitFor(t, slow, "the truth says lag compensation is off", func() bool { return !lagComp() })
	code, _ = post(t, url+"/lagcomp", `{"On":true}`)
	assert.Equal(t, http.StatusNoContent, code)
	waitFor(t, slow, "the truth says lag compensation is on", lagComp)
	code, body := post(t, url+"/lagcomp", `"maybe"`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, `lagcomp: want {"On": true} or {"On": false}`, body)
}

// Without ServerSettings, no page may switch the server's lag
// compensation; the page is told so with its settings.
func TestServerSettingsAreOffByDefault(t *testing.T) {
	s, url := startServer(t, Options{})
	code, body := post(t, url+"/lagcomp", `{"On":false}`)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "-web-settings")
	_, tr, _ := truthOf(s, 0)
	assert.True(t, tr.LagComp, "unchanged")
	res, b := get(t, url+"/settings?session=a")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"LagComp":true,"ServerSettings":false,"Link":{"RTTms":0,"JitterMS":0,"LossPct":0,"DupPct":0}}`, string(b))
	assert.Equal(t, uint64(1), s.Stats().PostsRefused)
}

// A page on another site cannot change a session's link or the server's
// settings: its "simple" cross-site POST (a form's content type) is
// refused, and so is a JSON one its browser marks as cross-site (Origin,
// Sec-Fetch-Site). A body past 1 KB is refused too.
func TestCrossSitePostsAreRefused(t *testing.T) {
	s, url := startServer(t, Options{ServerSettings: true})
	send := func(path, ctype, body string, hdr map[string]string) int {
		req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", ctype)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	link := `{"RTTms":500}`
	assert.Equal(t, http.StatusUnsupportedMediaType, send("/link?session=victim", "text/plain", link, nil), "a simple request")
	assert.Equal(t, http.StatusUnsupportedMediaType, send("/lagcomp", "application/x-www-form-urlencoded", "On=false", nil))
	assert.Equal(t, http.StatusForbidden, send("/link?session=victim", "application/json", link,
		map[string]string{"Origin": "https://evil.example"}))
	assert.Equal(t, http.StatusForbidden, send("/lagcomp", "application/json", `{"On":false}`,
		map[string]string{"Sec-Fetch-Site": "cross-site"}))
	assert.Equal(t, http.StatusOK, send("/link?session=victim", "application/json", link,
		map[string]string{"Origin": url, "Sec-Fetch-Site": "same-origin"}), "the page itself")
	assert.Equal(t, http.StatusBadRequest, send("/link?session=victim", "application/json",
		`{"RTTms":1`+strings.Repeat(" ", 2000)+`}`, nil), "past 1 KB")
	assert.Equal(t, uint64(4), s.Stats().PostsRefused)
	_, tr, _ := truthOf(s, 0)
	assert.True(t, tr.LagComp)
}

// A client that sends its request body slowly is cut off at the read
// timeout: it cannot hold a connection open.
func TestSlowBodyIsCutOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, Options{ReadTimeout: 300 * time.Millisecond}) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	var conn net.Conn
	waitFor(t, slow, "the server listens", func() bool {
		conn, err = net.Dial("tcp", ln.Addr().String())
		return err == nil
	})
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /link?session=s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, _ = io.ReadAll(conn) // the answer, if any, then the close
	took := time.Since(start)
	t.Logf("a body never finished: the connection closed after %v", took)
	assert.Less(t, took, 2*time.Second, "closed at the read timeout, not kept")
}

// A page loads the server's settings: lag compensation as switched, and
// its session's link as set (the defaults for a session never seen).
func TestSettingsEndpointTellsTheServersState(t *testing.T) {
	_, url := startServer(t, Options{ServerSettings: true})
	settings := func(session string) Settings {
		t.Helper()
		res, b := get(t, url+"/settings?session="+session)
		require.Equal(t, http.StatusOK, res.StatusCode, string(b))
		var st Settings
		require.NoError(t, json.Unmarshal(b, &st))
		return st
	}
	assert.Equal(t, Settings{LagComp: true, ServerSettings: true}, settings("fresh"))
	code, body := post(t, url+"/link?session=set", `{"RTTms":100,"JitterMS":15,"LossPct":2,"DupPct":0}`)
	require.Equal(t, http.StatusOK, code, body)
	code, _ = post(t, url+"/lagcomp", `{"On":false}`)
	require.Equal(t, http.StatusNoContent, code)
	assert.Equal(t, Settings{LagComp: false, ServerSettings: true, Link: Link{RTTms: 100, JitterMS: 15, LossPct: 2}}, settings("set"))
	assert.Equal(t, Settings{ServerSettings: true}, settings("fresh"), "another session's link is its own")
	res, b := get(t, url+"/settings?session=")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Equal(t, "session \"\": want 1..64 letters, digits or dashes\n", string(b))
}

// TestTruthStreams reads the spectator stream and hits its cap.
func TestTruthStreams(t *testing.T) {
	s, url := startServer(t, Options{Bots: 1})
	var bodies []io.Closer
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	for i := range MaxTruthStreams {
		res, err := http.Get(url + "/truth")
		require.NoError(t, err)
		bodies = append(bodies, res.Body)
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
		if i > 0 {
			continue
		}
		r := bufio.NewReader(res.Body)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(line, "data: "), line)
		var tr Truth
		require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &tr))
		assert.True(t, tr.LagComp)
	}
	res, body := get(t, url+"/truth")
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Equal(t, "too many spectator streams\n", string(body))
	waitFor(t, slow, "the refusal is counted", func() bool { return s.Stats().TruthRefused == 1 })
	assert.Equal(t, uint64(MaxTruthStreams), s.Stats().Truth)
}

func TestNewRefusesBadOptions(t *testing.T) {
	_, err := New(context.Background(), Options{Bots: 33})
	assert.EqualError(t, err, "web: Bots 33: allowed range is 0..32")
	_, err = New(context.Background(), Options{Frame: time.Second})
	assert.EqualError(t, err, "web: Frame 1s: allowed range is 1ms..50ms")
}
