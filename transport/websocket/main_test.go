package websocket

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// connection's reader and writer must end once it is closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
