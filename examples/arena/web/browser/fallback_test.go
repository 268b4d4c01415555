//go:build browser

package browser_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/web"
)

// TestBrowserFallsBackToWebSocket: in a browser without WebTransport (the
// page's window has none, as in an insecure context or an older browser)
// the page connects over WebSocket, says so, and plays; ?transport=
// websocket forces the same where WebTransport exists.
func TestBrowserFallsBackToWebSocket(t *testing.T) {
	srv, url := startServer(t, web.Options{Bots: 1, Seed: 7})
	ctx := newBrowser(t)
	run := func(t *testing.T, actions ...chromedp.Action) {
		t.Helper()
		require.NoError(t, chromedp.Run(ctx, actions...))
	}
	poll := func(t *testing.T, expr string) {
		t.Helper()
		err := chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(time.Minute)))
		if err != nil {
			var status string
			_ = chromedp.Run(ctx, chromedp.Text("#status", &status, chromedp.ByID))
			require.NoError(t, err, "waiting for %s; the page's status: %s", expr, status)
		}
	}
	var via struct{ Name, Fallback string }

	t.Run("without WebTransport", func(t *testing.T) {
		var script page.ScriptIdentifier
		run(t, chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			script, err = page.AddScriptToEvaluateOnNewDocument(`delete window.WebTransport`).Do(ctx)
			return err
		}))
		run(t, chromedp.Navigate(url+"/"))
		poll(t, `window.arena && arena.view && arena.view.State === 'connected' && arena.view.HasOwn`)
		var status string
		run(t, chromedp.Text("#status", &status, chromedp.ByID), chromedp.Evaluate(`JSON.parse(ghostwire.transport())`, &via))
		assert.Equal(t, "connected over WebSocket", status)
		assert.Equal(t, "websocket", via.Name)
		assert.Contains(t, via.Fallback, "no WebTransport")
		st := srv.Stats()
		assert.Zero(t, st.WebTransport)
		assert.Positive(t, st.Sockets)

		// It plays: a held key moves the player on the server.
		var x0 float64
		poll(t, ownServerX+` !== undefined`)
		run(t, chromedp.Evaluate(ownServerX, &x0))
		run(t, key(input.KeyDown, "KeyD", "d", 68))
		poll(t, ownServerX+` > `+jsFloat(x0+1))
		run(t, key(input.KeyUp, "KeyD", "d", 68))
		run(t, chromedp.ActionFunc(func(ctx context.Context) error {
			return page.RemoveScriptToEvaluateOnNewDocument(script).Do(ctx)
		}))
	})

	t.Run("forced by the address", func(t *testing.T) {
		run(t, chromedp.Navigate(url+"/?transport=websocket"))
		poll(t, `window.arena && arena.view && arena.view.State === 'connected' && arena.view.HasOwn`)
		run(t, chromedp.Evaluate(`JSON.parse(ghostwire.transport())`, &via))
		assert.Equal(t, "websocket", via.Name)
		assert.Equal(t, "forced WebSocket", via.Fallback)
		assert.Zero(t, srv.Stats().WebTransport, "not even tried")
	})
}
