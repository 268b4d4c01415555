package udp

import (
	"net"
	"net/netip"
	"testing"
)

// benchReceive measures receiving 1,200-byte datagrams on loopback, 64
// queued at a time (the sending is not timed), with read; it reports the
// receiving time and the reads (system calls) per datagram.
func benchReceive(b *testing.B, read func(*net.UDPConn, func(netip.AddrPort, []byte)) func() error) {
	recv, send := loopbackSockets(b)
	payload := make([]byte, 1200)
	got, reads := 0, 0
	next := read(recv, func(netip.AddrPort, []byte) { got++ })
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		want := got + 64
		for range 64 {
			_, _ = send.Write(payload)
		}
		b.StartTimer()
		for got < want {
			reads++
			if err := next(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(got), "ns/datagram")
	b.ReportMetric(float64(reads)/float64(got), "reads/datagram")
}

// BenchmarkReceiveBatched is the listener's reading: recvmmsg, up to 32 a
// call (one at a time where the platform lacks it).
func BenchmarkReceiveBatched(b *testing.B) {
	benchReceive(b, func(c *net.UDPConn, f func(netip.AddrPort, []byte)) func() error {
		r := newBatchReader(c)
		return func() error { return r.read(f) }
	})
}

// BenchmarkReceiveOneByOne is the baseline: a system call per datagram,
// as the listener read before.
func BenchmarkReceiveOneByOne(b *testing.B) {
	benchReceive(b, func(c *net.UDPConn, f func(netip.AddrPort, []byte)) func() error {
		buf := make([]byte, readBufferSize)
		return func() error {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err == nil {
				f(from, buf[:n])
			}
			return err
		}
	})
}
