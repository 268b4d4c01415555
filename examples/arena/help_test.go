package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -h shows every mode and every flag of every mode, grouped, with
// defaults and allowed ranges, whichever mode it is asked in.
func TestHelpShowsEveryModeAndFlag(t *testing.T) {
	var help, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-h"}, &help, &errOut))
	assert.Empty(t, errOut.String(), "help asked for goes to stdout")
	text := help.String()
	for _, s := range []string{
		"arena -serve ADDR -key FILE", "arena -connect ADDR -key FILE", "arena -connect ADDR -tokens URL",
		"arena -genkey FILE", "arena -web ADDR", "SIGINT (Ctrl-C) or SIGTERM",
		"\nHeadless match (the default mode):\n", "\nNetwork server (-serve", "\nNetwork client (-connect",
		"\nWeb (-web", "\nReport and output",
		"-clients N\n    \tnumber of bot clients (1..64) (default 4)",
		"-loss PCT\n    \tpacket loss in percent, each way (0..50) (default 1)",
		"-max-clients N\n    \tclient slots of each room (1..64) (default 64)",
		"-rooms N\n    \trooms this server runs behind its one UDP port, each an arena match waiting for players, named arena-1..arena-N (1..16) (default 1)",
		"-metrics ADDR\n    \tserve /metrics (Prometheus), /healthz and /readyz on this address (host:port; port 0 picks one)\n",
		"-agones\n    \trun as an Agones game server",
		"-grace D\n    \ton SIGTERM, SIGINT or Agones' Shutdown, the drain's time: rooms with players play on until the grace less a sixth, then every client is told the server is closing (1s..1h; at most the pod's terminationGracePeriodSeconds) (default 30s)",
		"-room NAME\n    \tthe room the bots join, named in their tokens (a -serve process's arena-1..arena-N) (default arena-1)",
		"arena -serve ADDR -key FILE -agones [flags]",
		"how long to serve before the drain (0..24h; 0: until SIGINT or SIGTERM) (default 0s)",
		"play before the bots stand still and leave (1s..2h) (default 30s)",
		"number of bots to play against (0..32) (default 4)",
		"-bot-aim perfect|human\n    \thow the bots aim: human (a reaction time, misses: a person can win) or perfect (default human)",
	} {
		assert.Contains(t, text, s)
	}
	// Every flag either mode parses is shown: none is hidden.
	for _, fs := range []*flag.FlagSet{headlessFlags(&headlessArgs{}), networkFlags(&networkArgs{})} {
		fs.VisitAll(func(f *flag.Flag) {
			assert.True(t, strings.Contains(text, "\n  -"+f.Name+" ") || strings.Contains(text, "\n  -"+f.Name+"\n"), "-%s is not in the help", f.Name)
		})
	}

	for _, args := range [][]string{{"-serve", "127.0.0.1:0", "-h"}, {"-help"}, {"-clients", "3", "--help"}} {
		var again bytes.Buffer
		require.NoError(t, run(t.Context(), args, &again, &errOut), args)
		assert.Equal(t, text, again.String(), args)
	}
}

// A flag no mode knows is refused with a pointer to -h, and nothing else
// is printed.
func TestUnknownFlagPointsToHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"-bogus"}, &out, &errOut)
	require.Error(t, err)
	assert.Equal(t, "flag provided but not defined: -bogus (arena -h lists every mode and flag)", err.Error())
	assert.Empty(t, out.String()+errOut.String())
}
