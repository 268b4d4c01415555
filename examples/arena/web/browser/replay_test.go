//go:build browser

package browser_test

import (
	"bytes"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/replayview"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// recordMatch records 20 s of 4 bots at 150 ms and 5 % loss, two of them
// cheating in every way, with seed; it returns the file's bytes.
func recordMatch(t *testing.T, seed uint64) []byte {
	var buf bytes.Buffer
	cfg := game.DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT, cfg.Loss, cfg.Record, cfg.Seed = 4, 20*time.Second, 150*time.Millisecond, 5, &buf, seed
	cfg.Cheaters, cfg.Cheat = 2, game.CheatAll
	m, err := game.NewMatch(cfg)
	require.NoError(t, err)
	m.Run(nil)
	require.NoError(t, m.Recorder.Close())
	return buf.Bytes()
}

// The replay page as a person uses it: it loads a recording of a match
// with two cheating bots, lists its kills and disputed shots; a click on a
// gun kill jumps the timeline to the kill's tick and the kill-cam shows
// the shooter's view with the verdict, which its own cast repeats; Enter
// on a disputed shot shows its reason; play moves the timeline on and
// pause stops it; dragging the timeline moves the server's view; choosing
// another recording in the page shows it, and a file that is not one is
// refused with the reason.
func TestBrowserReplay(t *testing.T) {
	f, err := replay.Open(bytes.NewReader(recordMatch(t, 1)))
	require.NoError(t, err)
	v, err := replayview.Load(f)
	require.NoError(t, err)
	hs := httptest.NewServer(replayview.NewPage(v).Handler())
	t.Cleanup(hs.Close)

	ctx := newBrowser(t)
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(hs.URL+"/"),
		chromedp.Poll(`window.replay && replay.ready`, nil, chromedp.WithPollingTimeout(time.Minute))))
	var status string
	require.NoError(t, chromedp.Run(ctx, chromedp.Text("#status", &status)))
	assert.Contains(t, status, strconv.Itoa(len(v.Info().Kills))+" kills")
	assert.Contains(t, status, "every one equal")

	t.Run("a click on a kill shows its kill-cam", func(t *testing.T) {
		k := -1
		for i, kill := range v.Info().Kills {
			if kill.Shot >= 0 {
				k = i
				break
			}
		}
		require.GreaterOrEqual(t, k, 0, "a gun kill")
		kill := v.Info().Kills[k]
		var verdict, caption string
		var tick int
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(`#kills li:nth-child(`+strconv.Itoa(k+1)+`)`, chromedp.ByQuery),
			chromedp.Poll(`replay.picked === 1`, nil, chromedp.WithPollingTimeout(30*time.Second)),
			chromedp.Text("#verdict", &verdict), chromedp.Text("#killcam-caption", &caption),
			chromedp.Evaluate(`Number(document.getElementById('timeline').value)`, &tick)))
		assert.Equal(t, int(kill.Tick), tick, "the timeline jumped to the kill")
		assert.Contains(t, verdict, "verdict: hit (player "+strconv.Itoa(int(kill.Victim)))
		assert.Contains(t, verdict, "own cast: hit")
		assert.Contains(t, caption, "player "+strconv.Itoa(int(kill.Killer))+"'s view at tick")
		var posed int
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`replay.shot.ShooterView.length`, &posed)))
		assert.Equal(t, 4, posed, "the shooter's view holds the four players")
	})

	t.Run("the kill-cam canvas is drawn", func(t *testing.T) {
		var shot []byte
		require.NoError(t, chromedp.Run(ctx, chromedp.Screenshot("#killcam", &shot, chromedp.ByID)))
		img, err := png.Decode(bytes.NewReader(shot))
		require.NoError(t, err)
		colours := map[[3]uint32]bool{}
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y += 3 {
			for x := b.Min.X; x < b.Max.X; x += 3 {
				r, g, bl, _ := img.At(x, y).RGBA()
				colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			}
		}
		assert.Greater(t, len(colours), 5, "walls, players, hitboxes and the ray")
		if *screenshot != "" {
			require.NoError(t, os.WriteFile(strings.TrimSuffix(*screenshot, ".png")+"-killcam.png", shot, 0o644))
		}
	})

	t.Run("Enter on a disputed shot shows its reason", func(t *testing.T) {
		var n int
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#disputed li').length`, &n)))
		require.Positive(t, n, "the cheaters' refused shots")
		var verdict, text string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Text(`#disputed li:first-child`, &text, chromedp.ByQuery),
			chromedp.Focus(`#disputed li:first-child`, chromedp.ByQuery),
			chromedp.KeyEvent("\r"),
			chromedp.Poll(`replay.picked === 2`, nil, chromedp.WithPollingTimeout(30*time.Second)),
			chromedp.Text("#verdict", &verdict)))
		reason := text[strings.LastIndex(text, ", ")+2:]
		assert.Contains(t, verdict, "verdict: "+reason)
	})

	t.Run("play moves the timeline, pause stops it, dragging moves the view", func(t *testing.T) {
		var before, after, stopped, again int
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`replay.tick`, &before)))
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click("#play", chromedp.ByID),
			chromedp.Poll(`replay.tick > `+strconv.Itoa(before+10), nil, chromedp.WithPollingTimeout(30*time.Second)),
			chromedp.Click("#play", chromedp.ByID),
			chromedp.Evaluate(`replay.tick`, &after)))
		assert.Greater(t, after, before+10)
		// The tick 300 ms of the page's own time later, paused: it must stay.
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`new Promise(r => setTimeout(() => r(replay.tick), 300))`, &stopped,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })))
		assert.Equal(t, after, stopped, "paused")
		first := int(v.Info().First) + 30
		require.NoError(t, chromedp.Run(ctx,
			chromedp.SetValue("#timeline", strconv.Itoa(first), chromedp.ByID),
			chromedp.Evaluate(`document.getElementById('timeline').dispatchEvent(new Event('input'))`, nil),
			chromedp.Poll(`document.getElementById('tick').textContent === '`+strconv.Itoa(first)+`'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
			chromedp.Evaluate(`replay.tick`, &again)))
		assert.Equal(t, first, again)
	})

	t.Run("another recording chosen in the page is shown", func(t *testing.T) {
		dir := t.TempDir()
		other := filepath.Join(dir, "other.gwr")
		b := recordMatch(t, 2)
		require.NoError(t, os.WriteFile(other, b, 0o644))
		f, err := replay.Open(bytes.NewReader(b))
		require.NoError(t, err)
		want, err := replayview.Load(f)
		require.NoError(t, err)
		var status string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.SetUploadFiles("#file", []string{other}, chromedp.ByID),
			chromedp.Poll(`replay.loaded === 2`, nil, chromedp.WithPollingTimeout(time.Minute)),
			chromedp.Text("#status", &status)))
		assert.Contains(t, status, strconv.Itoa(len(want.Info().Kills))+" kills")
		var n int
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#kills li').length`, &n)))
		assert.Equal(t, len(want.Info().Kills), n)

		junk := filepath.Join(dir, "notes.txt")
		require.NoError(t, os.WriteFile(junk, []byte("not a recording"), 0o644))
		require.NoError(t, chromedp.Run(ctx,
			chromedp.SetUploadFiles("#file", []string{junk}, chromedp.ByID),
			chromedp.Poll(`replay.refused === 1`, nil, chromedp.WithPollingTimeout(time.Minute)),
			chromedp.Text("#status", &status)))
		assert.Contains(t, status, "notes.txt was refused: replay: byte")
	})
}
