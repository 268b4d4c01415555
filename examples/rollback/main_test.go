package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRollbackDemo(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-ticks", "100", "-correct-every", "25", "-rollback", "5"}, &out))
	s := out.String()
	assert.Contains(t, s, "tick 100: corrected tick  95 by +0.25, replayed 5 ticks")
	assert.Contains(t, s, "ticks 100, rollbacks 4, replayed ticks 20, footsteps 100 (one per tick)")
	assert.Contains(t, s, "no desync")
}

func TestRollbackDemoRefusesBadFlags(t *testing.T) {
	var out bytes.Buffer
	assert.EqualError(t, run([]string{"-ticks", "0"}, &out), "-ticks 0: allowed range is 1..100000")
	assert.EqualError(t, run([]string{"-correct-every", "500"}, &out), "-correct-every 500: allowed range is 1..120")
	assert.EqualError(t, run([]string{"-rollback", "61"}, &out), "-rollback 61: allowed range is 1..60")
}
