package ghostreg

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
)

// randomCandidates returns n candidates with few distinct classes and
// priorities, so ties that only the ID breaks are common.
func randomCandidates(rng *rand.Rand, n int) []candidate {
	c := make([]candidate, n)
	for i, id := range rng.Perm(n) {
		c[i] = candidate{
			g:        &serverGhost{id: components.GhostID(id + 1)},
			class:    uint8(rng.IntN(3)),
			priority: float32(rng.IntN(8)) / 4,
		}
	}
	return c
}

// order compares candidates x and y for their place in a snapshot: by
// class, then by priority, highest first, then by ID: the order the
// selections reach without a sort, written out for the tests.
func order(x, y *candidate) int {
	if c := cmp.Compare(x.class, y.class); c != 0 {
		return c
	}
	if c := cmp.Compare(y.priority, x.priority); c != 0 {
		return c
	}
	return cmp.Compare(x.g.id, y.g.id)
}

// before reports whether candidate x goes before y in a snapshot.
func before(x, y *candidate) bool { return order(x, y) < 0 }

func TestOrderIsStrictAndTotal(t *testing.T) {
	g1, g2 := &serverGhost{id: 1}, &serverGhost{id: 2}
	a := candidate{g: g1, class: classOther, priority: 2}
	b := candidate{g: g2, class: classOther, priority: 2}
	require.Negative(t, order(&a, &b), "equal class and priority: lower ID first")
	require.Positive(t, order(&b, &a))
	require.Zero(t, order(&a, &a))
	b.priority = 3
	require.True(t, before(&b, &a), "higher priority first")
	a.class = classSpawn
	require.True(t, before(&a, &b), "spawns before others whatever the priority")
}

// collect writes a candidate per pending ghost and connection every tick:
// it stays 16 bytes, four to a cache line.
func TestCandidateFitsSixteenBytes(t *testing.T) {
	require.Equal(t, uintptr(16), unsafe.Sizeof(candidate{}))
}

// selectTop on candidates in ID order (as collect lists them) selects
// the ones a sort by order puts first, keeps the others in ID order, and
// puts the selected ones in class then ID order.
func TestSelectTopFindsTheCandidatesASortPutsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 10))
	var keys []uint64
	var spill []candidate
	byID := func(x, y candidate) int { return int(x.g.id) - int(y.g.id) }
	byClassID := func(x, y candidate) int {
		if x.class != y.class {
			return int(x.class) - int(y.class)
		}
		return byID(x, y)
	}
	for _, n := range []int{0, 1, 2, 5, 127, 128, 129, 1000, 5000} {
		for _, m := range []int{0, 1, 3, 64, 128, 999, 2000} {
			c := randomCandidates(rng, n)
			slices.SortFunc(c, byID)
			want := slices.Clone(c)
			slices.SortFunc(want, func(x, y candidate) int { return order(&x, &y) })
			keys, spill = selectTop(c, m, keys, spill)
			k := min(m, n)
			sel := slices.Clone(want[:k])
			slices.SortFunc(sel, byClassID)
			require.Equal(t, sel, c[:k], "n=%d m=%d: the first by order, in class then ID order", n, m)
			rest := slices.Clone(want[k:])
			slices.SortFunc(rest, byID)
			require.Equal(t, rest, c[k:], "n=%d m=%d: the others in ID order", n, m)
		}
	}
}

// nthLargest finds the k-th largest of distinct keys whatever their
// order, sorted ones too (its rounds' bound).
func TestNthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 10, 1000} {
		for _, shape := range []string{"random", "ascending", "descending"} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = uint64(i) * 3
			}
			switch shape {
			case "random":
				rng.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			case "descending":
				slices.Reverse(keys)
			}
			for _, k := range []int{0, n / 2, n - 1} {
				work := slices.Clone(keys)
				require.Equal(t, uint64(n-1-k)*3, nthLargest(work, k), "n=%d %s k=%d", n, shape, k)
			}
		}
	}
}
