package main

import (
	"os"
	"testing"
)

// skipUnlessLong skips a test of the long tier unless GHOSTWIRE_LONG is 1,
// as .ci/run sets it: the same switch, and the same message, as
// internal/longtest, which tests under examples/ do not import.
func skipUnlessLong(t testing.TB) {
	t.Helper()
	if !longTier() {
		t.Skip("long test: runs with GHOSTWIRE_LONG=1 (.ci/run sets it)")
	}
}

// longTier reports whether the long tier runs.
func longTier() bool { return os.Getenv("GHOSTWIRE_LONG") == "1" }
