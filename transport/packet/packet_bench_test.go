package packet_test

import (
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

const benchPayload = 1000

// bareBaseline returns the cost in ns of n bare memory-link Send+Receive
// pairs of size bytes on a zero-latency link, each answered by a Send+Receive
// of reply bytes the other way when reply > 0: what any packet layer over
// that link costs at least.
func bareBaseline(tb testing.TB, n, size, reply int) float64 {
	clock := &testClock{}
	client, server, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{})
	if err != nil {
		tb.Fatal(err)
	}
	msg, buf := make([]byte, size), make([]byte, transport.MaxDatagramSize)
	exchange := func(from, to transport.Conn, p []byte) {
		if err := from.Send(p); err != nil {
			tb.Fatal(err)
		}
		if _, ok := to.Receive(buf); !ok {
			tb.Fatal("bare datagram lost on a perfect link")
		}
	}
	op := func() {
		exchange(client, server, msg)
		if reply > 0 {
			exchange(server, client, msg[:reply])
		}
	}
	for range 1000 {
		op()
	}
	start := time.Now()
	for range n {
		op()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// BenchmarkBareMemoryLink is the baseline on its own: one bare Send+Receive
// of the payload on a zero-latency memory link.
func BenchmarkBareMemoryLink(b *testing.B) {
	b.ReportAllocs()
	ns := bareBaseline(b, b.N, benchPayload, 0)
	b.ReportMetric(ns, "ns/datagram")
}

// benchPair is a packet.Conn pair on a zero-latency memory link whose
// sender counts acks.
func benchPair(b *testing.B) (clock *testClock, a, peer *packet.Conn, acked *int) {
	clock = &testClock{}
	rawA, rawB, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{})
	if err != nil {
		b.Fatal(err)
	}
	acked = new(int)
	a, err = packet.NewConn(rawA, clock, packet.Options{OnAck: func(packet.Seq) { *acked++ }})
	if err != nil {
		b.Fatal(err)
	}
	peer, err = packet.NewConn(rawB, clock, packet.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return clock, a, peer, acked
}

// roundTrip flushes a, lets peer read and answer with an ack-only packet,
// and lets a read the ack.
func roundTrip(b *testing.B, clock *testClock, a, peer *packet.Conn) {
	if err := a.Flush(); err != nil {
		b.Fatal(err)
	}
	drain(peer, nil)
	if err := peer.Flush(); err != nil {
		b.Fatal(err)
	}
	drain(a, nil)
	clock.Advance(time.Millisecond)
}

// report adds the per-op cost beside the bare baselines (one way, and a
// round trip answered by a 9-byte datagram like the ack-only packet) and
// the size of the packet header.
func report(b *testing.B, bareNs, bareRTNs float64, unit string) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/"+unit)
	b.ReportMetric(bareNs, "bare-ns/datagram")
	b.ReportMetric(bareRTNs, "bare-rt-ns/exchange")
	if bareNs > 0 && bareRTNs > 0 {
		b.ReportMetric(ns/bareNs, "x-bare")
		b.ReportMetric(ns/bareRTNs, "x-bare-rt")
	}
	b.ReportMetric(packet.HeaderSize, "header-bytes")
}

// BenchmarkUnreliable measures one 1,000-byte unreliable message sent,
// received and acknowledged (the peer answers with an ack-only packet),
// beside the bare link carrying the same bytes one way.
func BenchmarkUnreliable(b *testing.B) {
	clock, a, peer, acked := benchPair(b)
	payload := make([]byte, benchPayload)
	op := func() {
		if _, err := a.SendUnreliable(payload); err != nil {
			b.Fatal(err)
		}
		roundTrip(b, clock, a, peer)
	}
	for range 1000 {
		op()
	}
	bareNs := bareBaseline(b, max(b.N, 1000), benchPayload, 0)
	bareRTNs := bareBaseline(b, max(b.N, 1000), benchPayload, packet.HeaderSize)
	before := *acked
	a0 := a.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		op()
	}
	b.StopTimer()
	if *acked-before != b.N {
		b.Fatalf("%d of %d packets acked", *acked-before, b.N)
	}
	report(b, bareNs, bareRTNs, "packet")
	// Bytes on the wire per message beyond the payload: header and entry.
	b.ReportMetric(float64(a.Stats().BytesSent-a0.BytesSent)/float64(b.N)-benchPayload, "overhead-bytes/msg")
}

// BenchmarkReliable measures one 1,000-byte reliable message queued, sent,
// delivered and acknowledged, beside the same bare baseline.
func BenchmarkReliable(b *testing.B) {
	clock, a, peer, _ := benchPair(b)
	payload := make([]byte, benchPayload)
	op := func() {
		if err := a.SendReliable(payload); err != nil {
			b.Fatal(err)
		}
		roundTrip(b, clock, a, peer)
	}
	for range 1000 {
		op()
	}
	bareNs := bareBaseline(b, max(b.N, 1000), benchPayload, 0)
	bareRTNs := bareBaseline(b, max(b.N, 1000), benchPayload, packet.HeaderSize)
	a0, p0 := a.Stats(), peer.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		op()
	}
	b.StopTimer()
	if got := peer.Stats().ReliableDelivered - p0.ReliableDelivered; got != uint64(b.N) {
		b.Fatalf("%d of %d messages delivered", got, b.N)
	}
	report(b, bareNs, bareRTNs, "msg")
	b.ReportMetric(float64(a.Stats().BytesSent-a0.BytesSent)/float64(b.N)-benchPayload, "overhead-bytes/msg")
}

// BenchmarkReliableSmallBatch measures 16 reliable 40-byte messages packed
// into one packet per round trip: the per-message cost when events share a
// datagram.
func BenchmarkReliableSmallBatch(b *testing.B) {
	const batch, size = 16, 40
	clock, a, peer, _ := benchPair(b)
	payload := make([]byte, size)
	op := func() {
		for range batch {
			if err := a.SendReliable(payload); err != nil {
				b.Fatal(err)
			}
		}
		roundTrip(b, clock, a, peer)
	}
	for range 1000 {
		op()
	}
	bareNs := bareBaseline(b, max(b.N, 1000), batch*size, 0)
	a0 := a.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		op()
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N*batch)
	b.ReportMetric(ns, "ns/msg")
	b.ReportMetric(bareNs, "bare-ns/datagram")
	b.ReportMetric(float64(a.Stats().BytesSent-a0.BytesSent)/float64(b.N*batch)-size, "overhead-bytes/msg")
}
