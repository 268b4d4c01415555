package ghostreg

import "cmp"

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

// order compares candidates x and y for their place in a snapshot: by
// class, then by priority, highest first, then by ID. It is a strict
// total order over distinct ghosts (IDs are unique), so any way of
// reaching it writes the same snapshot.
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

// selectFirst moves the m candidates of c that go first (see before) to
// c[:m], in no particular order, for about len(c) comparisons plus
// log2(m) per candidate that displaces one of them; m is clamped to
// len(c). Sorting all of c would cost len(c)·log2(len(c)) where a
// snapshot sends only what fits in its budget.
func selectFirst(c []candidate, m int) {
	m = min(m, len(c))
	if m == 0 {
		return
	}
	h := c[:m]
	for i := m/2 - 1; i >= 0; i-- {
		siftLast(h, i)
	}
	// h is a heap with the candidate that goes last among h at its root.
	for i := m; i < len(c); i++ {
		if before(&c[i], &h[0]) {
			h[0], c[i] = c[i], h[0]
			siftLast(h, 0)
		}
	}
}

// siftLast restores the heap property below i: every parent goes after
// its children.
func siftLast(h []candidate, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && before(&h[l], &h[r]) {
			j = r
		}
		if !before(&h[i], &h[j]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
