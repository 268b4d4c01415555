// Package longtest is the switch between the two tiers of the tests.
//
// Plain `go test ./...` runs the default tier: every test on virtual time
// or bounded by a short real-time exchange, done in about a minute on a
// 2-core machine. The long tier adds the tests that measure the far end
// (70,000 connections, an hour of play), build WebAssembly and run it
// under Node, start real processes or soak; it runs when the environment
// variable GHOSTWIRE_LONG is 1, as .ci/run sets it:
//
//	GHOSTWIRE_LONG=1 go test -count=1 -timeout 60m ./...
//
// Tests under examples/ keep a copy of [Skip] in their own test files
// (they import no internal package).
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long tier on.
const Env = "GHOSTWIRE_LONG"

// Enabled reports whether the long tier runs: GHOSTWIRE_LONG is exactly 1.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips a long test unless the long tier runs; call it first.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skip(Message)
	}
}

// Message is what a skipped long test says.
const Message = "long test: runs with GHOSTWIRE_LONG=1 (.ci/run sets it)"
