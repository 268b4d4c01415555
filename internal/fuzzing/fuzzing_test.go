package fuzzing_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/fuzzing"
)

var minimizeAtStart string

func TestMain(m *testing.M) {
	fuzzing.BoundMinimizing()
	minimizeAtStart = flag.Lookup("test.fuzzminimizetime").Value.String()
	os.Exit(m.Run())
}

// TestBoundMinimizing checks that the bound is in force when the command
// line gives none, and that it leaves a value the command line gave.
func TestBoundMinimizing(t *testing.T) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		assert.Equal(t, fuzzing.MinimizeLimit, minimizeAtStart)
	}
	f := flag.Lookup("test.fuzzminimizetime")
	require.NotNil(t, f)
	old := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(old) })
	require.NoError(t, flag.Set("test.fuzzminimizetime", "5s"))
	fuzzing.BoundMinimizing()
	assert.Equal(t, "5s", f.Value.String(), "a value set on the command line stays")
}

// TestEveryFuzzPackageBoundsMinimizing checks that every package of the
// framework with a fuzz target calls BoundMinimizing from its TestMain, so
// a new target on packets or tokens does not spend its rounds minimizing.
// The examples are left out: they use the public API only, and their one
// target (the web page's link settings, short inputs) ran thousands a
// second unbounded.
func TestEveryFuzzPackageBoundsMinimizing(t *testing.T) {
	root := filepath.Join("..", "..")
	fuzzed := map[string]bool{} // package directory: calls BoundMinimizing
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		src := string(b)
		if strings.Contains(src, "\nfunc Fuzz") {
			fuzzed[dir] = fuzzed[dir] || false
		}
		if strings.Contains(src, "fuzzing.BoundMinimizing()") {
			fuzzed[dir] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, fuzzed)
	for dir, bounded := range fuzzed {
		rel, _ := filepath.Rel(root, dir)
		if rel == filepath.Join("internal", "fuzzing") {
			continue
		}
		assert.True(t, bounded, "%s has fuzz targets but its TestMain does not call fuzzing.BoundMinimizing()", rel)
	}
}
