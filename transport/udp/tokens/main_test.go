package tokens_test

import (
	"os"
	"testing"

	"github.com/ghostwire/ghostwire/internal/fuzzing"
)

// TestMain bounds the fuzzer's minimizing, so that go test -fuzz spends
// its time fuzzing (see package fuzzing).
func TestMain(m *testing.M) {
	fuzzing.BoundMinimizing()
	os.Exit(m.Run())
}
