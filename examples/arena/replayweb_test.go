package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -replay FILE -web ADDR replays the recording, names the page's address,
// serves the page and its JSON until the context ends, then returns
// cleanly.
func TestReplayServedToTheBrowser(t *testing.T) {
	file := filepath.Join(t.TempDir(), "match.gwr")
	var rec, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-clients", "2", "-duration", "3s", "-quiet", "-record", file}, &rec, &errOut), "%s", errOut.String())
	ctx, cancel := context.WithCancel(t.Context())
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-replay", file, "-web", "127.0.0.1:0"}, &out, io.Discard) }()
	open := regexp.MustCompile(`open (http://[0-9.:]+/)`)
	require.Eventually(t, func() bool { return open.MatchString(out.String()) }, time.Minute, 5*time.Millisecond, "the page's address")
	assert.Contains(t, out.String(), "state hashes equal")
	url := open.FindStringSubmatch(out.String())[1]
	for _, path := range []string{"", "info", "arena.json", "replay.js"} {
		resp, err := http.Get(url + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "/%s", path)
	}
	cancel()
	require.NoError(t, <-done)
}
