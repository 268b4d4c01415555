package web

import (
	"context"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// slow bounds waits on real time: building the client and connecting on a
// loaded machine.
const slow = 3 * time.Minute

// TestMain builds the page's client once for every test's server: a
// build per server took 0.6 s with a warm build cache.
func TestMain(m *testing.M) {
	var (
		once         sync.Once
		wasm, execJS []byte
		err          error
	)
	clientBuild = func(ctx context.Context, dir string) ([]byte, []byte, error) {
		once.Do(func() { wasm, execJS, err = buildClient(ctx, dir) })
		return wasm, execJS, err
	}
	os.Exit(m.Run())
}

// startServer builds and runs a web server for the test, serving it on a
// loopback port; it stops when the test ends.
func startServer(t testing.TB, opts Options) (*Server, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	build, cancelBuild := context.WithTimeout(ctx, slow)
	defer cancelBuild()
	s, err := New(build, opts)
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

// waitFor polls cond every frame until it holds or the deadline passes,
// failing the test then with msg.
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
