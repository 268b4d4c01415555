package udp

import (
	"net/netip"
	"sync"
)

// MaxSendBatch is the largest Options.SendBatch: the datagrams a Listener
// queues before it writes them with one system call.
const MaxSendBatch = 64

// batchWriter queues sealed datagrams and writes them limit at a time,
// with one sendmmsg where the platform has it (sendBatch). Its buffers
// are allocated once; queueing and writing allocate nothing. It is the
// innermost lock: it is taken under the server's and a connection's.
type batchWriter struct {
	mu    sync.Mutex
	limit int
	n     int
	addrs [MaxSendBatch]netip.AddrPort
	lens  [MaxSendBatch]int
	bufs  [MaxSendBatch][maxPacketSize]byte
	out   sendBatch
	// writes counts the system calls that wrote, written the datagrams
	// they took.
	writes, written uint64
}

// WriteToUDPAddrPort queues a copy of b for addr, writing the batch when
// it is full. It never fails: a datagram the socket refuses is lost, as
// on any UDP path.
func (w *batchWriter) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addrs[w.n], w.lens[w.n] = addr, copy(w.bufs[w.n][:], b)
	w.n++
	if w.n == w.limit {
		w.flushLocked()
	}
	return len(b), nil
}

// flush writes every queued datagram.
func (w *batchWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

func (w *batchWriter) flushLocked() {
	if w.n == 0 {
		return
	}
	w.writes += w.out.write(w.bufs[:w.n], w.lens[:w.n], w.addrs[:w.n])
	w.written += uint64(w.n)
	w.n = 0
}

// counts returns the system calls that wrote and the datagrams written.
func (w *batchWriter) counts() (writes, written uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.written
}
