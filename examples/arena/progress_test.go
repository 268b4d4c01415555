package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor polls cond every 10 ms until it holds, failing the test with
// msg after d.
func waitFor(t *testing.T, d time.Duration, msg string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waited %v for %s", d, msg)
		time.Sleep(10 * time.Millisecond) // polling a real-time run's output: no virtual clock drives it
	}
}

// lastLine returns the newest per-second line ("t=...") of out, or "".
func lastLine(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "t=") {
			return lines[i]
		}
	}
	return ""
}

// column reads the number after name in a progress line (0 when absent).
func column(line, name string) float64 {
	m := regexp.MustCompile(regexp.QuoteMeta(name) + `\s+([0-9.]+)`).FindStringSubmatch(line)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// A -serve and a -connect process's per-second lines, in real time over
// loopback UDP: their columns leave zero once the bots play (the server's
// inputs, shots, hits and bytes; the clients' snapshots, round trip and
// confirmed hits). The client is interrupted as soon as both show a hit,
// then the server: each ends cleanly with its report.
func TestProgressLinesShowRealNumbers(t *testing.T) {
	keyPath, _ := newKey(t, t.TempDir())
	dir := t.TempDir()
	began := time.Now()

	serverCtx, stopServer := context.WithCancel(t.Context())
	defer stopServer()
	srvOut := &lockedBuffer{}
	served := make(chan error, 1)
	go func() {
		served <- run(serverCtx, []string{"-serve", "127.0.0.1:0", "-key", keyPath, "-report", dir + "/server.json"}, srvOut, &bytes.Buffer{})
	}()
	var addr string
	waitFor(t, 30*time.Second, "the server's address", func() bool {
		_, rest, ok := strings.Cut(srvOut.String(), "(public address ")
		addr, _, _ = strings.Cut(rest, ")")
		return ok && strings.Contains(rest, ")")
	})

	clientCtx, stopClients := context.WithCancel(t.Context())
	defer stopClients()
	both := func(client string) bool {
		return column(lastLine(client), "hits confirmed") > 0 && column(lastLine(srvOut.String()), "hits") > 0
	}
	clOut := &lockedBuffer{onWrite: func(s string) {
		if both(s) {
			stopClients()
		}
	}}
	played := make(chan error, 1)
	go func() {
		played <- run(clientCtx, []string{"-connect", addr, "-key", keyPath, "-clients", "3", "-duration", "1h",
			"-report", dir + "/clients.json"}, clOut, &bytes.Buffer{})
	}()
	select {
	case err := <-played:
		require.NoError(t, err, "%s", clOut.String())
	case <-time.After(60 * time.Second): // a loaded 2-core machine
		require.FailNow(t, "no confirmed hit on both sides within 60s", "clients:\n%s\nserver:\n%s", clOut.String(), srvOut.String())
	}
	stopServer()
	require.NoError(t, <-served)
	t.Logf("a hit on both sides after %v", time.Since(began))

	cl, sv := lastLine(clOut.String()), lastLine(srvOut.String())
	t.Logf("client: %s", cl)
	t.Logf("server: %s", sv)
	for _, name := range []string{"server tick", "clients", "rtt", "hits confirmed"} {
		assert.Positive(t, column(cl, name), "client column %q: %s", name, cl)
	}
	for _, name := range []string{"server tick", "clients", "inputs applied", "shots", "hits", "received", "sent"} {
		assert.Positive(t, column(sv, name), "server column %q: %s", name, sv)
	}
	assert.Contains(t, clOut.String(), "left: interrupted")
	assert.Contains(t, clOut.String(), "clean: true")
	r := readReport(t, dir+"/server.json")
	assert.Equal(t, 3.0, r["connections"].(map[string]any)["accepted"])
	c := readReport(t, dir+"/clients.json")
	assert.Equal(t, true, c["clean"])
}
