package udp

import (
	"net"
	"net/netip"
	"testing"
)

// benchSend measures sending 1,200-byte datagrams on loopback, 64 a
// round (a tick's snapshots to 64 clients, here one socket), with send
// and then flush; a goroutine drains the receiver, untimed but on the
// other core. It reports the time and the system calls per datagram.
func benchSend(b *testing.B, send func(conn *net.UDPConn, to netip.AddrPort, p []byte), flush func(), calls func() uint64) {
	recv, _ := loopbackSockets(b)
	to := normalize(recv.LocalAddr().(*net.UDPAddr).AddrPort())
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}) // unconnected, as a listener's
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	go func() {
		buf := make([]byte, readBufferSize)
		for {
			if _, err := recv.Read(buf); err != nil {
				return
			}
		}
	}()
	payload := make([]byte, 1200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for range 64 {
			send(conn, to, payload)
		}
		flush()
	}
	n := float64(b.N) * 64
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/datagram")
	b.ReportMetric(float64(calls())/n, "writes/datagram")
}

// BenchmarkSendBatched is the listener with SendBatch 64: sendmmsg, one
// call a round (a call per datagram where the platform lacks it).
func BenchmarkSendBatched(b *testing.B) {
	var w *batchWriter
	benchSend(b, func(conn *net.UDPConn, to netip.AddrPort, p []byte) {
		if w == nil {
			w = &batchWriter{limit: MaxSendBatch, out: newSendBatch(conn)}
		}
		_, _ = w.WriteToUDPAddrPort(p, to)
	}, func() { w.flush() }, func() uint64 { n, _ := w.counts(); return n })
}

// BenchmarkSendOneByOne is the baseline: a system call per datagram, as
// the listener wrote before.
func BenchmarkSendOneByOne(b *testing.B) {
	var n uint64
	benchSend(b, func(conn *net.UDPConn, to netip.AddrPort, p []byte) {
		_, _ = conn.WriteToUDPAddrPort(p, to)
		n++
	}, func() {}, func() uint64 { return n })
}
