package web

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// slow bounds waits on real time: building the client and connecting on a
// loaded machine.
const slow = 3 * time.Minute

// TestMain gives every test's server the page's client. The long tier
// (GHOSTWIRE_LONG=1) and the browser tests build it, once for all (a build
// per server took 0.6 s with a warm build cache, a minute with a cold
// one); the default tier serves a stand-in, since its tests play with the
// client's code natively.
func TestMain(m *testing.M) {
	var (
		once         sync.Once
		wasm, execJS []byte
		err          error
	)
	clientBuild = func(ctx context.Context, dir string) ([]byte, []byte, error) {
		if !longTier() && !browserTests {
			return stubClient()
		}
		once.Do(func() { wasm, execJS, err = buildClient(ctx, dir) })
		return wasm, execJS, err
	}
	os.Exit(m.Run())
}

// stubClient stands in for the page's client: the header of an empty
// WebAssembly module, and the Go installation's wasm_exec.js.
func stubClient() (wasm, execJS []byte, err error) {
	execJS, err = os.ReadFile(filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"))
	return []byte("\x00asm\x01\x00\x00\x00"), execJS, err
}

// skipUnlessLong skips a test of the long tier unless GHOSTWIRE_LONG is 1,
// as .ci/run sets it: the same switch, and the same message, as
// internal/longtest, which tests under examples/ do not import.
func skipUnlessLong(t testing.TB) {
	t.Helper()
	if !longTier() {
		t.Skip("long test: runs with GHOSTWIRE_LONG=1 (.ci/run sets it)")
	}
}

// longTier reports whether the long tier runs.
func longTier() bool { return os.Getenv("GHOSTWIRE_LONG") == "1" }

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
