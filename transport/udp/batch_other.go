//go:build !(linux && (amd64 || arm64))

package udp

import (
	"net"
	"net/netip"
)

// readBatch is how many datagrams one read takes at most.
const readBatch = 1

// pollable reports whether a batchReader can read without waiting: not
// here, where a polled Listener or Client still reads on a goroutine.
const pollable = false

// batchReader reads one datagram per system call where recvmmsg is not
// used (see batch_linux.go).
type batchReader struct {
	conn *net.UDPConn
	buf  [readBufferSize]byte
}

func newBatchReader(conn *net.UDPConn) *batchReader { return &batchReader{conn: conn} }

// read waits for one datagram and hands it to f with its source address.
func (b *batchReader) read(f func(from netip.AddrPort, p []byte)) error {
	n, from, err := b.conn.ReadFromUDPAddrPort(b.buf[:])
	if err != nil {
		return err
	}
	f(from, b.buf[:n])
	return nil
}

// poll is never called where pollable is false.
func (b *batchReader) poll(func(from netip.AddrPort, p []byte)) (int, error) {
	panic("udp: poll without recvmmsg")
}
