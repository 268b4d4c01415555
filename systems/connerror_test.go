package systems_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

func TestConnErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  systems.ConnError
		want string
	}{
		{systems.ConnError{Refused: true, Reason: netsync.RejectSchema, Detail: "component game.Position differs"},
			"ghostwire: refused by the server: schema mismatch: component game.Position differs"},
		{systems.ConnError{Refused: true, Reason: netsync.RejectFull}, "ghostwire: refused by the server: server full"},
		{systems.ConnError{Reason: netsync.RejectTimeout}, "ghostwire: disconnected by the server: timeout"},
	} {
		assert.EqualError(t, &tc.err, tc.want)
	}
}

// dialClient connects a client built with schema to the harness's server,
// its logs written to log.
func dialClient(t *testing.T, h *harness.Harness, schema *netsync.Schema, log *bytes.Buffer) *systems.Client {
	t.Helper()
	conn, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	c, err := systems.NewClient(h.Time, conn, &systems.Game{Schema: schema}, systems.ClientOptions{Logger: slog.New(slog.NewTextHandler(log, nil))})
	require.NoError(t, err)
	return c
}

// A client whose schema differs from the server's is told which component
// differs, even when only a quantizer's range does (same types, same
// names), and both sides log it.
func TestSchemaMismatchNamesTheComponent(t *testing.T) {
	g := newTestGame()
	for _, tc := range []struct {
		name   string
		client *testGame
		detail string
	}{
		{"Speed's range", newTestGameWithSpeed(netsync.Range(-2000, 2000, 1.0/64)), "component systems_test.Speed differs"},
		{"Speed's precision", newTestGameWithSpeed(netsync.Range(-1000, 1000, 1.0/128)), "component systems_test.Speed differs"},
		{"one more component", newTestGameWith(func(b *netsync.SchemaBuilder) { netsync.Component[Extra](b) }), "3 components received, 2 declared"},
	} {
		require.NotEqual(t, (*codec.Schema)(g.schema).Hash(), (*codec.Schema)(tc.client.schema).Hash(), tc.name)
		var serverLog, clientLog bytes.Buffer
		opts := g.options(0, transport.Conditions{})
		opts.Server.Logger = slog.New(slog.NewTextHandler(&serverLog, nil))
		h, err := harness.New(opts)
		require.NoError(t, err)
		c := dialClient(t, h, tc.client.schema, &clientLog)
		assert.NoError(t, c.Err(), "%s: no error while connecting", tc.name)
		ok := h.RunUntil(func() bool { c.Update(); return !connecting(c) }, time.Second)
		require.True(t, ok, tc.name)

		assert.True(t, refused(c), tc.name)
		assert.Equal(t, netsync.RejectSchema, c.Stats().Reason, tc.name)
		assert.EqualError(t, c.Err(), "ghostwire: refused by the server: schema mismatch: "+tc.detail, tc.name)
		var ce *systems.ConnError
		require.ErrorAs(t, c.Err(), &ce, tc.name)
		assert.Equal(t, systems.ConnError{Refused: true, Reason: netsync.RejectSchema, Detail: tc.detail}, *ce, tc.name)
		assert.Equal(t, uint64(1), h.Server.Stats().Refused, tc.name)
		assert.Contains(t, serverLog.String(), `level=INFO msg="ghostwire: connection refused" reason="schema mismatch" detail="`+tc.detail+`"`, tc.name)
		assert.Contains(t, clientLog.String(), `level=WARN msg="ghostwire: connection refused" reason="schema mismatch" detail="`+tc.detail+`"`, tc.name)
	}
}

// Extra is a component only some test clients declare.
type Extra struct{ V float32 }

func (e *Extra) Serialize(s *netsync.Stream) { s.Float(&e.V, testQ) }

// After a disconnect Err says why, and keeps saying it.
func TestErrReportsTheDisconnect(t *testing.T) {
	g := newTestGame()
	opts := g.options(0, transport.Conditions{})
	opts.Server.Timeout = time.Second
	h, err := harness.New(opts)
	require.NoError(t, err)
	var log bytes.Buffer
	c := dialClient(t, h, g.schema, &log)
	require.True(t, h.RunUntil(func() bool { c.Update(); return c.Connected() }, time.Second))
	assert.NoError(t, c.Err(), "no error while connected")

	// The client stops sending (it is not updated) until the server drops
	// it; then it reads the server's goodbye.
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Dropped == 1 }, 2*time.Second))
	c.Update()
	assert.True(t, disconnected(c))
	assert.Equal(t, netsync.RejectTimeout, c.Stats().Reason)
	assert.EqualError(t, c.Err(), "ghostwire: disconnected by the server: timeout")
	assert.Contains(t, log.String(), `level=INFO msg="ghostwire: disconnected" reason=timeout`)
	h.Run(time.Second)
	c.Update()
	assert.EqualError(t, c.Err(), "ghostwire: disconnected by the server: timeout")
}

// A hello announcing more component hashes than a schema holds is a bad
// packet: counted, not answered, and the connection may still say a proper
// hello.
func TestServerCountsHostileHellos(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(0, transport.Conditions{}))
	require.NoError(t, err)
	raw, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	conn := newPeer(t, raw, h.Time)
	var w bitstream.Writer
	w.WriteBits(protocol.ProtocolVersion, 8)
	w.WriteBits(uint64(protocol.MsgHello), 8)
	w.WriteBits((*codec.Schema)(g.schema).Hash(), 64)
	w.WriteBits(60, 16)
	w.WriteBits(1, 32)
	w.WriteBits(codec.MaxComponents+1, 8)
	for range codec.MaxComponents + 1 {
		w.WriteBits(0, 64)
	}
	conn.send(w.Bytes())
	h.Run(100 * time.Millisecond)
	st := h.Server.Stats()
	assert.Equal(t, uint64(1), st.BadPackets)
	assert.Zero(t, st.Refused)
	_, ok := conn.receive()
	assert.False(t, ok, "no answer to a bad packet")

	hello := protocol.Hello{SchemaHash: (*codec.Schema)(g.schema).Hash(), TickRate: 60, ClientTime: 2}
	for i := range (*codec.Schema)(g.schema).NumComponents() {
		hello.ComponentHashes = append(hello.ComponentHashes, (*codec.Schema)(g.schema).ComponentHash(codec.ComponentID(i)))
	}
	conn.send(protocol.AppendHello(nil, &hello))
	h.Run(100 * time.Millisecond)
	p, ok := conn.receive()
	require.True(t, ok)
	typ, err := protocol.PeekType(p)
	require.NoError(t, err)
	assert.Equal(t, protocol.MsgWelcome, typ)
	assert.Equal(t, 1, h.Server.Stats().Connections)
}

// A reject whose detail breaks the rules (too long, a terminal escape) is
// a bad packet to the client: counted, and the client keeps connecting.
func TestClientCountsHostileRejects(t *testing.T) {
	g := newTestGame()
	now := &gw.VirtualTime{}
	net := transport.NewMemoryNetwork(now, 1)
	conn, raw, err := net.Pair(transport.Conditions{})
	require.NoError(t, err)
	server := newPeer(t, raw, now)
	var log bytes.Buffer
	c, err := systems.NewClient(now, conn, g.game(), systems.ClientOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	c.Update()
	reject := func(length int, detail string) []byte {
		var w bitstream.Writer
		w.WriteBits(protocol.ProtocolVersion, 8)
		w.WriteBits(uint64(protocol.MsgReject), 8)
		w.WriteBits(uint64(netsync.RejectFull), 8)
		w.WriteBits(uint64(length), 8)
		w.WriteBytes([]byte(detail))
		return w.Bytes()
	}
	long := strings.Repeat("a", protocol.MaxRejectDetail+1)
	server.send(reject(len(long), long))
	server.send(reject(4, "\x1b[2J"))
	now.Advance(time.Millisecond)
	c.Update()
	assert.Equal(t, uint64(2), c.Stats().BadPackets)
	assert.True(t, connecting(c))
	assert.NoError(t, c.Err())

	server.send(reject(protocol.MaxRejectDetail, long[:protocol.MaxRejectDetail]))
	now.Advance(time.Millisecond)
	c.Update()
	assert.True(t, refused(c))
	assert.EqualError(t, c.Err(), "ghostwire: refused by the server: server full: "+long[:protocol.MaxRejectDetail])
}
