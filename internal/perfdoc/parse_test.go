package perfdoc

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReadsEveryBenchmarkOfSeveralPackages(t *testing.T) {
	f, err := os.Open("testdata/bench.txt")
	require.NoError(t, err)
	defer f.Close()
	run, err := Parse(f)
	require.NoError(t, err)
	assert.Equal(t, "linux", run.GoOS)
	assert.Equal(t, "amd64", run.GoArch)
	assert.Equal(t, "Oxide Virtual Turin-like Processor", run.CPU)
	require.Len(t, run.Results, 38)

	c, ok := run.Find("BenchmarkCubes")
	require.True(t, ok)
	assert.Equal(t, "github.com/ghostwire/ghostwire/systems/harness", c.Pkg)
	assert.Equal(t, 2, c.Procs)
	assert.EqualValues(t, 600, c.N)
	assert.Equal(t, 0.515, c.Metrics["%-of-naive"])
	assert.Equal(t, 12109440.0, c.Metrics["naive-bits/s-client"])
	assert.Equal(t, 0.0, c.Metrics["allocs/op"])

	r, ok := run.Find("BenchmarkRecordRestore/entities=100000")
	require.True(t, ok)
	assert.Equal(t, "github.com/ghostwire/ghostwire/ecs", r.Pkg)
	assert.Equal(t, 0.7454, r.Metrics["x-copy"])

	a, ok := run.Find("BenchmarkArenaScale")
	require.True(t, ok)
	assert.Equal(t, 4.237, a.Metrics["x-64p/16p"])
	assert.Equal(t, 1084.0, a.Metrics["bytes/client-tick-64p"])

	_, ok = run.Find("BenchmarkNothing")
	assert.False(t, ok)
}

func TestParseRefusesBadLinesAndRepeats(t *testing.T) {
	for name, in := range map[string]string{
		"count":            "BenchmarkX-2 lots 1 ns/op\n",
		"value":            "BenchmarkX-2 10 fast ns/op\n",
		"unpaired":         "BenchmarkX-2 10 1 ns/op 3\n",
		"twice (-count 2)": "BenchmarkX-2 10 1 ns/op\nBenchmarkX-2 10 1 ns/op\n",
	} {
		_, err := Parse(strings.NewReader(in))
		assert.Errorf(t, err, "%s: %q", name, in)
	}
	run, err := Parse(strings.NewReader("BenchmarkY\n    y_test.go:3: a log line\nBenchmarkY 5 2.5 x/op\n"))
	require.NoError(t, err)
	require.Len(t, run.Results, 1, "a name alone is not a result")
	assert.Equal(t, 1, run.Results[0].Procs, "no -GOMAXPROCS suffix")
	assert.Equal(t, 2.5, run.Results[0].Metrics["x/op"])
}
