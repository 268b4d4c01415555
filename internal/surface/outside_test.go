package surface_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A game in a module of its own (testdata/outside, copied to a temporary
// directory with a replace to this checkout) builds and runs with what it
// needs of the public API: a schema refusing non-plain data, quantizing
// through the schema, a Game on the harness, its own player on both ends,
// the connection's stats, its history read, the determinism check's
// DesyncError, a FieldDiff's fields, and lag compensation's probe,
// occlusion test and confirmation. The go command refuses an outside
// module's import of internal/, so nothing it does reaches past the
// public API.
func TestAnOutsideModuleUsesEveryCapability(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/outside/main.go")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	gomod := "module example.com/outside\n\ngo 1.26.0\n\n" +
		"require (\n\tgithub.com/ghostwire/ghostwire v0.0.0-00010101000000-000000000000\n\tgithub.com/mlange-42/arche v0.15.3\n)\n\n" +
		"replace github.com/ghostwire/ghostwire => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))

	cmd := exec.Command(goCmd, "run", "-mod=mod", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	got := strings.TrimSpace(string(out))
	assert.Equal(t, strings.Join([]string{
		"plain data refused: true Names",
		"quantized: 0.328125",
		"players found: true true true true true",
		"history read: true true",
		"desync found: true true true true",
		"probe: true true",
		"confirmed: true true",
	}, "\n"), got)
}

// The same program, importing an internal package, is refused by the go
// command: the boundary the test above relies on.
func TestAnOutsideModuleCannotImportInternal(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"),
		[]byte("package main\n\nimport _ \"github.com/ghostwire/ghostwire/internal/codec\"\n\nfunc main() {}\n"), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	gomod := "module example.com/outside\n\ngo 1.26.0\n\nrequire github.com/ghostwire/ghostwire v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/ghostwire/ghostwire => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	cmd := exec.Command(goCmd, "build", "-mod=mod", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "use of internal package github.com/ghostwire/ghostwire/internal/codec not allowed")
}
