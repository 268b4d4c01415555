package udp

import "encoding/binary"

// byteQueue is a bounded FIFO of datagrams in one ring of bytes: each
// datagram is stored as a two-byte length and its bytes. Memory is the
// capacity given at creation; push refuses what does not fit.
type byteQueue struct {
	buf        []byte
	head, used int
}

func newByteQueue(capacity int) byteQueue { return byteQueue{buf: make([]byte, capacity)} }

// push appends p, or reports false when it does not fit.
func (q *byteQueue) push(p []byte) bool {
	if 2+len(p) > len(q.buf)-q.used {
		return false
	}
	var h [2]byte
	binary.LittleEndian.PutUint16(h[:], uint16(len(p)))
	q.write(h[:])
	q.write(p)
	return true
}

func (q *byteQueue) write(p []byte) {
	tail := (q.head + q.used) % len(q.buf)
	n := copy(q.buf[tail:], p)
	copy(q.buf, p[n:])
	q.used += len(p)
}

func (q *byteQueue) read(p []byte) {
	n := copy(p, q.buf[q.head:])
	copy(p[n:], q.buf)
	q.head = (q.head + len(p)) % len(q.buf)
	q.used -= len(p)
}

func (q *byteQueue) skip(n int) {
	q.head = (q.head + n) % len(q.buf)
	q.used -= n
}

// pop removes the oldest datagram. It copies it into buf and returns its
// length and true; a datagram longer than buf is discarded and reported
// with fits false. ok is false when the queue is empty.
func (q *byteQueue) pop(buf []byte) (n int, fits, ok bool) {
	if q.used == 0 {
		return 0, false, false
	}
	var h [2]byte
	q.read(h[:])
	n = int(binary.LittleEndian.Uint16(h[:]))
	if n > len(buf) {
		q.skip(n)
		return n, false, true
	}
	q.read(buf[:n])
	return n, true, true
}

// bytes returns the bytes queued, headers included.
func (q *byteQueue) bytes() int { return q.used }
