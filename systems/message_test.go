package systems_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// The test game's messages: Blob carries up to 3,000 bytes (more than a
// packet) on the reliable ordered channel, and each of the others a
// number on its channel. Each travels both ways at up to 1,000 a second.
type (
	Blob struct {
		I    uint32
		Data [3000]byte
		N    uint32
	}
	Ordered   struct{ N uint32 }
	Unordered struct{ N uint32 }
	Loose     struct{ N uint32 }
	Latest    struct{ N uint32 }
	// ToServerOnly and ToClientOnly are one way only.
	ToServerOnly struct{ N uint32 }
	ToClientOnly struct{ N uint32 }
)

func (m *Blob) Serialize(s *netsync.Stream) {
	netsync.Int(s, &m.I, 0, 1<<20)
	s.Bytes(m.Data[:], &m.N)
}
func (m *Ordered) Serialize(s *netsync.Stream)      { netsync.Int(s, &m.N, 0, 1<<20) }
func (m *Unordered) Serialize(s *netsync.Stream)    { netsync.Int(s, &m.N, 0, 1<<20) }
func (m *Loose) Serialize(s *netsync.Stream)        { netsync.Int(s, &m.N, 0, 1<<20) }
func (m *Latest) Serialize(s *netsync.Stream)       { netsync.Int(s, &m.N, 0, 1<<20) }
func (m *ToServerOnly) Serialize(s *netsync.Stream) { netsync.Int(s, &m.N, 0, 1<<20) }
func (m *ToClientOnly) Serialize(s *netsync.Stream) { netsync.Int(s, &m.N, 0, 1<<20) }

// newMessageGame is the test game with the test messages.
func newMessageGame() *testGame {
	fast := func(ch netsync.Channel) netsync.MessageRules {
		return netsync.MessageRules{Channel: ch, PerSecond: 1000, Burst: 100}
	}
	return newTestGameWith(func(b *netsync.SchemaBuilder) {
		netsync.Message[Blob](b, fast(netsync.ReliableOrdered))
		netsync.Message[Ordered](b, fast(netsync.ReliableOrdered))
		netsync.Message[Unordered](b, fast(netsync.ReliableUnordered))
		netsync.Message[Loose](b, fast(netsync.Unreliable))
		netsync.Message[Latest](b, fast(netsync.UnreliableSequenced))
		netsync.Message[ToServerOnly](b, netsync.MessageRules{Direction: netsync.ToServer, PerSecond: 5, Burst: 3})
		netsync.Message[ToClientOnly](b, netsync.MessageRules{Direction: netsync.ToClient})
	})
}

// blob returns message i of a test stream: sizes from 0 bytes to three
// fragments, the bytes derived from i.
func blob(i int) *Blob {
	m := &Blob{I: uint32(i), N: uint32(i * 37 % 1200)}
	if i%50 == 49 {
		m.N = 3000 // fragmented
	}
	for j := range m.N {
		m.Data[j] = byte(i + int(j))
	}
	return m
}

// inbox records what one end's handlers received of the test messages,
// in arrival order, as (kind, number) pairs.
type inbox struct {
	got     [5][]int // Blob, Ordered, Unordered, Loose, Latest
	ordered []int    // Blob and Ordered together: Blob i as -1-i
	from    map[components.ConnID]int
	ticks   []gw.Tick // of the Ordered messages
	corrupt int
}

// listen adds the handlers of every test message to the endpoint of w.
func (in *inbox) listen(t *testing.T, w *gw.World) {
	in.from = map[components.ConnID]int{}
	require.NoError(t, systems.Handle(w, func(_ *gw.World, e systems.Envelope, m *Blob) {
		if *m != *blob(int(m.I)) {
			in.corrupt++
		}
		in.got[0] = append(in.got[0], int(m.I))
		in.ordered = append(in.ordered, -1-int(m.I))
		in.from[e.From]++
	}))
	require.NoError(t, systems.Handle(w, func(_ *gw.World, e systems.Envelope, m *Ordered) {
		in.got[1] = append(in.got[1], int(m.N))
		in.ordered = append(in.ordered, int(m.N))
		in.ticks = append(in.ticks, e.Tick)
		in.from[e.From]++
	}))
	require.NoError(t, systems.Handle(w, func(_ *gw.World, e systems.Envelope, m *Unordered) {
		in.got[2] = append(in.got[2], int(m.N))
		in.from[e.From]++
	}))
	require.NoError(t, systems.Handle(w, func(_ *gw.World, e systems.Envelope, m *Loose) {
		in.got[3] = append(in.got[3], int(m.N))
		in.from[e.From]++
	}))
	require.NoError(t, systems.Handle(w, func(_ *gw.World, e systems.Envelope, m *Latest) {
		in.got[4] = append(in.got[4], int(m.N))
		in.from[e.From]++
	}))
}

// sendAll sends message n of every channel with send, and a Blob every
// third n; it returns the ordered stream sent (Blob i as -1-i).
type sender func(tick gw.Tick, m any) error

func sendRound(t *testing.T, send sender, tick gw.Tick, n int, ordered *[]int) {
	t.Helper()
	if n%3 == 0 {
		require.NoError(t, send(tick, blob(n/3)), "blob %d", n/3)
		*ordered = append(*ordered, -1-n/3)
	}
	require.NoError(t, send(tick, &Ordered{N: uint32(n)}))
	*ordered = append(*ordered, n)
	require.NoError(t, send(tick, &Unordered{N: uint32(n)}))
	require.NoError(t, send(tick, &Loose{N: uint32(n)}))
	require.NoError(t, send(tick, &Latest{N: uint32(n)}))
}

// checkChannels asserts each channel's guarantee on what in received of
// total messages per channel, sent in the order wantOrdered.
func checkChannels(t *testing.T, in *inbox, total int, wantOrdered []int) {
	t.Helper()
	all := make([]int, total)
	for i := range all {
		all[i] = i
	}
	assert.Equal(t, wantOrdered, in.ordered, "reliable ordered: each once, in the order sent, across types")
	assert.Zero(t, in.corrupt, "blobs intact")
	un := slices.Clone(in.got[2])
	assert.False(t, slices.IsSorted(un), "unordered: some arrived before an earlier one (nothing held back)")
	slices.Sort(un)
	assert.Equal(t, all, un, "reliable unordered: each once")

	loose := slices.Clone(in.got[3])
	slices.Sort(loose)
	assert.Equal(t, len(loose), len(slices.Compact(loose)), "unreliable: at most once")
	assert.Less(t, len(loose), total, "unreliable: some lost")
	assert.Greater(t, len(loose), total/2)

	latest := in.got[4]
	for i := 1; i < len(latest); i++ {
		require.Greater(t, latest[i], latest[i-1], "unreliable sequenced: never an older one after a newer one (position %d)", i)
	}
	assert.Less(t, len(latest), total, "unreliable sequenced: some lost or overtaken")
	assert.Greater(t, len(latest), total/2)
}

// Every channel keeps its guarantee both ways through 20 % loss,
// duplication and reordering: reliable ordered messages (of two types,
// some fragmented) arrive each once and in the order sent, reliable
// unordered ones each once and not held back, unreliable ones at most
// once, unreliable sequenced ones never older after newer. The handlers
// get each message's sender and tick; honest traffic costs no refusal.
func TestMessageChannelsKeepTheirGuaranteesUnderLoss(t *testing.T) {
	g := newMessageGame()
	lc := transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 15 * time.Millisecond, Loss: 0.2, Duplicate: 0.2, Reorder: 0.2}
	h, conn := connectOne(t, g, transport.Conditions{Up: lc, Down: lc}, nil)
	var atClient, atServer inbox
	atClient.listen(t, h.Clients[0].World())
	atServer.listen(t, h.Server.World())
	sw, cw := h.Server.World(), h.Clients[0].World()
	toClient := func(tick gw.Tick, m any) error {
		switch m := m.(type) {
		case *Blob:
			return systems.SendToClients(sw, systems.ToConn(conn), tick, m)
		case *Ordered:
			return systems.SendToClients(sw, systems.ToAll(), tick, m)
		case *Unordered:
			return systems.SendToClients(sw, systems.ToEach(func(c components.ConnID) bool { return c == conn }), tick, m)
		case *Loose:
			return systems.SendToClients(sw, systems.ToEach(nil), tick, m)
		case *Latest:
			return systems.SendToClients(sw, systems.ToAll(), tick, m)
		}
		panic("not a test message")
	}
	toServer := func(tick gw.Tick, m any) error {
		switch m := m.(type) {
		case *Blob:
			return systems.SendToServer(cw, tick, m)
		case *Ordered:
			return systems.SendToServer(cw, tick, m)
		case *Unordered:
			return systems.SendToServer(cw, tick, m)
		case *Loose:
			return systems.SendToServer(cw, tick, m)
		case *Latest:
			return systems.SendToServer(cw, tick, m)
		}
		panic("not a test message")
	}

	const total = 600
	var down, up []int
	var sentTicks []gw.Tick
	for n := 0; n < total; n++ {
		if n%4 == 0 {
			h.Run(16 * time.Millisecond) // 4 of each a tick: 240 a second
		}
		sendRound(t, toClient, sw.Tick(), n, &down)
		sentTicks = append(sentTicks, cw.Tick())
		sendRound(t, toServer, cw.Tick(), n, &up)
	}
	done := func() bool {
		return len(atClient.ordered) >= len(down) && len(atClient.got[2]) >= total &&
			len(atServer.ordered) >= len(up) && len(atServer.got[2]) >= total
	}
	require.True(t, h.RunUntil(done, time.Minute), "delivered: client %d ordered, %d unordered; server %d, %d",
		len(atClient.ordered), len(atClient.got[2]), len(atServer.ordered), len(atServer.got[2]))
	h.Run(time.Second) // late duplicates would show now

	checkChannels(t, &atClient, total, down)
	checkChannels(t, &atServer, total, up)
	assert.Equal(t, sentTicks, atServer.ticks, "each message's tick arrives with it")
	assert.Equal(t, map[components.ConnID]int{0: len(down) + total + len(atClient.got[3]) + len(atClient.got[4])}, atClient.from,
		"a client's messages are from the server (0)")
	assert.Equal(t, map[components.ConnID]int{conn: len(up) + total + len(atServer.got[3]) + len(atServer.got[4])}, atServer.from)

	cs, ok := h.Server.ConnStats(conn)
	require.True(t, ok)
	assert.Zero(t, cs.Messages.Refused, "an honest client is never refused")
	assert.Equal(t, uint64(len(atServer.ordered)+len(atServer.got[2])+len(atServer.got[3])+len(atServer.got[4])), cs.Messages.Received)
	assert.Equal(t, uint64(len(down)+3*total), cs.Messages.Sent)
	assert.Positive(t, cs.Link.ReliableResent, "losses were made good by resends")
	assert.Positive(t, cs.Link.FragmentsSent, "large messages went as fragments")
	assert.Zero(t, cs.Link.ReliablePending, "everything acknowledged")
	ms := h.Clients[0].Stats().Messages
	assert.Equal(t, uint64(len(up)+3*total), ms.Sent)
	assert.Equal(t, uint64(len(atClient.ordered)+len(atClient.got[2])+len(atClient.got[3])+len(atClient.got[4])), ms.Received)
	assert.Zero(t, ms.Refused)
	assert.Zero(t, ms.Unhandled)
	assert.Equal(t, cs.Messages, h.Server.Stats().Messages, "one connection: the server's counters are its")
	assert.True(t, h.Clients[0].Connected())
}

// What the send and handle functions refuse, each with an error naming
// the cause, and what they count.
func TestMessageSendAndHandleErrors(t *testing.T) {
	g := newMessageGame()
	h, conn := connectOne(t, g, link(20*time.Millisecond, 0, 0), nil)
	sw, cw := h.Server.World(), h.Clients[0].World()
	other := gw.NewWorld(gw.WorldOptions{})

	err := systems.SendToClients(sw, systems.ToConn(conn+1), 1, &Ordered{})
	assert.EqualError(t, err, "systems: no open connection 2")
	assert.EqualError(t, systems.SendToClients(sw, systems.Recipients{}, 1, &Ordered{}), "systems: no open connection 0")
	assert.EqualError(t, systems.SendToClients(cw, systems.ToAll(), 1, &Ordered{}), "systems: SendToClients needs the world of a Server")
	assert.EqualError(t, systems.SendToServer(sw, 1, &Ordered{}), "systems: SendToServer needs the world of a Client")
	assert.EqualError(t, systems.SendToServer(other, 1, &Ordered{}), "systems: SendToServer needs the world of a Client")
	assert.EqualError(t, systems.SendToServer(cw, 1, &Pos{}), "systems: systems_test.Pos is not a message type of the schema (netsync.Message)")
	assert.EqualError(t, systems.SendToServer(cw, 1, &ToClientOnly{}), "systems: message systems_test.ToClientOnly travels to clients only")
	assert.EqualError(t, systems.SendToClients(sw, systems.ToAll(), 1, &ToServerOnly{}), "systems: message systems_test.ToServerOnly travels to the server only")
	tooLong := blob(0)
	tooLong.N = 3001
	require.NoError(t, systems.SendToServer(cw, 1, tooLong), "a length past the buffer is clamped")
	// A type capped below what its description codes refuses a longer value.
	capped := newTestGameWith(func(b *netsync.SchemaBuilder) {
		netsync.Message[Chat](b, netsync.MessageRules{MaxBytes: 10})
	})
	hc, err := harness.New(capped.options(0, transport.Conditions{}))
	require.NoError(t, err)
	long := &Chat{Len: 7}
	assert.EqualError(t, systems.SendToClients(hc.Server.World(), systems.ToAll(), 1, long),
		"systems: message systems_test.Chat of 12 bytes; its MaxBytes is 10")
	long.Len = 5
	assert.NoError(t, systems.SendToClients(hc.Server.World(), systems.ToAll(), 1, long), "4 bytes of From, 7 bits of length and 5 bytes")

	assert.EqualError(t, systems.Handle(other, func(*gw.World, systems.Envelope, *Ordered) {}), "systems: Handle needs the world of a Server or a Client")
	assert.EqualError(t, systems.Handle(cw, func(*gw.World, systems.Envelope, *ToServerOnly) {}), "systems: message systems_test.ToServerOnly travels to the server only")
	assert.EqualError(t, systems.Handle(sw, func(*gw.World, systems.Envelope, *ToClientOnly) {}), "systems: message systems_test.ToClientOnly travels to clients only")
	assert.EqualError(t, systems.Handle[Ordered](sw, nil), "systems: a nil handler for message systems_test.Ordered")
	assert.EqualError(t, systems.Handle(sw, func(*gw.World, systems.Envelope, *Move) {}), "systems: systems_test.Move is not a message type of the schema (netsync.Message)")

	// A client keeps to its rate: 3 at once, then 5 a second.
	var got []uint32
	require.NoError(t, systems.Handle(sw, func(_ *gw.World, _ systems.Envelope, m *ToServerOnly) { got = append(got, m.N) }))
	for i := range 3 {
		require.NoError(t, systems.SendToServer(cw, 1, &ToServerOnly{N: uint32(i)}))
	}
	err = systems.SendToServer(cw, 1, &ToServerOnly{N: 3})
	require.ErrorIs(t, err, systems.ErrMessageRate)
	assert.EqualError(t, err, "systems: message systems_test.ToServerOnly: systems: message rate limit reached (5 a second, bursts of 3)")
	h.Run(200 * time.Millisecond)
	require.NoError(t, systems.SendToServer(cw, 1, &ToServerOnly{N: 4}), "a token back after 200 ms")
	h.Run(100 * time.Millisecond)
	assert.Equal(t, []uint32{0, 1, 2, 4}, got)
	assert.Equal(t, uint64(1), h.Clients[0].Stats().Messages.RateLimited)

	// Two handlers of a type run in order; a type without one is counted.
	var order []string
	require.NoError(t, systems.Handle(cw, func(*gw.World, systems.Envelope, *ToClientOnly) { order = append(order, "first") }))
	require.NoError(t, systems.Handle(cw, func(*gw.World, systems.Envelope, *ToClientOnly) { order = append(order, "second") }))
	require.NoError(t, systems.SendToClients(sw, systems.ToAll(), 1, &ToClientOnly{}))
	require.NoError(t, systems.SendToClients(sw, systems.ToAll(), 1, &Loose{}))
	h.Run(100 * time.Millisecond)
	assert.Equal(t, []string{"first", "second"}, order)
	assert.Equal(t, uint64(1), h.Clients[0].Stats().Messages.Unhandled)

	// A client that is not connected sends nothing.
	h.Clients[0].Close()
	assert.ErrorIs(t, systems.SendToServer(cw, 1, &Ordered{}), systems.ErrNotConnected)
	h.Run(100 * time.Millisecond)
	st := h.Server.Stats()
	require.Zero(t, st.Connections)
	assert.Equal(t, uint64(2), st.Messages.Sent, "the counters of a closed connection stay in the server's")
	assert.Equal(t, uint64(5), st.Messages.Received, "four ToServerOnly and the blob")
	assert.Equal(t, uint64(1), st.Messages.Unhandled, "the blob")
}

// Sending, carrying, receiving and handling messages of every channel,
// both ways, allocates nothing once the buffers have grown: the hot path
// of a game that chats every tick.
func TestMessagesAllocateNothing(t *testing.T) {
	g := newMessageGame()
	h, _ := connectOne(t, g, transport.Conditions{}, nil)
	sw, cw := h.Server.World(), h.Clients[0].World()
	var in, out inbox
	in.listen(t, sw)
	out.listen(t, cw)
	round := func() {
		for n := range 4 {
			must(systems.SendToServer(cw, cw.Tick(), &Ordered{N: uint32(n)}))
			must(systems.SendToServer(cw, cw.Tick(), &Unordered{N: uint32(n)}))
			must(systems.SendToClients(sw, systems.ToAll(), sw.Tick(), &Loose{N: uint32(n)}))
			must(systems.SendToClients(sw, systems.ToAll(), sw.Tick(), &Latest{N: uint32(n)}))
		}
		for t := cw.Tick(); cw.Tick() == t; {
			h.Step()
		}
	}
	// The packet layer's record of each of its 1,024 latest packets grows
	// once to the reliable entries a packet carries.
	for range 1200 {
		round()
	}
	received := len(in.got[1]) + len(out.got[4])
	in.got, out.got = [5][]int{}, [5][]int{}
	in.ordered, out.ordered = make([]int, 0, 4000), nil
	in.ticks = make([]gw.Tick, 0, 4000)
	for i := range in.got {
		in.got[i], out.got[i] = make([]int, 0, 4000), make([]int, 0, 4000)
	}
	assert.Zero(t, testing.AllocsPerRun(200, round))
	assert.Positive(t, received)
	assert.Len(t, in.got[1], 4*201, "every ordered message arrived")
	assert.Len(t, out.got[3], 4*201, "and every unreliable one, on a perfect link")
}
