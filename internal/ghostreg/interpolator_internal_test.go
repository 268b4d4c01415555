package ghostreg

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
)

// The fields every visit of a ghost reads sit before g, within two
// 64-byte cache lines: in a client with many moving ghosts, the lines a
// ghost costs a tick are most of what its interpolation costs.
func TestInterpGhostHotFieldsFitTwoCacheLines(t *testing.T) {
	require.LessOrEqual(t, unsafe.Offsetof(interpGhost{}.g), uintptr(128))
}

// find gives binary search's answer whatever the last one found, for
// IDs in order, out of order, present and absent.
func TestInterpolatorFindFromTheLastFound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 3, 10, 100} {
		ip := &Interpolator{}
		for range n {
			ip.ids = append(ip.ids, components.GhostID(1+rng.IntN(3*n)))
		}
		slices.Sort(ip.ids)
		ip.ids = slices.Compact(ip.ids)
		var queries []components.GhostID
		for id := components.GhostID(0); id <= components.GhostID(3*n+2); id++ {
			queries = append(queries, id) // ascending, as most snapshots list them
		}
		for range 200 {
			queries = append(queries, components.GhostID(rng.IntN(3*n+3)))
		}
		for _, id := range queries {
			wi, wok := slices.BinarySearch(ip.ids, id)
			i, ok := ip.find(id)
			require.Equal(t, wi, i, "find(%d) in %v", id, ip.ids)
			require.Equal(t, wok, ok, "find(%d) in %v", id, ip.ids)
		}
	}
}

// copyValue copies exactly size bytes, whatever the size and alignment.
func TestCopyValue(t *testing.T) {
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i + 1)
	}
	for size := range uintptr(40) {
		for _, off := range []int{0, 1, 4} {
			dst := make([]byte, 64)
			copyValue(unsafe.Pointer(&dst[off]), unsafe.Pointer(&src[off]), size)
			want := make([]byte, 64)
			copy(want[off:off+int(size)], src[off:off+int(size)])
			require.Equal(t, want, dst, "size %d at offset %d", size, off)
		}
	}
}
