//go:build browser

// Package browser_test drives the arena's web page in Debian's Chromium.
// It is a module of its own so that ghostwire's go.mod does not require
// chromedp: run it from this directory,
//
//	go test -tags browser .
package browser_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/web"
)

// The browser tests drive the page in Debian's Chromium; from this
// directory:
//
//	go test -tags browser . -args -screenshot "$PWD/../../../../docs/arena-web.png"
//
// A missing browser fails them.
// browserTests is set when the browser tests are built: they need the
// page's real client.
const browserTests = true

var screenshot = flag.String("screenshot", "", "save the page's screenshot to this file (default: the test's temporary directory)")

// chromium is Debian's package's browser.
const chromium = "/usr/bin/chromium"

// newBrowser starts a headless Chromium with a fresh profile and returns
// a tab's context; it ends with the test. Without the background
// networking flags Chromium's own connections are refused on a closed
// network.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	_, err := os.Stat(chromium)
	require.NoError(t, err, "the browser tests need Chromium: apt-get install -y chromium")
	// Not t.TempDir: Chromium's helper processes may still write to the
	// profile for a moment after the browser ended.
	profile, err := os.MkdirTemp("", "arena-chromium-")
	require.NoError(t, err)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1300, 860),
	)
	ctx, cancelTab := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	// The page's console and uncaught exceptions go to the test's log.
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var b strings.Builder
			for _, a := range ev.Args {
				b.Write(a.Value)
				b.WriteString(a.Description)
				b.WriteByte(' ')
			}
			t.Logf("console.%s: %s", ev.Type, b.String())
		case *runtime.EventExceptionThrown:
			t.Logf("exception: %s", ev.ExceptionDetails.Error())
		}
	})
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*slow)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
		waitFor(t, time.Minute, "removing Chromium's profile", func() bool { return os.RemoveAll(profile) == nil })
	})
	return ctx
}

// key sends a key event of code (as in KeyboardEvent.code) to the page.
func key(typ input.KeyType, code, k string, vk int64) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		return input.DispatchKeyEvent(typ).WithCode(code).WithKey(k).WithWindowsVirtualKeyCode(vk).Do(ctx)
	})
}

// ownServerX is the page's expression for the x of its own player in the
// server's truth (undefined until both have arrived).
const ownServerX = `(() => { const v = arena.view, tr = arena.truth;
	const p = v && v.HasOwn && tr && tr.Players.find(p => p.Ghost === v.Own.Ghost);
	return p ? p.X : undefined; })()`

// nearestBot is the page's expression for the page coordinates of the
// living bot nearest the own player as the client draws it, or [] when
// there is none or the own player is dead.
const nearestBot = `(() => { const v = arena.view, me = v.Own;
	const alive = (v.Others || []).filter(o => o.HP > 0);
	if (!v.HasOwn || me.HP <= 0 || !alive.length) return [];
	alive.sort((a, b) => Math.hypot(a.X - me.X, a.Y - me.Y) - Math.hypot(b.X - me.X, b.Y - me.Y));
	return arena.toPage(alive[0].X, alive[0].Y); })()`

func TestBrowser(t *testing.T) {
	srv, url := startServer(t, web.Options{Bots: 3, Seed: 5, Chat: true, ServerSettings: true})
	ctx := newBrowser(t)
	run := func(t *testing.T, actions ...chromedp.Action) {
		t.Helper()
		require.NoError(t, chromedp.Run(ctx, actions...))
	}
	poll := func(t *testing.T, expr string) {
		t.Helper()
		err := chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(time.Minute)))
		if err != nil {
			var state string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify({status: document.getElementById('status').textContent,
				view: arena.view && {State: arena.view.State, Err: arena.view.Err, HasOwn: arena.view.HasOwn, Timeline: arena.view.Timeline}})`, &state))
			require.NoError(t, err, "waiting for %s; the page: %s", expr, state)
		}
	}

	t.Run("page loads and connects", func(t *testing.T) {
		run(t, chromedp.Navigate(url+"/"))
		poll(t, `window.arena && arena.view && arena.view.State === 'connected' && arena.view.HasOwn && arena.truth && arena.truth.Players.length === 4`)
		var title, status string
		run(t, chromedp.Title(&title), chromedp.Text("#status", &status, chromedp.ByID))
		assert.Equal(t, "ghostwire arena", title)
		assert.Equal(t, "connected over WebTransport", status, "Chromium has WebTransport, so the page takes it")
		var via struct{ Name, Fallback string }
		run(t, chromedp.Evaluate(`JSON.parse(ghostwire.transport())`, &via))
		assert.Equal(t, "webtransport", via.Name)
		st := srv.Stats()
		assert.Equal(t, st.Sockets, st.WebTransport, "every connection of the page came over WebTransport")
		assert.Positive(t, st.WebTransport)
	})

	t.Run("canvas is not blank", func(t *testing.T) {
		poll(t, `arena.frames > 30 && arena.view.Others.length === 3`)
		// Read the pixels of a frame that shows the own player alive in
		// both views and a living bot: the bots shoot, and the dead are
		// drawn grey.
		var px struct{ Ink, Colours, OwnLeft, OwnRight, Others int }
		run(t, chromedp.Poll(`(() => {
			const c = document.getElementById('views');
			const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			const colours = new Set();
			let ink = 0, ownLeft = 0, ownRight = 0, others = 0;
			for (let i = 0; i < d.length; i += 4) {
				const [r, g, b, a] = [d[i], d[i+1], d[i+2], d[i+3]];
				if (a === 0) continue;
				colours.add((r << 16) | (g << 8) | b);
				if (r < 235 || g < 235 || b < 235) ink++;
				const x = (i / 4) % c.width;
				if (r === 0x1a && g === 0x8f && b === 0x3a) { if (x < 420) ownLeft++; else ownRight++; }
				if (r === 0xc0 && g === 0x39 && b === 0x2b) others++;
			}
			return ownLeft > 0 && ownRight > 0 && others > 0 &&
				{Ink: ink, Colours: colours.size, OwnLeft: ownLeft, OwnRight: ownRight, Others: others};
		})()`, &px, chromedp.WithPollingTimeout(time.Minute)))
		t.Logf("canvas pixels: %+v", px)
		assert.Greater(t, px.Ink, 5000, "walls, players and titles are drawn")
		assert.Greater(t, px.Colours, 10)
		assert.Greater(t, px.OwnLeft, 50, "the own player in the client's view")
		assert.Greater(t, px.OwnRight, 50, "the own player in the server's view")
		assert.Greater(t, px.Others, 50, "the bots")
	})

	t.Run("a key press moves the player on the server", func(t *testing.T) {
		var x0 float64
		poll(t, ownServerX+` !== undefined`)
		run(t, chromedp.Evaluate(ownServerX, &x0))
		// Hold D (right) until the server has moved the player a unit: the
		// bots shoot, so a respawn may interrupt the run; polling every
		// frame sees it get there first.
		run(t, key(input.KeyDown, "KeyD", "d", 68))
		poll(t, ownServerX+` > `+jsFloat(x0+1))
		run(t, key(input.KeyUp, "KeyD", "d", 68))
	})

	t.Run("after a slider is clicked, the keys still move the player", func(t *testing.T) {
		run(t, chromedp.Click("#dup", chromedp.ByID))
		poll(t, `document.getElementById('dup').value !== '0' && arena.linkPosts > 0`)
		// The worst case too: the slider focused, as a tab to it leaves it.
		var before struct {
			Value string
			Posts int
			X     float64
		}
		poll(t, ownServerX+` !== undefined`)
		run(t, chromedp.Evaluate(`document.getElementById('dup').focus(),
			({Value: document.getElementById('dup').value, Posts: arena.linkPosts, X: `+ownServerX+`})`, &before))
		// The arrows would move a focused slider: here they move the player.
		run(t, key(input.KeyDown, "ArrowLeft", "ArrowLeft", 37))
		poll(t, ownServerX+` < `+jsFloat(before.X-1))
		run(t, key(input.KeyUp, "ArrowLeft", "ArrowLeft", 37))
		var after struct {
			Value string
			Posts int
		}
		run(t, chromedp.Sleep(200*time.Millisecond), // a link post would leave within 50 ms
			chromedp.Evaluate(`({Value: document.getElementById('dup').value, Posts: arena.linkPosts})`, &after))
		assert.Equal(t, before.Value, after.Value, "the slider kept its value")
		assert.Equal(t, before.Posts, after.Posts, "and the link did not change")
		run(t, chromedp.SetValue("#dup", "0", chromedp.ByID))
		poll(t, `arena.linkPosts > `+jsFloat(float64(after.Posts)))
	})

	t.Run("chat: Enter, a line, Enter, and the keys move the player again", func(t *testing.T) {
		poll(t, `arena.view.State === 'connected' && arena.view.HasOwn && document.activeElement.id !== 'chat-input'`)
		// Enter opens the chat.
		run(t, key(input.KeyDown, "Enter", "Enter", 13), key(input.KeyUp, "Enter", "Enter", 13))
		poll(t, `document.activeElement.id === 'chat-input'`)
		// Typed as a person types, the game's keys among the letters:
		// they go into the line, not to the player.
		run(t, chromedp.KeyEvent("gg wasd e"))
		var typed string
		run(t, chromedp.Value("#chat-input", &typed, chromedp.ByID))
		require.Equal(t, "gg wasd e", typed)
		var rocketsBefore int
		run(t, chromedp.Evaluate(`arena.view.Timeline.RocketsPredicted`, &rocketsBefore))
		run(t, key(input.KeyDown, "Enter", "Enter", 13), key(input.KeyUp, "Enter", "Enter", 13))
		// Sent, relayed by the server, shown as the own line; the box
		// emptied and the keyboard back with the game.
		poll(t, `[...document.querySelectorAll('#chat-log li')].some(li => li.textContent === 'you: gg wasd e')`)
		var after struct {
			Value, Focus  string
			Sent, Rockets int
		}
		run(t, chromedp.Evaluate(`({Value: document.getElementById('chat-input').value, Focus: document.activeElement.id,
			Sent: arena.chatSent, Rockets: arena.view.Timeline.RocketsPredicted})`, &after))
		assert.Empty(t, after.Value)
		assert.Equal(t, "views", after.Focus, "the canvas has the keyboard")
		assert.Equal(t, 1, after.Sent)
		assert.Equal(t, rocketsBefore, after.Rockets, "the e typed fired no rocket")
		// The keys move the player again: D to the right.
		var x0 float64
		poll(t, ownServerX+` !== undefined`)
		run(t, chromedp.Evaluate(ownServerX, &x0))
		run(t, key(input.KeyDown, "KeyD", "d", 68))
		poll(t, ownServerX+` > `+jsFloat(x0+1))
		run(t, key(input.KeyUp, "KeyD", "d", 68))
		// Esc leaves the chat without sending, the line kept for later.
		run(t, key(input.KeyDown, "Enter", "Enter", 13), key(input.KeyUp, "Enter", "Enter", 13))
		poll(t, `document.activeElement.id === 'chat-input'`)
		run(t, chromedp.KeyEvent("draft"), key(input.KeyDown, "Escape", "Escape", 27), key(input.KeyUp, "Escape", "Escape", 27))
		poll(t, `document.activeElement.id === 'views' && document.getElementById('chat-input').value === 'draft'`)
		run(t, chromedp.Evaluate(ownServerX, &x0))
		run(t, key(input.KeyDown, "KeyA", "a", 65))
		poll(t, ownServerX+` < `+jsFloat(x0-1))
		run(t, key(input.KeyUp, "KeyA", "a", 65), chromedp.Evaluate(`document.getElementById('chat-input').value = ''`, nil))
		// The bots chat too (-chat): a line from another player shows.
		poll(t, `[...document.querySelectorAll('#chat-log li')].some(li => /^player \d+: ./.test(li.textContent))`)
	})

	t.Run("the latency slider changes the measured RTT", func(t *testing.T) {
		// Nothing added yet: the round trip of loopback, once the estimate
		// has forgotten the page's slow start on a loaded machine.
		poll(t, `arena.view.Timeline.RTTms > 0 && arena.view.Timeline.RTTms < 150`)
		// Move the slider the way a drag does: SetValue sets the value and
		// fires input and change.
		run(t, chromedp.SetValue("#rtt", "250", chromedp.ByID))
		poll(t, `arena.linkPosts > 0 && arena.view.Timeline.RTTms > 220`)
		var shown string
		run(t, chromedp.Text("#rtt-v", &shown, chromedp.ByID))
		assert.Equal(t, "250 ms", shown)
	})

	t.Run("the timeline updates", func(t *testing.T) {
		var before struct {
			Updates int
			Tick    string
		}
		run(t, chromedp.Evaluate(`({Updates: arena.timelineUpdates, Tick: document.getElementById('t-tick').textContent})`, &before))
		poll(t, `arena.timelineUpdates >= `+jsFloat(float64(before.Updates+3))+
			` && document.getElementById('t-tick').textContent !== '`+before.Tick+`'`)
		var rtt, verdicts string
		run(t, chromedp.Text("#t-rtt", &rtt, chromedp.ByID), chromedp.Text("#t-verdicts", &verdicts, chromedp.ByID))
		assert.Regexp(t, `^\d+\.\d ms ±\d+\.\d$`, rtt)
		assert.Regexp(t, `^\d+ fired, \d+ hits, \d+ kills; .* \(lag compensation on\)$`, verdicts)
	})

	t.Run("the toggles", func(t *testing.T) {
		// A fixed interpolation delay reconnects with it.
		run(t, chromedp.SetValue("#interp", "250", chromedp.ByID))
		poll(t, `arena.view.State === 'connected' && arena.view.HasOwn && arena.view.Timeline.InterpDelayMS === 250`)
		// Lag compensation is the server's: its truth says so.
		run(t, chromedp.Click("#lagcomp", chromedp.ByID))
		poll(t, `arena.truth.LagComp === false`)
		run(t, chromedp.Click("#lagcomp", chromedp.ByID))
		poll(t, `arena.truth.LagComp === true`)
		// Prediction off draws the own player where the server confirmed it.
		run(t, chromedp.Click("#predict", chromedp.ByID))
		poll(t, `arena.frames > 0 && !document.getElementById('predict').checked`)
		var off bool
		run(t, chromedp.Evaluate(`arena.predict === false`, &off))
		assert.True(t, off)
		run(t, chromedp.Click("#predict", chromedp.ByID), chromedp.SetValue("#interp", "0", chromedp.ByID))
		poll(t, `arena.predict === true && arena.view.State === 'connected' && arena.view.HasOwn`)
	})

	t.Run("a reload shows the server's settings", func(t *testing.T) {
		// Lag compensation switched off by someone else; this session's
		// link has the 250 ms set above.
		setLagComp(t, url, "off")
		run(t, chromedp.Navigate(url+"/"))
		poll(t, `arena.settingsLoaded && arena.view && arena.view.State === 'connected' && arena.view.HasOwn`)
		var shown struct {
			LagComp bool
			RTT     string
			RTTText string
		}
		run(t, chromedp.Evaluate(`({LagComp: document.getElementById('lagcomp').checked,
			RTT: document.getElementById('rtt').value, RTTText: document.getElementById('rtt-v').textContent})`, &shown))
		assert.False(t, shown.LagComp, "the checkbox shows the server's lag compensation")
		assert.Equal(t, "250", shown.RTT, "the slider shows the session's link")
		assert.Equal(t, "250 ms", shown.RTTText)
		// Switched back by someone else: the checkbox follows.
		setLagComp(t, url, "on")
		poll(t, `document.getElementById('lagcomp').checked`)
	})

	t.Run("your shots show tracers and hit markers", func(t *testing.T) {
		// Click on the nearest living bot as drawn, now and then, until
		// the server confirms a hit: the bots move and the pillars hide
		// them at times.
		deadline := time.Now().Add(time.Minute)
		for {
			var hit bool
			run(t, chromedp.Evaluate(`arena.view.Shots.some(s => s.Hit) && arena.hitMarkers > 0`, &hit))
			if hit {
				break
			}
			require.True(t, time.Now().Before(deadline), "no hit confirmed within a minute")
			var at []float64
			run(t, chromedp.Evaluate(nearestBot, &at))
			if len(at) == 2 {
				run(t, chromedp.MouseClickXY(at[0], at[1]))
			}
			run(t, chromedp.Sleep(300*time.Millisecond)) // the weapon fires four times a second
		}
		// The timeline shows it at its next update, five times a second.
		poll(t, `/^[1-9]\d* of [1-9]\d*$/.test(document.getElementById('t-hits').textContent)`)
		var tracers int
		run(t, chromedp.Evaluate(`arena.tracers`, &tracers))
		assert.Positive(t, tracers)
	})

	t.Run("the kill feed shows a kill", func(t *testing.T) {
		// Shoot the nearest bot until a kill shows, whoever made it.
		deadline := time.Now().Add(time.Minute)
		for {
			var shown bool
			run(t, chromedp.Evaluate(`arena.view.KillsReceived > 0 && arena.killsShown > 0`, &shown))
			if shown {
				break
			}
			require.True(t, time.Now().Before(deadline), "no kill shown within a minute")
			var at []float64
			run(t, chromedp.Evaluate(nearestBot, &at))
			if len(at) == 2 {
				run(t, chromedp.MouseClickXY(at[0], at[1]))
			}
			run(t, chromedp.Sleep(300*time.Millisecond))
		}
		var lines []string
		run(t, chromedp.Evaluate(`[...document.querySelectorAll('#killfeed li')].map(li => li.textContent)`, &lines))
		require.NotEmpty(t, lines)
		for _, l := range lines {
			assert.Regexp(t, `^(you|player \d+) (◎ rocket|━ gun) (you|player \d+)$`, l)
		}
	})

	t.Run("rockets, their explosions and the ball are drawn", func(t *testing.T) {
		// The ball from the start, in both views; a rocket for E and for
		// a right-click, drawn from the press on, then its explosion: at
		// a bot, a pillar or the edge, whichever it meets first.
		poll(t, `arena.view.HasBall && arena.truth.HasBall && arena.ballsDrawn > 0`)
		var before struct{ Predicted, Rockets, Explosions int }
		run(t, chromedp.Evaluate(`({Predicted: arena.view.Timeline.RocketsPredicted, Rockets: arena.rocketsDrawn,
			Explosions: arena.explosionsDrawn})`, &before))
		fired := func(n int) string {
			return `arena.view.Timeline.RocketsPredicted >= ` + jsFloat(float64(before.Predicted+n))
		}
		deadline := time.Now().Add(time.Minute)
		for {
			var done bool
			run(t, chromedp.Evaluate(fired(1), &done))
			if done {
				break
			}
			require.True(t, time.Now().Before(deadline), "no rocket fired with E within a minute")
			poll(t, `arena.view.HasOwn && arena.view.Own.HP > 0`)
			run(t, key(input.KeyDown, "KeyE", "e", 69), key(input.KeyUp, "KeyE", "e", 69),
				chromedp.Sleep(800*time.Millisecond)) // the launcher's cooldown
		}
		for {
			var done bool
			run(t, chromedp.Evaluate(fired(2), &done))
			if done {
				break
			}
			require.True(t, time.Now().Before(deadline), "no rocket fired with a right-click within a minute")
			poll(t, `arena.view.HasOwn && arena.view.Own.HP > 0`)
			run(t, chromedp.MouseClickXY(100, 100, chromedp.ButtonType(input.Right)), chromedp.Sleep(800*time.Millisecond))
		}
		poll(t, `arena.rocketsDrawn > `+jsFloat(float64(before.Rockets))+` && arena.explosionsDrawn > `+jsFloat(float64(before.Explosions)))
		var rockets string
		poll(t, `document.getElementById('t-rockets').textContent !== '–'`)
		run(t, chromedp.Text("#t-rockets", &rockets, chromedp.ByID))
		assert.Regexp(t, `^[1-9]\d* predicted, \d+ taken over by the server, \d+ refused$`, rockets)
	})

	t.Run("screenshot", func(t *testing.T) {
		// A scene worth a picture: the 100 ms preset, some running and
		// aiming, a shot.
		run(t, chromedp.Click(`.presets button:nth-child(3)`, chromedp.ByQuery))
		poll(t, `arena.view.Timeline.RTTms > 80 && arena.view.Timeline.RTTms < 180`)
		run(t, chromedp.MouseClickXY(300, 200), key(input.KeyDown, "KeyW", "w", 87))
		poll(t, `arena.view.Timeline.Tick > 0 && arena.frames > 0`)
		run(t, chromedp.MouseClickXY(330, 180), key(input.KeyUp, "KeyW", "w", 87))
		start := time.Now()
		var frames int
		run(t, chromedp.Evaluate(`arena.frames`, &frames))
		poll(t, `arena.frames > `+jsFloat(float64(frames+30))+` && arena.view.Own.HP > 0 && arena.view.Timeline.Errors.length >= 50`)
		// A shot at the nearest bot, caught while its tracer shows.
		var at []float64
		run(t, chromedp.Evaluate(nearestBot, &at))
		if len(at) == 2 {
			run(t, chromedp.MouseClickXY(at[0], at[1]))
			poll(t, `arena.view.Shots.length > 0`)
		}
		// And a rocket, caught in flight or exploding: pressed again
		// while none shows, for a bot may have killed the player since
		// (a dead player fires nothing).
		deadline := time.Now().Add(time.Minute)
		for {
			run(t, key(input.KeyDown, "KeyE", "e", 69), key(input.KeyUp, "KeyE", "e", 69))
			err := chromedp.Run(ctx, chromedp.Poll(`arena.view.Rockets.some(r => r.Own) || arena.view.Explosions.some(x => x.Own)`, nil,
				chromedp.WithPollingTimeout(time.Second)))
			if err == nil {
				break
			}
			require.True(t, time.Now().Before(deadline), "no rocket of the player's shown within a minute: %v", err)
		}
		var shot []byte
		run(t, chromedp.CaptureScreenshot(&shot))
		t.Logf("screenshot after %v", time.Since(start))
		img, err := png.Decode(bytes.NewReader(shot))
		require.NoError(t, err)
		assert.Equal(t, 1300, img.Bounds().Dx())
		path := *screenshot
		if path == "" {
			path = filepath.Join(t.TempDir(), "arena-web.png")
		}
		require.NoError(t, os.WriteFile(path, shot, 0o644))
		t.Logf("screenshot saved to %s", path)
	})
}

// setLagComp switches the server's lag compensation, as another page
// would.
func setLagComp(t *testing.T, url, on string) {
	t.Helper()
	body := `{"On":true}`
	if on == "off" {
		body = `{"On":false}`
	}
	res, err := http.Post(url+"/lagcomp", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
}

// jsFloat writes a number for a JavaScript expression.
func jsFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
