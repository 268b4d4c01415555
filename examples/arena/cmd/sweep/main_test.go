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
	require.NoError(t, run([]string{"-tick-rates", "20,128", "-links", "0,2", "-clients", "2", "-duration", "2s"}, &out, &errs))
	page := out.String()
	assert.Contains(t, page, "`go run ./examples/arena/cmd/sweep -tick-rates 20,128 -links 0,2 -clients 2 -duration 2s`", "names the command")
	full := strings.Split(strings.TrimSpace(page[strings.Index(page, "## Every match"):]), "\n")
	rows := full[len(full)-4:]
	assert.Contains(t, full[len(full)-6], "interpolation delay")
	assert.Contains(t, rows[0], "| 20 Hz | clean | 2 |")
	assert.Contains(t, rows[3], "| 128 Hz | 200 ms")
	for _, l := range rows {
		assert.Contains(t, l, "yes, ", "every match converged")
	}
	delay := page[strings.Index(page, "## The interpolation delay"):strings.Index(page, "## Every match")]
	assert.Contains(t, delay, "| 20 Hz | clean | 2 | 100 ms | 2.00 |", "the floor of two send intervals")
	assert.NotContains(t, delay, "128 Hz", "the rule's table is at 20, 30 and 60 Hz")
}

func TestSweepRejectsBadLists(t *testing.T) {
	for _, args := range [][]string{{"-tick-rates", "5"}, {"-clients", "0"}, {"-links", "4"}, {"-tick-rates", "20,x"}} {
		var out, errs bytes.Buffer
		err := run(args, &out, &errs)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), args[0], "the error names the flag")
	}
}
