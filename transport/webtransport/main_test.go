package webtransport

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ghostwire/ghostwire/internal/fuzzing"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// session's reader and writer, and every QUIC connection's, must end once
// it is closed. It bounds the fuzzer's minimizing first (see package
// fuzzing).
func TestMain(m *testing.M) {
	fuzzing.BoundMinimizing()
	goleak.VerifyTestMain(m)
}
