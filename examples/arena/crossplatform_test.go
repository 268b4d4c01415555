//go:build !js

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWasmPlaysTheSameMatch builds the arena for GOOS=js GOARCH=wasm, runs
// a seeded match under Node (the Go installation's wasm_exec_node.js, as
// a browser client would run the same code) and the same match natively
// in this process: the reports agree bit for bit outside "wall". The
// browser client predicts with this code, so it must reach the same bits
// as the server it is corrected by. Long tier: the wasm build alone takes
// a minute with a cold build cache.
func TestWasmPlaysTheSameMatch(t *testing.T) {
	skipUnlessLong(t)
	args := []string{"-clients", "4", "-duration", "10s", "-seed", "11", "-loss", "2", "-jitter", "10ms", "-quiet"}
	dir := t.TempDir()

	native := filepath.Join(dir, "native.json")
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), append(args, "-report", native), &out, &errOut), "%s", errOut.String())

	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	node, err := exec.LookPath("node")
	require.NoError(t, err, "Node runs the wasm build")
	goroot, err := exec.Command(goTool, "env", "GOROOT").Output()
	require.NoError(t, err)
	wasm := filepath.Join(dir, "arena.wasm")
	build := exec.Command(goTool, "build", "-o", wasm, ".")
	build.Env = append(build.Environ(), "GOOS=js", "GOARCH=wasm")
	b, err := build.CombinedOutput()
	require.NoError(t, err, "%s", b)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a loaded 2-core machine
	defer cancel()
	js := filepath.Join(dir, "wasm.json")
	runner := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec_node.js")
	cmd := exec.CommandContext(ctx, node, append([]string{runner, wasm}, append(args, "-report", js)...)...)
	b, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)

	want, got := deterministicPart(t, native), deterministicPart(t, js)
	assert.NotEmpty(t, want["clients"])
	assert.Equal(t, want, got)
}

// deterministicPart reads a JSON report without its machine-dependent
// "wall".
func deterministicPart(t *testing.T, file string) map[string]any {
	t.Helper()
	r := readReport(t, file)
	delete(r, "wall")
	return r
}

// TestWasmReplaysTheNativeRecording records a match natively (-record)
// and replays the file in the WebAssembly build under Node (-replay):
// every state hash recorded on this machine is equal there, and the
// reports agree outside the replay's speed. Long tier, as above.
func TestWasmReplaysTheNativeRecording(t *testing.T) {
	skipUnlessLong(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "match.gwr")
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-clients", "8", "-duration", "20s", "-rtt", "150ms", "-loss", "5", "-quiet", "-record", file},
		&out, &errOut), "%s", errOut.String())
	native := filepath.Join(dir, "native.json")
	require.NoError(t, run(t.Context(), []string{"-replay", file, "-report", native}, &out, &errOut), "%s", errOut.String())

	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	node, err := exec.LookPath("node")
	require.NoError(t, err, "Node runs the wasm build")
	goroot, err := exec.Command(goTool, "env", "GOROOT").Output()
	require.NoError(t, err)
	wasm := filepath.Join(dir, "arena.wasm")
	build := exec.Command(goTool, "build", "-o", wasm, ".")
	build.Env = append(build.Environ(), "GOOS=js", "GOARCH=wasm")
	b, err := build.CombinedOutput()
	require.NoError(t, err, "%s", b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	js := filepath.Join(dir, "wasm.json")
	runner := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec_node.js")
	b, err = exec.CommandContext(ctx, node, runner, wasm, "-replay", file, "-report", js).CombinedOutput()
	require.NoError(t, err, "%s", b)
	require.Contains(t, string(b), "every one equal to the recording's")

	want, got := readJSON(t, native), readJSON(t, js)
	delete(want, "ticks_per_second")
	delete(got, "ticks_per_second")
	assert.Positive(t, want["hashes_checked"])
	assert.Equal(t, want, got)
}

// readJSON reads a JSON object from file.
func readJSON(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}
