package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/game"
)

func TestBadFlagValuesAreRefusedByName(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-clients", "0"}, "-clients 0: allowed range is 1..64"},
		{[]string{"-clients", "100"}, "-clients 100"},
		{[]string{"-duration", "0s"}, "-duration 0s"},
		{[]string{"-tick-rate", "1000"}, "-tick-rate 1000"},
		{[]string{"-rtt", "5s"}, "-rtt 5s"},
		{[]string{"-loss", "80"}, "-loss 80"},
		{[]string{"-loss", "lots"}, `invalid value "lots" for flag -loss`},
		{[]string{"-dup", "-3"}, "-dup -3"},
		{[]string{"-reorder", "51"}, "-reorder 51"},
		{[]string{"-rollback", "sometimes"}, `invalid value "sometimes" for flag -rollback: "sometimes": allowed values are mismatch|always`},
		{[]string{"-lagcomp", "maybe"}, `invalid value "maybe" for flag -lagcomp: "maybe": allowed values are on|off`},
		{[]string{"-max-rewind", "5s"}, "-max-rewind 5s: allowed range is one tick..2s"},
		{[]string{"-interp-delay", "-1ms"}, "-interp-delay -1ms"},
		{[]string{"-input-delay", "31"}, `invalid value "31" for flag -input-delay: "31" is not an input delay (0..30 ticks, or auto)`},
		{[]string{"-input-delay", "soon"}, `"soon" is not an input delay (0..30 ticks, or auto)`},
		{[]string{"-crates", "20000"}, "-crates 20000: allowed range is 0..10000"},
		{[]string{"-bot-aim", "sloppy"}, `invalid value "sloppy" for flag -bot-aim: "sloppy": allowed values are perfect|human`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), tc.args, &out, &errOut)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestArenaWritesItsReport(t *testing.T) {
	file := filepath.Join(t.TempDir(), "report.json")
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-clients", "3", "-duration", "5s", "-seed", "4", "-report", file}, &out, &errOut))
	assert.Contains(t, out.String(), "t=   1s")
	assert.Contains(t, out.String(), "converged: true")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var r map[string]any
	require.NoError(t, json.Unmarshal(b, &r))
	for _, key := range []string{"config", "server", "clients", "converged", "wall"} {
		assert.Contains(t, r, key)
	}
	server := r["server"].(map[string]any)
	for _, key := range []string{"ticks", "inputs_applied", "inputs_missing", "inputs_late", "inputs_rejected", "bytes_sent", "bytes_received"} {
		assert.Contains(t, server, key)
	}
	clients := r["clients"].([]any)
	require.Len(t, clients, 3)
	for _, key := range []string{"id", "ticks", "mispredictions", "rollbacks", "replayed_ticks", "max_correction", "final_error",
		"footsteps", "moving_inputs", "rtt_ms", "ahead_ticks", "input_delay_ticks", "bytes_down_per_s", "bytes_up_per_s",
		"interp_delay_ms", "extrapolated_ticks", "max_remote_step", "shots_fired"} {
		assert.Contains(t, clients[0], key)
	}
	shots := server["shots"].(map[string]any)
	for _, key := range []string{"fired", "hits", "verdicts"} {
		assert.Contains(t, shots, key)
	}
	verdicts := shots["verdicts"].(map[string]any)
	for _, key := range []string{"hit", "outside_window", "occluded", "fire_rate", "origin_mismatch", "not_visible", "no_target"} {
		assert.Contains(t, verdicts, key)
	}
	assert.Equal(t, true, r["converged"])

	var quiet bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-clients", "2", "-duration", "2s", "-quiet", "-lagcomp", "off", "-max-rewind", "250ms", "-interp-delay", "80ms"}, &quiet, &errOut))
	assert.Contains(t, quiet.String(), "lagcomp off (250ms)")
	assert.NotContains(t, quiet.String(), "t=   1s")
}

// The headless match's bots aim perfectly unless -bot-aim human; the web
// page's aim like people unless -bot-aim perfect.
func TestBotAimDefaultsByMode(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		headless      string
		webPerfectAim bool
	}{
		{nil, game.AimPerfect, false},
		{[]string{"-bot-aim", "human"}, game.AimHuman, false},
		{[]string{"-bot-aim", "perfect"}, game.AimPerfect, true},
	} {
		var a headlessArgs
		fs := headlessFlags(&a)
		require.NoError(t, fs.Parse(tc.args))
		assert.Equal(t, tc.headless, a.cfg.BotAim, tc.args)
		assert.Equal(t, tc.webPerfectAim, webOptions(fs, a.cfg, &a, nil).PerfectAim, tc.args)
	}
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-clients", "2", "-duration", "2s", "-quiet", "-bot-aim", "human"}, &out, &bytes.Buffer{}))
	assert.Contains(t, out.String(), "bot aim human")
}
