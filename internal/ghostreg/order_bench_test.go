package ghostreg

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkCatchUpOrder measures putting a snapshot's candidates in order
// for a client catching up on 10,000 ghosts: the first orderChunk of them
// selected and sorted (what WritePart does for a part that one chunk
// fills), against sorting all 10,000 (the naive way), on the same values
// in the same loop. Each op restores the same shuffled candidates for
// both, so the copy is in both figures.
func BenchmarkCatchUpOrder(b *testing.B) {
	const n = 10000
	src := randomCandidates(rand.New(rand.NewPCG(1, 2)), n)
	work := make([]candidate, n)
	cmpCand := func(x, y candidate) int { return order(&x, &y) }
	var chunk, naive time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		copy(work, src)
		selectFirst(work, orderChunk)
		slices.SortFunc(work[:orderChunk], cmpCand)
		chunk += time.Since(start)
		first := work[0]

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
