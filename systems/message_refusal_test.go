package systems_test

import (
	"bytes"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// The wire IDs of the test messages, in newMessageGame's order.
const (
	idBlob codec.MessageID = iota
	idOrdered
	idUnordered
	idLoose
	idLatest
	idToServerOnly
	idToClientOnly
)

// gameMessage returns the packet of message type id's value v, as an
// honest end writes it.
func gameMessage[T any](g *testGame, id codec.MessageID, v *T) []byte {
	var st codec.Stream
	var w bitstream.Writer
	p, _ := protocol.AppendGame(nil, (*codec.Schema)(g.schema), &st, &w, &protocol.GameHeader{ID: id, Tick: 1}, unsafe.Pointer(v))
	return p
}

// rawPeer is a hand-written client: it says hello, then sends what a test
// crafts on the channel it chooses.
type rawPeer struct {
	*peer
	bye []protocol.Reject // the disconnects received
}

func dialRaw(t *testing.T, h *harness.Harness, g *testGame) *rawPeer {
	raw, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	p := &rawPeer{peer: newPeer(t, raw, h.Time)}
	p.send(g.hello())
	return p
}

// pump reads what arrived (the acks, a disconnect) and flushes, so the
// reliable messages go on: call it as an endpoint's Update is called.
func (p *rawPeer) pump() {
	for {
		m, ok := p.receive()
		if !ok {
			break
		}
		if t, err := protocol.PeekType(m); err == nil && t == protocol.MsgDisconnect {
			var r protocol.Reject
			require.NoError(p.t, protocol.DecodeReject(m, t, &r))
			p.bye = append(p.bye, r)
		}
	}
	_ = p.pc.Flush() // closed once the server is gone
}

func (p *rawPeer) reliable(msgs ...[]byte) {
	for _, m := range msgs {
		require.NoError(p.t, p.pc.SendReliable(m))
	}
	require.NoError(p.t, p.pc.Flush())
}

func (p *rawPeer) unreliable(msgs ...[]byte) {
	for _, m := range msgs {
		_, err := p.pc.SendUnreliable(m)
		require.NoError(p.t, err)
	}
	require.NoError(p.t, p.pc.Flush())
}

// A client sending oversized, malformed, unknown and over-rate messages
// has each refused and counted by reason, none reaching a handler, and is
// disconnected with RejectMessages at its 21st refusal (the default
// ServerOptions.MaxRefusedMessages of 20 within 10 s). Two honest clients
// on lossy links, one of them sending at its rate limit all along, lose
// nothing and are never refused.
func TestRefusedMessagesAreCountedAndTheSenderDisconnected(t *testing.T) {
	g := newMessageGame()
	lk := transport.LinkConfig{Latency: 50 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.05, Duplicate: 0.05, Reorder: 0.05}
	h, err := harness.New(g.options(2, transport.Conditions{Up: lk, Down: lk}))
	require.NoError(t, err)
	require.True(t, h.RunUntil(func() bool { return h.Clients[0].Connected() && h.Clients[1].Connected() }, 5*time.Second))
	got := map[components.ConnID][]uint32{}
	limited := map[components.ConnID]int{}
	sw := h.Server.World()
	require.NoError(t, systems.Handle(sw, func(_ *gw.World, e systems.Envelope, m *Ordered) { got[e.From] = append(got[e.From], m.N) }))
	require.NoError(t, systems.Handle(sw, func(_ *gw.World, e systems.Envelope, m *Blob) { got[e.From] = append(got[e.From], 1e6) }))
	require.NoError(t, systems.Handle(sw, func(_ *gw.World, e systems.Envelope, _ *ToServerOnly) { limited[e.From]++ }))
	var bad *rawPeer
	honest := func(d time.Duration) {
		end := h.Time.Now() + d
		for h.Time.Now() < end {
			if bad != nil {
				bad.pump()
			}
			for i, c := range h.Clients {
				require.NoError(t, systems.SendToServer(c.World(), c.World().Tick(), &Ordered{N: uint32(c.World().Tick())}))
				if i == 1 {
					// At its limit: as many as its own bucket lets through.
					if err := systems.SendToServer(c.World(), 0, &ToServerOnly{}); !errors.Is(err, systems.ErrMessageRate) {
						require.NoError(t, err)
					}
				}
			}
			h.Run(50 * time.Millisecond)
		}
	}
	honest(time.Second)

	bad = dialRaw(t, h, g)
	honest(100 * time.Millisecond)
	require.Equal(t, 3, h.Server.Stats().Connections)
	conn := h.Server.Conns()[2]
	refused := func() systems.MessageRefusals {
		cs, ok := h.Server.ConnStats(conn)
		require.True(t, ok)
		return cs.Messages.Refused
	}

	ordered := gameMessage(g, idOrdered, &Ordered{N: 5})
	bad.reliable(append(bytes.Clone(ordered), make([]byte, 100)...))
	bad.unreliable(append(gameMessage(g, idLoose, &Loose{}), make([]byte, 10)...))
	bad.reliable(append(gameMessage(g, idBlob, &Blob{N: 3000}), 1))
	honest(100 * time.Millisecond)
	assert.Equal(t, systems.MessageRefusals{Oversized: 3}, refused(), "longer than MaxBytes: 3, 3 and 3,005 bytes")

	outOfRange := bytes.Clone(ordered)
	copy(outOfRange[7:], []byte{0xff, 0xff, 0x1f}) // 2^21-1 in a field of 0..2^20
	trailing := append(gameMessage(g, idBlob, &Blob{}), 0)
	bad.reliable(outOfRange, trailing, ordered[:5])
	bad.unreliable(ordered) // an ordered type on the unreliable channel
	bad.reliable(gameMessage(g, idLatest, &Latest{}))
	honest(100 * time.Millisecond)
	assert.Equal(t, systems.MessageRefusals{Oversized: 3, Malformed: 5}, refused())

	unknown := bytes.Clone(ordered)
	unknown[2] = 7 // one past the last type
	far := bytes.Clone(ordered)
	far[2] = 200
	bad.reliable(unknown, far, gameMessage(g, idToClientOnly, &ToClientOnly{}), gameMessage(g, idToClientOnly, &ToClientOnly{}))
	honest(100 * time.Millisecond)
	assert.Equal(t, systems.MessageRefusals{Oversized: 3, Malformed: 5, Unknown: 4}, refused())
	assert.Empty(t, got[conn], "no refused message reached a handler")

	// ToServerOnly: 5 a second, bursts of 3; the server allows a second
	// more (3 + 5). 20 at once: 8 pass, then 12 over rate, but the 9th
	// refusal from here is the connection's 21st.
	over := gameMessage(g, idToServerOnly, &ToServerOnly{})
	for range 20 {
		require.NoError(t, bad.pc.SendReliable(over))
	}
	require.NoError(t, bad.pc.Flush())
	honest(100 * time.Millisecond)
	st := h.Server.Stats()
	require.Equal(t, 2, st.Connections, "the sender is gone")
	assert.Equal(t, uint64(1), st.MessageDrops)
	assert.Equal(t, systems.MessageRefusals{Oversized: 3, Malformed: 5, Unknown: 4, OverRate: 9}, st.Messages.Refused,
		"the 21st refusal ended it: the rest was never read")
	assert.Equal(t, 8, limited[conn], "the 8 within its rate reached the game")
	require.NotEmpty(t, bad.bye, "told why")
	assert.Equal(t, protocol.Reject{Reason: protocol.RejectMessages,
		Detail: "21 refused: 3 oversized, 5 malformed, 4 unknown, 9 over rate"}, bad.bye[0])

	// The honest clients lost nothing and were refused nothing.
	honest(time.Second)
	h.Run(time.Second)
	for i, c := range h.Clients {
		assert.True(t, c.Connected(), "client %d", i)
		id, _ := c.Conn()
		cs, ok := h.Server.ConnStats(id)
		require.True(t, ok)
		assert.Zero(t, cs.Messages.Refused, "client %d", i)
		ms := c.Stats().Messages
		assert.Equal(t, ms.Sent, cs.Messages.Received, "client %d: every message arrived", i)
		assert.Equal(t, int(ms.Sent), len(got[id])+limited[id], "client %d: and reached a handler", i)
		if i == 1 {
			assert.Positive(t, ms.RateLimited, "client 1 kept to its limit")
			assert.Greater(t, limited[id], 10)
		}
	}
}

// A client refuses what the server should never send it (unknown types,
// fields that do not decode, more than a type's MaxBytes), counted by
// reason, and stays connected; the good message among them reaches its
// handler.
func TestAClientRefusesBadMessages(t *testing.T) {
	g := newMessageGame()
	now := &gw.VirtualTime{}
	net := transport.NewMemoryNetwork(now, 1)
	conn, raw, err := net.Pair(transport.Conditions{})
	require.NoError(t, err)
	server := newPeer(t, raw, now)
	c, err := systems.NewClient(now, conn, g.game(), systems.ClientOptions{})
	require.NoError(t, err)
	var got []uint32
	require.NoError(t, systems.Handle(c.World(), func(_ *gw.World, _ systems.Envelope, m *ToClientOnly) { got = append(got, m.N) }))
	c.Update()
	server.send(protocol.AppendWelcome(nil, &protocol.Welcome{Conn: 1, ServerTick: 10, TickRate: 60}))
	now.Advance(time.Millisecond)
	c.Update()
	require.True(t, c.Connected())

	good := gameMessage(g, idToClientOnly, &ToClientOnly{N: 42})
	toServer := gameMessage(g, idToServerOnly, &ToServerOnly{})
	outOfRange := bytes.Clone(good)
	copy(outOfRange[7:], []byte{0xff, 0xff, 0x1f})
	for _, m := range [][]byte{toServer, outOfRange, append(bytes.Clone(good), 0, 0, 0), good} {
		require.NoError(t, server.pc.SendReliable(m))
	}
	require.NoError(t, server.pc.Flush())
	now.Advance(time.Millisecond)
	c.Update()
	assert.Equal(t, []uint32{42}, got)
	ms := c.Stats().Messages
	assert.Equal(t, systems.MessageRefusals{Unknown: 1, Malformed: 1, Oversized: 1}, ms.Refused)
	assert.Equal(t, uint64(1), ms.Received)
	assert.True(t, c.Connected())
	assert.Equal(t, netsync.RejectReason(0), c.Stats().Reason)
}
