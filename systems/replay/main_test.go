package replay

import (
	"os"
	"testing"

	"github.com/ghostwire/ghostwire/internal/fuzzing"
)

func TestMain(m *testing.M) {
	fuzzing.BoundMinimizing()
	os.Exit(m.Run())
}
