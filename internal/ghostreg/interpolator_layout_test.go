package ghostreg

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The fields every visit of a ghost reads sit before g, within two
// 64-byte cache lines: in a client with many moving ghosts, the lines a
// ghost costs a tick are most of what its interpolation costs.
func TestInterpGhostHotFieldsFitTwoCacheLines(t *testing.T) {
	require.LessOrEqual(t, unsafe.Offsetof(interpGhost{}.g), uintptr(128))
}
