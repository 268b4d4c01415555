//go:build !(linux && (amd64 || arm64))

package udp

import (
	"net"
	"net/netip"
)

// sendBatch writes one datagram per system call where sendmmsg is not
// used (see batchwrite_linux.go).
type sendBatch struct{ conn *net.UDPConn }

func newSendBatch(conn *net.UDPConn) sendBatch { return sendBatch{conn: conn} }

// write sends bufs[i][:lens[i]] to addrs[i] for every i and returns the
// system calls it made.
func (s *sendBatch) write(bufs [][maxPacketSize]byte, lens []int, addrs []netip.AddrPort) uint64 {
	for i, a := range addrs {
		_, _ = s.conn.WriteToUDPAddrPort(bufs[i][:lens[i]], a) // a failed write is a lost datagram
	}
	return uint64(len(addrs))
}
