package ghostreg

import (
	"math"
	"math/bits"
	"slices"
)

// orderChunk is how many candidates one selection puts in order: about
// what one packet holds, so a snapshot part mostly needs one or two.
const orderChunk = 128

// A view with more than rankMin candidates is catching up (a join, a
// resync, a crowded scope): it ranks them rankChunk at a time and goes on
// down that ranking for up to rankReuse more snapshots before it walks
// its pending set again (see View.resume), so a join's per-tick cost is
// a walk every few snapshots, not every one.
const (
	rankMin   = 4 * orderChunk
	rankChunk = 4 * orderChunk
	rankReuse = 4
)

// The snapshot order: candidates go by class (owned ghosts, spawns, the
// others), then by priority, highest first, then by ID. rankKey puts it
// in one integer, and the selections below reach it without a sort.

// rankKey is candidate c's place in the snapshot order as one number,
// higher first: its class, then its priority (a non-negative float's
// bits order as its value), then its position i of n, earlier first.
// Among candidates in ID order it orders as the snapshot order does.
func rankKey(c *candidate, i, n int) uint64 {
	return uint64(classOther-c.class)<<61 | uint64(math.Float32bits(c.priority))<<29 | uint64(n-1-i)
}

// selectTop moves the m candidates of c that go first (see rankKey: by
// class, then priority, then position) to c[:m], keeping the order the
// candidates had among those selected and among the others, then puts
// the selected ones in class order (stably), and returns its scratch
// buffers for the next call. m is clamped to len(c). It costs a few
// passes over c and a selection over their keys, about 2·len(c)
// comparisons of integers, whatever m is: no sort.
func selectTop(c []candidate, m int, keys []uint64, spill []candidate) ([]uint64, []candidate) {
	n := len(c)
	m = min(m, n)
	if m == 0 {
		return keys, spill
	}
	if m < n {
		// keys[:n] in candidate order, keys[n:] the copy the selection
		// reorders.
		keys = slices.Grow(keys[:0], 2*n)[:2*n]
		for i := range c {
			keys[i] = rankKey(&c[i], i, n)
		}
		copy(keys[n:], keys[:n])
		t := nthLargest(keys[n:], m-1)
		spill = spill[:0]
		k := 0
		for i, key := range keys[:n] {
			if key >= t {
				c[k] = c[i]
				k++
			} else {
				spill = append(spill, c[i])
			}
		}
		copy(c[k:], spill)
	}
	// The selected ones by class, stably: the owned, the spawns, the rest.
	var count [classOther + 1]int
	for i := range c[:m] {
		count[c[i].class]++
	}
	if count[c[0].class] == m {
		clear(spill)
		return keys, spill
	}
	spill = append(spill[:0], c[:m]...)
	at := [classOther + 1]int{0, count[classOwned], count[classOwned] + count[classSpawn]}
	for _, x := range spill {
		c[at[x.class]] = x
		at[x.class]++
	}
	clear(spill) // let dead ghosts go
	return keys, spill
}

// nthLargest returns the value that would be at index k of keys sorted
// in descending order (keys distinct), reordering keys: a selection in
// about 2·len(keys) comparisons, with a median of three as pivot, that
// sorts what is left after 2·log2(len) rounds (so no input costs it
// more than len·log2(len)).
func nthLargest(keys []uint64, k int) uint64 {
	lo, hi := 0, len(keys)-1
	for rounds := 2 * bits.Len(uint(len(keys))); lo < hi; rounds-- {
		if rounds == 0 {
			slices.Sort(keys[lo : hi+1])
			return keys[hi-(k-lo)]
		}
		mid := lo + (hi-lo)/2
		if keys[mid] > keys[lo] {
			keys[mid], keys[lo] = keys[lo], keys[mid]
		}
		if keys[hi] > keys[lo] {
			keys[hi], keys[lo] = keys[lo], keys[hi]
		}
		if keys[mid] > keys[hi] {
			keys[mid], keys[hi] = keys[hi], keys[mid]
		}
		// keys[hi] is the median of the three: partition around it,
		// larger ones first.
		p, store := keys[hi], lo
		for i := lo; i < hi; i++ {
			if keys[i] > p {
				keys[i], keys[store] = keys[store], keys[i]
				store++
			}
		}
		keys[store], keys[hi] = keys[hi], keys[store]
		switch {
		case k == store:
			return keys[store]
		case k < store:
			hi = store - 1
		default:
			lo = store + 1
		}
	}
	return keys[k]
}
