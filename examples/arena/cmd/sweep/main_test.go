package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSweepPrintsOneRowPerMatch(t *testing.T) {
	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"-tick-rates", "20,60", "-links", "0,2", "-clients", "2", "-duration", "2s"}, &out, &errs))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2+4, "header, rule and 2 rates × 2 links")
	assert.Contains(t, lines[0], "interpolation delay")
	assert.Contains(t, lines[2], "| 20 Hz | clean | 2 |")
	assert.Contains(t, lines[5], "| 60 Hz | 200 ms")
	for _, l := range lines[2:] {
		assert.Contains(t, l, "yes, ", "every match converged")
	}
}

func TestSweepRejectsBadLists(t *testing.T) {
	for _, args := range [][]string{{"-tick-rates", "5"}, {"-clients", "0"}, {"-links", "4"}, {"-tick-rates", "20,x"}} {
		var out, errs bytes.Buffer
		err := run(args, &out, &errs)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), args[0], "the error names the flag")
	}
}
