//go:build browser

package browser_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/web"
)

// slow bounds waits on real time: building the client and connecting on a
// loaded machine.
const slow = 3 * time.Minute

// startServer builds and runs the arena's web server for the test,
// serving it on a loopback port; it stops when the test ends.
func startServer(t testing.TB, opts web.Options) (*web.Server, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	build, cancelBuild := context.WithTimeout(ctx, slow)
	defer cancelBuild()
	s, err := web.New(build, opts)
	require.NoError(t, err)
	hs := httptest.NewServer(s.Handler())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		hs.Close()
	})
	return s, hs.URL
}

// waitFor polls cond every 5 ms until it holds or d passes, failing the
// test then with msg.
func waitFor(t testing.TB, d time.Duration, msg string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("waited %v: %s", d, msg)
		case <-tick.C:
		}
	}
}
