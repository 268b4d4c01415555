package ghostreg

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkCatchUpOrder measures putting a snapshot's candidates in order
// for a client catching up on 10,000 ghosts (listed in ID order, as
// collect lists them): the first orderChunk of them selected by
// selectTop (what writeSelected does for a part that one chunk fills),
// against sorting all 10,000 (the naive way), on the same values in the
// same loop. Each op restores the same candidates for both, so the copy
// is in both figures.
func BenchmarkCatchUpOrder(b *testing.B) {
	const n = 10000
	src := randomCandidates(rand.New(rand.NewPCG(1, 2)), n)
	slices.SortFunc(src, func(x, y candidate) int { return cmp.Compare(x.g.id, y.g.id) }) // as collect lists them
	work := make([]candidate, n)
	var keys []uint64
	var spill []candidate
	cmpCand := func(x, y candidate) int { return order(&x, &y) }
	var chunk, naive time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		copy(work, src)
		keys, spill = selectTop(work, orderChunk, keys, spill)
		chunk += time.Since(start)
		first := slices.MinFunc(work[:orderChunk], cmpCand)

		start = time.Now()
		copy(work, src)
		slices.SortFunc(work, cmpCand)
		naive += time.Since(start)
		if work[0] != first {
			b.Fatal("the selection and the sort disagree on the first candidate")
		}
	}
	ops := float64(b.N)
	b.ReportMetric(float64(chunk.Nanoseconds())/1e3/ops, "us/snapshot")
	b.ReportMetric(float64(naive.Nanoseconds())/1e3/ops, "naive-sort-us/snapshot")
	b.ReportMetric(float64(naive)/float64(chunk), "x-faster")
}
