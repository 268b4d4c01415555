package transport

import "time"

// inFlight is one scheduled datagram.
type inFlight struct {
	at   time.Duration // delivery time
	seq  uint64        // scheduling order, breaks ties in at
	data []byte        // payload, backed by a buffer from the link's free list
}

// flightQueue is a min-heap of in-flight datagrams ordered by (at, seq), so
// datagrams due at the same instant come out in the order they were
// scheduled. It is hand-written rather than container/heap because heap.Push
// boxes each element in an interface, which would allocate per datagram.
type flightQueue struct {
	items []inFlight
	seq   uint64
}

func (q *flightQueue) len() int { return len(q.items) }

func (q *flightQueue) less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// push schedules data for delivery at at.
func (q *flightQueue) push(at time.Duration, data []byte) {
	q.items = append(q.items, inFlight{at: at, seq: q.seq, data: data})
	q.seq++
	for i := len(q.items) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

// due reports whether the earliest datagram is deliverable at now.
func (q *flightQueue) due(now time.Duration) bool {
	return len(q.items) > 0 && q.items[0].at <= now
}

// pop removes and returns the earliest datagram. The queue must not be empty.
func (q *flightQueue) pop() inFlight {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items[last] = inFlight{} // do not keep the buffer reachable from the spare capacity
	q.items = q.items[:last]
	for i := 0; ; {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < last && q.less(l, smallest) {
			smallest = l
		}
		if r < last && q.less(r, smallest) {
			smallest = r
		}
		if smallest == i {
			break
		}
		q.items[i], q.items[smallest] = q.items[smallest], q.items[i]
		i = smallest
	}
	return top
}
