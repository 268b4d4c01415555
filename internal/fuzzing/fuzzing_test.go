package fuzzing_test

import (
	"flag"
	"os"
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
