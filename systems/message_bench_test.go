package systems_test

import (
	"testing"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// BenchmarkSendMessage measures queuing one small unreliable message (a
// 4-byte Loose, 11 bytes with its header): SendToServer (the type's
// lookup, the copy, the rate bucket, encoding, the packet layer) beside
// the packet layer's SendUnreliable of the same 11 bytes. Both run on a
// memory link whose far end reads every 256 messages; the clock moves 2 ms
// a message, within Loose's rate.
func BenchmarkSendMessage(b *testing.B) {
	g := newMessageGame()
	b.Run("SendToServer", func(b *testing.B) {
		now := &gw.VirtualTime{}
		conn, raw, err := transport.NewMemoryNetwork(now, 1).Pair(transport.Conditions{})
		if err != nil {
			b.Fatal(err)
		}
		server := newBenchPeer(b, raw, now)
		c, err := systems.NewClient(now, conn, g.game(), systems.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		c.Update()
		if _, err := server.SendUnreliable(protocol.AppendWelcome(nil, &protocol.Welcome{Conn: 1, ServerTick: 10, TickRate: 60})); err != nil {
			b.Fatal(err)
		}
		_ = server.Flush()
		now.Advance(time.Millisecond)
		c.Update()
		if !c.Connected() {
			b.Fatal("not connected")
		}
		w := c.World()
		m := &Loose{}
		op := func(i int) {
			now.Advance(2 * time.Millisecond)
			m.N = uint32(i & 0xffff)
			if err := systems.SendToServer(w, w.Tick(), m); err != nil {
				b.Fatal(err)
			}
			if i%256 == 255 {
				drainPeer(server)
			}
		}
		for i := range 1000 {
			op(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			op(i)
		}
	})
	b.Run("packet.SendUnreliable", func(b *testing.B) {
		now := &gw.VirtualTime{}
		rawA, rawB, err := transport.NewMemoryNetwork(now, 1).Pair(transport.Conditions{})
		if err != nil {
			b.Fatal(err)
		}
		a, far := newBenchPeer(b, rawA, now), newBenchPeer(b, rawB, now)
		msg := gameMessage(g, idLoose, &Loose{N: 7})
		op := func(i int) {
			now.Advance(2 * time.Millisecond)
			if _, err := a.SendUnreliable(msg); err != nil {
				b.Fatal(err)
			}
			if i%256 == 255 {
				drainPeer(far)
			}
		}
		for i := range 1000 {
			op(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			op(i)
		}
	})
}

func newBenchPeer(b *testing.B, c transport.Conn, clock transport.Clock) *packet.Conn {
	pc, err := packet.NewConn(c, clock, packet.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return pc
}

// drainPeer reads everything that arrived and flushes (the acks).
func drainPeer(pc *packet.Conn) {
	for {
		if _, ok := pc.Receive(); !ok {
			break
		}
	}
	_ = pc.Flush()
}

// BenchmarkMessageRoundTrip measures a small reliable message end to end
// on the harness (zero latency, 1 ms steps): SendToServer from a client,
// its tick's flush, the server's receive and handler, the
// acknowledgement. Each op is one message; every 16th op runs the next
// tick (16 messages a tick, 960 a second). ns/message is the op less the
// same ticks without messages (baseline-ns/op), run before in the same
// benchmark.
func BenchmarkMessageRoundTrip(b *testing.B) {
	g := newMessageGame()
	h, err := harness.New(g.options(1, transport.Conditions{}))
	if err != nil {
		b.Fatal(err)
	}
	c := h.Clients[0]
	if !h.RunUntil(c.Connected, 5*time.Second) {
		b.Fatal("not connected")
	}
	got := 0
	if err := systems.Handle(h.Server.World(), func(_ *gw.World, _ systems.Envelope, m *Ordered) { got++ }); err != nil {
		b.Fatal(err)
	}
	w := c.World()
	m := &Ordered{}
	tick := func() {
		for t := w.Tick(); w.Tick() == t; {
			h.Step()
		}
	}
	op := func(i int, send bool) {
		if send {
			m.N = uint32(i & 0xffff)
			if err := systems.SendToServer(w, w.Tick(), m); err != nil {
				b.Fatal(err)
			}
		}
		if i%16 == 15 {
			tick()
		}
	}
	for i := range 3200 {
		op(i, true)
	}
	// The baseline: the same ticks without a message.
	n := max(b.N, 3200)
	start := time.Now()
	for i := range n {
		op(i, false)
	}
	baseline := float64(time.Since(start).Nanoseconds()) / float64(n)
	h.Run(100 * time.Millisecond)
	got = 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		op(i, true)
	}
	b.StopTimer()
	h.Run(100 * time.Millisecond)
	if got != b.N {
		b.Fatalf("%d of %d messages handled", got, b.N)
	}
	b.ReportMetric(baseline, "baseline-ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)-baseline, "ns/message")
}
