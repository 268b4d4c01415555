package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// process is a started arena process whose stdout lines the test can wait
// for.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string
	mu     sync.Mutex
	out    bytes.Buffer // everything read from stdout
	errOut bytes.Buffer
	done   chan struct{}
	err    error // the exit status, once done is closed
}

// start execs the binary; cleanup kills it if the test left it running.
func start(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{t: t, cmd: exec.Command(bin, args...), lines: make(chan string, 1024), done: make(chan struct{})}
	p.cmd.Stderr = &syncWriter{mu: &p.mu, w: &p.errOut}
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for lines this late
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

type syncWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// output returns what the process wrote so far, for failure messages.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "stdout:\n" + p.out.String() + "stderr:\n" + p.errOut.String()
}

// waitLine waits for a stdout line starting with prefix and returns it.
func (p *process) waitLine(prefix string, limit time.Duration) string {
	p.t.Helper()
	deadline := time.After(limit)
	for {
		select {
		case l := <-p.lines:
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-p.done:
			require.FailNow(p.t, "the process ended before printing "+prefix, "%v\n%s", p.err, p.output())
		case <-deadline:
			require.FailNow(p.t, "no line "+prefix, "within %v\n%s", limit, p.output())
		}
	}
}

// wait waits for the process to exit and requires status 0.
func (p *process) wait(limit time.Duration) {
	p.t.Helper()
	select {
	case <-p.done:
		require.NoError(p.t, p.err, p.output())
	case <-time.After(limit):
		require.FailNow(p.t, "the process did not exit", "within %v\n%s", limit, p.output())
	}
}

// readReport parses a JSON report.
func readReport(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var r map[string]any
	require.NoError(t, json.Unmarshal(b, &r))
	for _, key := range []string{"config", "server", "clients", "converged", "wall"} {
		require.Contains(t, r, key, "the headless arena's schema")
	}
	return r
}

// serverAddr returns the public address from the server's first line:
// "arena: serving on udp BOUND (public address PUBLIC)".
func serverAddr(t *testing.T, line string) string {
	t.Helper()
	_, public, ok := strings.Cut(line, "(public address ")
	require.True(t, ok, line)
	return strings.TrimSuffix(public, ")")
}

// The -serve and -connect processes, built once and started by the test
// as separate processes on 127.0.0.1 (the server picks a free port and
// prints it). Real time: every wait has a generous deadline. Long tier:
// real processes in real time, and a build of the arena.
func TestArenaProcesses(t *testing.T) {
	skipUnlessLong(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "arena")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	keyPath, _ := newKey(t, dir)
	const limit = 90 * time.Second

	t.Run("play 5s, both exit 0 with reports", func(t *testing.T) {
		sReport, cReport := filepath.Join(t.TempDir(), "server.json"), filepath.Join(t.TempDir(), "clients.json")
		srv := start(t, bin, "-serve", "127.0.0.1:0", "-key", keyPath, "-quiet", "-report", sReport)
		addr := serverAddr(t, srv.waitLine("arena: serving on udp", limit))
		cl := start(t, bin, "-connect", addr, "-key", keyPath, "-clients", "3", "-duration", "5s", "-quiet", "-report", cReport)
		cl.wait(limit)
		c := readReport(t, cReport)
		assert.Equal(t, true, c["clean"], cl.output())
		assert.Equal(t, true, c["converged"], cl.output())
		clients := c["clients"].([]any)
		require.Len(t, clients, 3)
		for _, x := range clients {
			cr := x.(map[string]any)
			assert.Equal(t, "left: the match is over", cr["end"])
			assert.Greater(t, cr["ticks"].(float64), 250.0, "5 s and more at 60 Hz")
			assert.Equal(t, true, cr["converged"])
		}

		require.NoError(t, srv.cmd.Process.Signal(os.Interrupt))
		srv.wait(limit)
		s := readReport(t, sReport)
		conns := s["connections"].(map[string]any)
		assert.Equal(t, 3.0, conns["accepted"], srv.output())
		assert.Equal(t, 3.0, conns["peak"])
		dropped := s["dropped"].(map[string]any)
		for _, reason := range []string{"malformed", "bad_token", "expired_token", "replayed", "unknown_client", "server_full", "rate_limited", "timeout"} {
			assert.Contains(t, dropped, reason)
		}
		assert.Zero(t, dropped["bad_token"])
		assert.Greater(t, s["server"].(map[string]any)["ticks"].(float64), 250.0)
	})

	t.Run("SIGTERM to the server mid-match: its report, and a clean disconnect for the clients", func(t *testing.T) {
		sReport, cReport := filepath.Join(t.TempDir(), "server.json"), filepath.Join(t.TempDir(), "clients.json")
		secretPath, _ := newSecret(t, t.TempDir())
		srv := start(t, bin, "-serve", "127.0.0.1:0", "-key", keyPath, "-tokens", "127.0.0.1:0", "-token-secret", secretPath, "-grace", "2s", "-quiet", "-report", sReport)
		addr := serverAddr(t, srv.waitLine("arena: serving on udp", limit))
		url := strings.TrimPrefix(srv.waitLine("arena: connect tokens at ", limit), "arena: connect tokens at ")
		cl := start(t, bin, "-connect", addr, "-tokens", url, "-token-secret", secretPath, "-clients", "2", "-duration", "10m", "-report", cReport)
		cl.waitLine("arena: 2/2 clients connected", limit)
		cl.waitLine("t=", limit) // playing

		require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
		srv.wait(limit)
		s := readReport(t, sReport)
		conns := s["connections"].(map[string]any)
		assert.Equal(t, 2.0, conns["open_at_end"], srv.output())
		assert.Equal(t, 2.0, conns["tokens_issued"])
		drain := s["drain"].(map[string]any)
		assert.Equal(t, "signal", drain["reason"])
		assert.Equal(t, 1.0, drain["ended"], "the room with players played on until the grace")

		cl.wait(limit)
		assert.Contains(t, cl.output(), "disconnected by the server: closed")
		c := readReport(t, cReport)
		assert.Equal(t, true, c["clean"], cl.output())
		for _, x := range c["clients"].([]any) {
			cr := x.(map[string]any)
			assert.True(t, strings.HasPrefix(cr["end"].(string), "the server closed"), cr["end"])
			assert.Equal(t, true, cr["clean"])
		}
	})
}

// Drain with 3 rooms running, at the process level: one -serve process of
// 3 rooms and a -connect process of a bot in each room; SIGTERM to the
// server. Nothing new is admitted (a token request is refused, and a bot
// with a token made before is routed nowhere, counted), the 3 rooms play
// on and are ended at the grace (-grace 3s: 2.5 s of play), every client
// is told the server is closing and ends cleanly, and the server exits 0
// within the grace with a report section per room. Long tier: processes
// in real time.
func TestArenaProcessDrainsThreeRooms(t *testing.T) {
	skipUnlessLong(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "arena")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	keyPath, _ := newKey(t, dir)
	secretPath, secret := newSecret(t, dir)
	const limit = 90 * time.Second
	sReport := filepath.Join(dir, "server.json")
	srv := start(t, bin, "-serve", "127.0.0.1:0", "-key", keyPath, "-rooms", "3", "-tokens", "127.0.0.1:0", "-token-secret", secretPath,
		"-metrics", "127.0.0.1:0", "-grace", "3s", "-quiet", "-report", sReport)
	addr := serverAddr(t, srv.waitLine("arena: serving on udp", limit))
	url := strings.TrimPrefix(srv.waitLine("arena: connect tokens at ", limit), "arena: connect tokens at ")
	metricsURL := strings.TrimSuffix(strings.TrimPrefix(srv.waitLine("arena: metrics at ", limit), "arena: metrics at "), "/metrics")
	var clients []*process
	for i := 1; i <= 3; i++ {
		cl := start(t, bin, "-connect", addr, "-tokens", url, "-token-secret", secretPath, "-room", roomName(i), "-clients", "1",
			"-seed", strconv.Itoa(i), "-duration", "10m", "-report", filepath.Join(dir, "clients-"+strconv.Itoa(i)+".json"))
		cl.waitLine("arena: 1/1 clients connected", limit)
		clients = append(clients, cl)
	}

	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
	began := time.Now()
	waitFor(t, limit, "/readyz not ready", func() bool { status, _ := get(t, metricsURL+"/readyz"); return status != http.StatusOK })
	late := start(t, bin, "-connect", addr, "-key", keyPath, "-room", roomName(1), "-clients", "1", "-duration", "10m", "-quiet")
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"room":"arena-2","identity":"latecomer"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "no token while draining")
	srv.wait(limit)
	took := time.Since(began)
	assert.Less(t, took, 3*time.Second+time.Second, "within the grace (and a process's exit)")
	for _, cl := range clients {
		cl.wait(limit)
		assert.Contains(t, cl.output(), "disconnected by the server: closed")
		assert.Contains(t, cl.output(), "clean: true")
	}
	_ = late.cmd.Process.Kill() // refused by the server; its handshake may still be waiting

	s := readReport(t, sReport)
	drain := s["drain"].(map[string]any)
	assert.Equal(t, "signal", drain["reason"], srv.output())
	assert.Equal(t, 3.0, drain["ended"])
	assert.Equal(t, 0.0, drain["finished"])
	assert.GreaterOrEqual(t, drain["seconds"].(float64), 1.95, "the rooms played on for the grace less its margin (3 s − 1 s)")
	assert.LessOrEqual(t, drain["seconds"].(float64), 3.0, "within the grace")
	rooms := s["rooms"].([]any)
	require.Len(t, rooms, 3)
	for i, x := range rooms {
		r := x.(map[string]any)
		assert.Equal(t, roomName(i+1), r["name"])
		assert.Equal(t, 1.0, r["clients_at_end"], "its client told the server is closing")
	}
	conns := s["connections"].(map[string]any)
	assert.Equal(t, 3.0, conns["open_at_end"])
	if refused, ok := conns["refused"].(map[string]any); assert.True(t, ok, srv.output()) {
		assert.Equal(t, 1.0, refused["draining"], "the late bot was routed nowhere")
	}
}

// long skips a test of the long tier (real time, processes, signals)
// unless GHOSTWIRE_LONG=1.
func long(t *testing.T) {
	if os.Getenv("GHOSTWIRE_LONG") != "1" {
		t.Skip("long test: set GHOSTWIRE_LONG=1")
	}
}

// Every mode, as a process, ends cleanly (exit 0, its summary) on SIGTERM
// or SIGINT: the headless match, -web and a -connect process (the server's
// signals are TestArenaProcesses').
func TestEveryModeEndsCleanlyOnSignals(t *testing.T) {
	long(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "arena")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	keyPath, _ := newKey(t, dir)
	const limit = 3 * time.Minute

	t.Run("headless match, SIGTERM", func(t *testing.T) {
		p := start(t, bin, "-clients", "2", "-duration", "2h")
		p.waitLine("t=   1s", limit)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		p.wait(limit)
		assert.Contains(t, p.output(), "interrupted: the bots stopped at")
		assert.Contains(t, p.output(), "converged: true")
	})
	t.Run("web, SIGTERM", func(t *testing.T) {
		p := start(t, bin, "-web", "127.0.0.1:0", "-clients", "1")
		deadline := time.Now().Add(limit)
		for !strings.Contains(p.output(), "open the page") {
			require.True(t, time.Now().Before(deadline), p.output())
			time.Sleep(20 * time.Millisecond) // polling another process's output in real time: no clock of ours drives it
		}
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		p.wait(limit)
		assert.Contains(t, p.output(), "arena on the web: closed")
	})
	t.Run("connect, SIGINT", func(t *testing.T) {
		srv := start(t, bin, "-serve", "127.0.0.1:0", "-key", keyPath, "-quiet")
		addr := serverAddr(t, srv.waitLine("arena: serving on udp", limit))
		cl := start(t, bin, "-connect", addr, "-key", keyPath, "-clients", "2", "-duration", "10m")
		cl.waitLine("t=", limit)
		require.NoError(t, cl.cmd.Process.Signal(os.Interrupt))
		cl.wait(limit)
		assert.Contains(t, cl.output(), "left: interrupted")
		assert.Contains(t, cl.output(), "clean: true")
		require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
		srv.wait(limit)
	})
}
