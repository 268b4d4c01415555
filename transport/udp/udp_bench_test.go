package udp

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

// perPacket reports ns per packet and packets per second on one core, with
// one packet per b.N iteration.
func perPacket(b *testing.B) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/packet")
	b.ReportMetric(1e9/ns, "packets/s/core")
}

// BenchmarkAEADSealOpen1200 is the baseline: the bare AEAD seal and open of
// a 1,200-byte payload with netcode's nonce and associated data sizes.
func BenchmarkAEADSealOpen1200(b *testing.B) {
	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	payload := make([]byte, 1200)
	var nonce [12]byte
	var ad [22]byte
	sealed := make([]byte, 0, maxPacketSize)
	plain := make([]byte, 0, maxPacketSize)
	b.ReportAllocs()
	b.SetBytes(1200)
	for i := 0; b.Loop(); i++ {
		nonce[4] = byte(i)
		sealed = aead.Seal(sealed[:0], nonce[:], payload, ad[:])
		if _, err := aead.Open(plain[:0], nonce[:], sealed, ad[:]); err != nil {
			b.Fatal(err)
		}
	}
	perPacket(b)
}

// loopbackPair returns two UDP sockets on 127.0.0.1.
func loopbackPair(b *testing.B) (*net.UDPConn, *net.UDPConn) {
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(b, err)
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(b, err)
	b.Cleanup(func() { _ = a.Close(); _ = c.Close() })
	return a, c
}

// BenchmarkLoopbackBare1200 is the second baseline: send and receive of
// 1,200 bytes over loopback with no crypto, on one goroutine.
func BenchmarkLoopbackBare1200(b *testing.B) {
	tx, rx := loopbackPair(b)
	to := rx.LocalAddr().(*net.UDPAddr).AddrPort()
	payload := make([]byte, 1200)
	buf := make([]byte, readBufferSize)
	b.ReportAllocs()
	b.SetBytes(1200)
	for b.Loop() {
		if _, err := tx.WriteToUDPAddrPort(payload, to); err != nil {
			b.Fatal(err)
		}
		if _, _, err := rx.ReadFromUDPAddrPort(buf); err != nil {
			b.Fatal(err)
		}
	}
	perPacket(b)
}

// BenchmarkLoopbackPacket1200 is the protocol's per-packet path: seal a
// 1,200-byte payload packet, send it over loopback, receive it, check its
// header and replay window, and open it.
func BenchmarkLoopbackPacket1200(b *testing.B) {
	tx, rx := loopbackPair(b)
	to := rx.LocalAddr().(*net.UDPAddr).AddrPort()
	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	payload := make([]byte, 1200)
	var sendBuf, plain [maxPacketSize]byte
	buf := make([]byte, readBufferSize)
	var sc, rc scratch
	var w replayWindow
	b.ReportAllocs()
	b.SetBytes(1200)
	for seq := uint64(0); b.Loop(); seq++ {
		pkt := sealPacket(sendBuf[:], &sc, aead, vectorProtocol, packetPayload, seq, payload)
		if _, err := tx.WriteToUDPAddrPort(pkt, to); err != nil {
			b.Fatal(err)
		}
		n, _, err := rx.ReadFromUDPAddrPort(buf)
		if err != nil {
			b.Fatal(err)
		}
		typ, s, at, ok := peekHeader(buf[:n])
		if !ok {
			b.Fatal("header")
		}
		if _, res := openPacket(buf[:n], &rc, typ, s, at, aead, vectorProtocol, &w, plain[:]); res != readOK {
			b.Fatal(res)
		}
	}
	perPacket(b)
}

// benchServer returns a server with 64 connected clients at fake addresses,
// its clock origin and the clients.
func benchServer(b *testing.B) (*server, []*fakeClient, []*ServerConn) {
	s, w, t0 := newTestServer(b, func(o *Options) {
		o.ConnRate = Rate{Packets: 1e12, Bytes: 1e15} // charged, never biting
	})
	params := testParams()
	clients := make([]*fakeClient, 64)
	conns := make([]*ServerConn, 64)
	for i := range clients {
		params.ClientID = uint64(i + 1)
		clients[i] = newFakeClient(b, addr(i), params)
		conns[i] = handshake(b, s, w, clients[i], t0)
	}
	return s, clients, conns
}

// BenchmarkServerReceive64 is the server's CPU per received 1,200-byte
// payload with 64 connections: lookup, replay check, open, rate limit,
// queue, and the application's Receive.
func BenchmarkServerReceive64(b *testing.B) {
	s, clients, conns := benchServer(b)
	const perClient = 256 // one replay window's worth, so a pass is all fresh
	pkts := make([][]byte, 0, 64*perClient)
	for range perClient {
		for _, fc := range clients {
			pkts = append(pkts, fc.seal(packetPayload, make([]byte, 1200)))
		}
	}
	buf := make([]byte, 1200)
	before := s.stats
	b.ReportAllocs()
	b.SetBytes(1200)
	for i := 0; b.Loop(); i++ {
		k := i % len(pkts)
		if k == 0 && i > 0 {
			b.StopTimer()
			for _, c := range conns {
				c.replay = replayWindow{} // let the same packets in again
			}
			b.StartTimer()
		}
		s.receive(time.Now(), clients[k%64].addr, pkts[k])
		if _, ok := conns[k%64].Receive(buf); !ok {
			b.Fatal("payload not delivered")
		}
	}
	perPacket(b)
	if s.stats != before {
		b.Fatalf("refusals during the benchmark: %+v", s.stats)
	}
}

// BenchmarkServerSend64 is the server's CPU per sent 1,200-byte payload with
// 64 connections, writer discarded: seal and bookkeeping only.
func BenchmarkServerSend64(b *testing.B) {
	s, clients, conns := benchServer(b)
	s.out = &discardWriter{}
	for i := range conns {
		s.receive(time.Now(), clients[i].addr, clients[i].seal(packetKeepAlive, make([]byte, 8))) // confirm
	}
	payload := make([]byte, 1200)
	b.ReportAllocs()
	b.SetBytes(1200)
	for i := 0; b.Loop(); i++ {
		if err := conns[i%64].Send(payload); err != nil {
			b.Fatal(err)
		}
	}
	perPacket(b)
}

// BenchmarkServerSendSocket64 is BenchmarkServerSend64 through a real UDP
// socket to 64 loopback addresses that do not read (the kernel drops what
// overflows): the syscall included, one per datagram (Options.SendBatch
// zero, as the listener wrote before batching).
func BenchmarkServerSendSocket64(b *testing.B) { benchServerSendSocket(b, 1) }

// BenchmarkServerSendBatched64 is BenchmarkServerSendSocket64 with
// Options.SendBatch 64 and a flush after every round of 64 sends, as
// systems.Server flushes after a tick: one sendmmsg per round.
// writes/packet is the system calls per datagram.
func BenchmarkServerSendBatched64(b *testing.B) { benchServerSendSocket(b, MaxSendBatch) }

func benchServerSendSocket(b *testing.B, batch int) {
	s, clients, conns := benchServer(b)
	tx, sink := loopbackPair(b)
	w := &batchWriter{limit: batch, out: newSendBatch(tx)}
	s.out = w
	port := sink.LocalAddr().(*net.UDPAddr).Port
	for i, c := range conns {
		s.receive(time.Now(), clients[i].addr, clients[i].seal(packetKeepAlive, make([]byte, 8)))
		c.addr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	}
	payload := make([]byte, 1200)
	b.ReportAllocs()
	b.SetBytes(1200)
	for i := 0; b.Loop(); i++ {
		if err := conns[i%64].Send(payload); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			w.flush()
		}
	}
	w.flush()
	perPacket(b)
	writes, written := w.counts()
	b.ReportMetric(float64(writes)/float64(written), "writes/packet")
}
