//go:build linux && (amd64 || arm64)

package udp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"syscall"
	"unsafe"
)

// readBatch is how many datagrams one recvmmsg system call takes at most.
const readBatch = 32

// mmsghdr is the kernel's struct mmsghdr: a message header and the
// length received into it.
type mmsghdr struct {
	hdr syscall.Msghdr
	n   uint32
	_   [4]byte
}

// batchReader reads datagrams from a UDP socket readBatch at a time with
// recvmmsg: one system call, and one wake-up of the reading goroutine, for
// as many datagrams as have arrived. Its buffers, headers and address
// storage are allocated once; reading allocates nothing.
type batchReader struct {
	rc    syscall.RawConn
	msgs  [readBatch]mmsghdr
	iovs  [readBatch]syscall.Iovec
	names [readBatch]syscall.RawSockaddrAny
	bufs  [readBatch][readBufferSize]byte
	// n and err are the last call's result, set inside rc.Read's function.
	n   int
	err error
	// recvFn is b.recv, made once: a method value made per call allocates;
	// pollFn is b.recvNow.
	recvFn, pollFn func(fd uintptr) bool
}

// pollable reports whether a batchReader can read without waiting (poll).
const pollable = true

// newBatchReader prepares a reader of conn.
func newBatchReader(conn *net.UDPConn) *batchReader {
	b := &batchReader{}
	b.recvFn, b.pollFn = b.recv, b.recvNow
	b.rc, b.err = conn.SyscallConn() // fails only on a closed socket: read says so
	for i := range b.msgs {
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(readBufferSize)
		b.msgs[i].hdr.Iov = &b.iovs[i]
		b.msgs[i].hdr.Iovlen = 1
		b.msgs[i].hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	}
	return b
}

// read waits for datagrams and hands each to f with its source address; a
// datagram larger than the buffer is handed over cut (and so seen as
// malformed). It returns the socket's error; net.ErrClosed once closed.
func (b *batchReader) read(f func(from netip.AddrPort, p []byte)) error {
	_, err := b.readWith(b.recvFn, f)
	return err
}

// poll is read without waiting: it hands over the datagrams that have
// arrived, up to readBatch, and returns how many (0 when none has).
func (b *batchReader) poll(f func(from netip.AddrPort, p []byte)) (int, error) {
	return b.readWith(b.pollFn, f)
}

func (b *batchReader) readWith(call func(fd uintptr) bool, f func(from netip.AddrPort, p []byte)) (int, error) {
	if b.rc == nil {
		return 0, b.err
	}
	for i := range b.msgs {
		b.msgs[i].hdr.Namelen = uint32(unsafe.Sizeof(b.names[i]))
		b.msgs[i].hdr.Flags = 0
	}
	err := b.rc.Read(call)
	if err == nil {
		err = b.err
	}
	if err != nil {
		return 0, err
	}
	for i := range b.n {
		from, ok := sockaddrPort(&b.names[i])
		if !ok {
			continue // not an IP datagram: nothing a UDP socket receives
		}
		f(from, b.bufs[i][:min(int(b.msgs[i].n), readBufferSize)])
	}
	return b.n, nil
}

// recv makes one recvmmsg call on fd; false asks the poller to wait until
// the socket is readable.
func (b *batchReader) recv(fd uintptr) bool {
	n, _, errno := syscall.Syscall6(syscall.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.msgs[0])), readBatch,
		syscall.MSG_DONTWAIT, 0, 0)
	switch errno {
	case 0:
		b.n, b.err = int(n), nil
		return true
	case syscall.EAGAIN, syscall.EINTR:
		return false
	default:
		b.n, b.err = 0, errno
		return true
	}
}

// recvNow is recv that never waits: nothing to read is a read of none.
func (b *batchReader) recvNow(fd uintptr) bool {
	if !b.recv(fd) {
		b.n, b.err = 0, nil
	}
	return true
}

// sockaddrPort decodes a kernel socket address without allocating.
func sockaddrPort(sa *syscall.RawSockaddrAny) (netip.AddrPort, bool) {
	switch sa.Addr.Family {
	case syscall.AF_INET:
		in := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&in.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(in.Addr), port), true
	case syscall.AF_INET6:
		in := (*syscall.RawSockaddrInet6)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&in.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom16(in.Addr), port), true
	}
	return netip.AddrPort{}, false
}
