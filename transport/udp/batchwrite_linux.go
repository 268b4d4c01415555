//go:build linux && (amd64 || arm64)

package udp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"syscall"
	"unsafe"
)

// sendBatch writes datagrams to a UDP socket with sendmmsg: one system
// call for a whole batch. Its headers and address storage are allocated
// once; writing allocates nothing.
type sendBatch struct {
	rc    syscall.RawConn
	conn  *net.UDPConn
	inet6 bool // an AF_INET6 socket: IPv4 destinations go v4-mapped
	msgs  [MaxSendBatch]mmsghdr
	iovs  [MaxSendBatch]syscall.Iovec
	names [MaxSendBatch]syscall.RawSockaddrInet6 // room for either family
	// from, count and calls are the batch rc.Write's function works on.
	from, count int
	calls       uint64
	err         error
	sendFn      func(fd uintptr) bool
}

// newSendBatch prepares a writer of conn.
func newSendBatch(conn *net.UDPConn) sendBatch {
	s := sendBatch{conn: conn}
	s.rc, s.err = conn.SyscallConn()
	if s.err == nil {
		_ = s.rc.Control(func(fd uintptr) {
			if sa, err := syscall.Getsockname(int(fd)); err == nil {
				_, s.inet6 = sa.(*syscall.SockaddrInet6)
			}
		})
	}
	return s
}

// write sends bufs[i][:lens[i]] to addrs[i] for every i and returns the
// system calls it made. A datagram the kernel refuses (an unreachable
// address, a full buffer after waiting) is skipped: it is lost.
func (s *sendBatch) write(bufs [][maxPacketSize]byte, lens []int, addrs []netip.AddrPort) uint64 {
	if s.sendFn == nil {
		s.sendFn = s.send // once: a method value made per call allocates
	}
	n := 0
	for i, a := range addrs {
		if !s.sockaddr(&s.names[n], a) {
			continue // an IPv6 destination on an IPv4 socket: unreachable
		}
		s.iovs[n].Base = &bufs[i][0]
		s.iovs[n].SetLen(lens[i])
		s.msgs[n].hdr = syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&s.names[n])), Iov: &s.iovs[n], Iovlen: 1}
		if s.inet6 {
			s.msgs[n].hdr.Namelen = syscall.SizeofSockaddrInet6
		} else {
			s.msgs[n].hdr.Namelen = syscall.SizeofSockaddrInet4
		}
		n++
	}
	if s.rc == nil {
		return 0
	}
	s.calls = 0
	for s.from, s.count = 0, n; s.from < s.count; {
		if err := s.rc.Write(s.sendFn); err != nil {
			break // the socket is closed
		}
	}
	return s.calls
}

// send makes one sendmmsg call for the datagrams from s.from on; false
// asks the poller to wait until the socket is writable.
func (s *sendBatch) send(fd uintptr) bool {
	sent, _, errno := syscall.Syscall6(sysSendmmsg, fd, uintptr(unsafe.Pointer(&s.msgs[s.from])), uintptr(s.count-s.from),
		syscall.MSG_DONTWAIT, 0, 0)
	s.calls++
	switch errno {
	case 0:
		s.from += int(sent)
		return true
	case syscall.EAGAIN:
		return false
	case syscall.EINTR:
		return true
	default:
		// The first datagram failed (sendmmsg reports an error only when
		// none was sent): skip it, as a lost packet.
		s.from++
		return true
	}
}

// sockaddr writes a as the socket's kind of address into sa; false when
// the socket cannot reach it.
func (s *sendBatch) sockaddr(sa *syscall.RawSockaddrInet6, a netip.AddrPort) bool {
	addr := a.Addr()
	if !s.inet6 {
		if !addr.Unmap().Is4() {
			return false
		}
		in := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		*in = syscall.RawSockaddrInet4{Family: syscall.AF_INET, Addr: addr.Unmap().As4()}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&in.Port))[:], a.Port())
		return true
	}
	*sa = syscall.RawSockaddrInet6{Family: syscall.AF_INET6, Addr: addr.As16()}
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], a.Port())
	return true
}
