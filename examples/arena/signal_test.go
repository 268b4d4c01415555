package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a bytes.Buffer safe for a mode's goroutine writing and
// the test reading, which calls onWrite after every write.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	onWrite func(string)
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.b.Write(p)
	s := l.b.String()
	l.mu.Unlock()
	if l.onWrite != nil {
		l.onWrite(s)
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The headless match, interrupted (main cancels run's context on SIGINT
// and SIGTERM): the bots stand still, the match settles and converges,
// and the summary and the report say when play stopped.
func TestHeadlessMatchEndsCleanlyWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &lockedBuffer{onWrite: func(s string) {
		if strings.Contains(s, "t=   2s") {
			cancel()
		}
	}}
	file := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, run(ctx, []string{"-clients", "2", "-duration", "2h", "-report", file}, out, &bytes.Buffer{}))
	assert.Contains(t, out.String(), "interrupted: the bots stopped at 2s of play")
	assert.Contains(t, out.String(), "converged: true")
	assert.NotContains(t, out.String(), "t=  10s", "it stopped at once")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var r struct {
		InterruptedAtS float64 `json:"interrupted_at_s"`
		SettledS       float64 `json:"settled_s"`
		Converged      bool    `json:"converged"`
	}
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Equal(t, 2.0, r.InterruptedAtS)
	assert.GreaterOrEqual(t, r.SettledS, 1.0, "the bots stood still for the settle")
	assert.True(t, r.Converged)
}

// -web, interrupted once it serves: it says it builds the WebAssembly
// client and how long that took, then closes and sums up.
func TestWebEndsCleanlyWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	log := &lockedBuffer{onWrite: func(s string) {
		if strings.Contains(s, "open the page") {
			cancel()
		}
	}}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-web", "127.0.0.1:0", "-clients", "1"}, &bytes.Buffer{}, log) }()
	select {
	case err := <-done:
		require.NoError(t, err, log.String())
	case <-time.After(3 * time.Minute): // a cold build cache on a loaded machine
		require.FailNow(t, "-web did not end", log.String())
	}
	text := log.String()
	assert.Contains(t, text, `msg="web: building the page's WebAssembly client with the local Go toolchain"`)
	assert.Regexp(t, `msg="web: built the WebAssembly client" took=[0-9.]+m?s bytes=\d+`, text)
	assert.Contains(t, text, `msg="arena on the web: closed" ticks=`)
}
