package systems_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

func TestServerRefusesMismatchedClients(t *testing.T) {
	g := newTestGame()
	opts := g.options(0, transport.Conditions{})
	opts.Server.MaxClients = 1
	h, err := harness.New(opts)
	require.NoError(t, err)
	require.NoError(t, h.AddClient(harness.ClientSpec{}))

	other := newTestGameWith(func(b *netsync.SchemaBuilder) { b.GhostType("extra", 0) })
	conn, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	quiet := systems.ClientOptions{Logger: slog.New(slog.DiscardHandler)}
	wrongSchema, err := systems.NewClient(h.Time, conn, other.game(), quiet)
	require.NoError(t, err)
	conn2, _ := h.Net.Dial("server", transport.Conditions{})
	slow := g.game()
	slow.TickRate = 30
	wrongRate, err := systems.NewClient(h.Time, conn2, slow, quiet)
	require.NoError(t, err)
	conn3, _ := h.Net.Dial("server", transport.Conditions{})
	tooMany, err := systems.NewClient(h.Time, conn3, g.game(), quiet)
	require.NoError(t, err)
	for i := 0; i < 500; i++ {
		h.Step()
		wrongSchema.Update()
		wrongRate.Update()
		tooMany.Update()
	}
	assert.True(t, h.Clients[0].Connected())
	assert.NoError(t, h.Clients[0].Err())
	for c, want := range map[*systems.Client]struct {
		reason netsync.RejectReason
		err    string
	}{
		wrongSchema: {netsync.RejectSchema, "ghostwire: refused by the server: schema mismatch: ghost types differ"},
		wrongRate:   {netsync.RejectTickRate, "ghostwire: refused by the server: tick rate mismatch: the client's is 30, the server's 60"},
		tooMany:     {netsync.RejectFull, "ghostwire: refused by the server: server full"},
	} {
		assert.True(t, refused(c))
		assert.Equal(t, want.reason, c.Stats().Reason)
		assert.EqualError(t, c.Err(), want.err)
	}
	st := h.Server.Stats()
	assert.Equal(t, uint64(3), st.Refused)
	assert.Equal(t, 1, st.Connections)
}

func TestSilentClientsTimeOutAndTheirGhostsDisappear(t *testing.T) {
	g := newTestGame()
	opts := g.options(2, link(50*time.Millisecond, 0, 0))
	var gone []components.ConnID
	opts.Server.Timeout = time.Second
	opts.Game.OnDisconnect = func(w *gw.World, conn components.ConnID, owned []ecs.Entity) {
		gone = append(gone, conn)
		for _, e := range owned {
			w.Arche().RemoveEntity(e)
		}
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(2 * time.Second)
	_, ok := h.Clients[0].Ghosts().Entity(2)
	require.True(t, ok)

	// Client 2 goes silent: its link drops everything from now on.
	h.Clients = h.Clients[:1]
	h.Run(2 * time.Second)
	assert.Equal(t, []components.ConnID{2}, gone)
	assert.Equal(t, 1, h.Server.Stats().Connections)
	assert.Equal(t, uint64(1), h.Server.Stats().Dropped)
	_, ok = h.Clients[0].Ghosts().Entity(2)
	assert.False(t, ok, "the other client despawned the dropped player's ghost")
	assert.Equal(t, 1, (*ghostreg.ServerRegister)(h.Server.Ghosts()).Len())
}

func TestServerCountsBadPacketsAndSurvives(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(1, transport.Conditions{}))
	require.NoError(t, err)
	h.Run(500 * time.Millisecond)
	junk, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	for _, p := range [][]byte{{1}, {9, 9, 9}, {protocol.ProtocolVersion, byte(protocol.MsgSnapshot), 1, 2}, {protocol.ProtocolVersion, byte(protocol.MsgHello)}} {
		require.NoError(t, junk.Send(p))
	}
	h.Run(500 * time.Millisecond)
	assert.Equal(t, uint64(4), h.Server.Stats().BadPackets)
	assert.Equal(t, 1, h.Server.Stats().Connections)
	assert.True(t, h.Clients[0].Connected())
}

func TestServerOptionValidation(t *testing.T) {
	g := newTestGame()
	net := transport.NewMemoryNetwork(&gw.VirtualTime{}, 1)
	l, _ := net.Listen("s")
	for _, tc := range []struct {
		opts systems.ServerOptions
		want string
	}{
		{systems.ServerOptions{SendInterval: 100}, "send interval 100"},
		{systems.ServerOptions{MaxClients: -1}, "max clients -1"},
		{systems.ServerOptions{MaxPending: 70000}, "max pending connections 70000 outside 1..65536"},
		{systems.ServerOptions{Timeout: time.Millisecond}, "timeout 1ms"},
		{systems.ServerOptions{SnapshotBytes: 10}, "snapshot size 10"},
		{systems.ServerOptions{InputCapacity: 2}, "capacity 2"},
		{systems.ServerOptions{MessageBytesPerSecond: 999}, "message budget 999 bytes per second outside 1000..1000000000 (or 0: the default)"},
		{systems.ServerOptions{BytesPerSecond: 999}, "snapshot budget 999 bytes per second outside 1000..100000000 (or 0: none)"},
		{systems.ServerOptions{Congestion: systems.CongestionOptions{Floor: 999}}, "snapshot budget floor 999 bytes per second outside 1000..100000000 (or 0: the default)"},
		{systems.ServerOptions{MaxRefusedMessages: -1}, "max refused messages -1 outside 1..100000"},
	} {
		_, err := systems.NewServer(&gw.VirtualTime{}, l, g.game(), tc.opts)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// A game that cannot spawn the player (its OnConnect errs, or the ghost
// spawn does) refuses the client with its own reason, not "server full",
// and keeps its error to its own log.
func TestSpawnFailureRefusesTheClient(t *testing.T) {
	g := newTestGame()
	for name, onConnect := range map[string]func(*gw.World, components.ConnID) (ecs.Entity, netsync.GhostTypeID, error){
		"OnConnect errs": func(*gw.World, components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			return ecs.Entity{}, 0, errors.New("no spawn point")
		},
		"unknown ghost type": func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			e, _, err := g.spawn(w, conn)
			return e, 99, err
		},
	} {
		var log bytes.Buffer
		opts := g.options(1, transport.Conditions{})
		opts.Game.OnConnect = onConnect
		opts.Server.Logger = slog.New(slog.NewTextHandler(&log, nil))
		h, err := harness.New(opts)
		require.NoError(t, err)
		h.Run(time.Second)
		c := h.Clients[0]
		assert.True(t, refused(c), name)
		assert.Equal(t, netsync.RejectSpawn, c.Stats().Reason, name)
		assert.EqualError(t, c.Err(), "ghostwire: refused by the server: the game refused the player", name)
		st := h.Server.Stats()
		assert.Equal(t, 0, st.Connections, name)
		assert.Equal(t, uint64(1), st.Refused, "%s: one hello refused, the others reached a closed connection", name)
		assert.Zero(t, st.Accepted, name)
		assert.Zero(t, h.Server.World().Arche().Stats().Entities.Used, "%s: no orphan player", name)
		assert.Contains(t, log.String(), "level=ERROR msg=\"ghostwire: spawning the player failed; connection refused\"", name)
		if name == "OnConnect errs" {
			assert.Contains(t, log.String(), "err=\"no spawn point\"", "the server logs the error")
		}
	}
}

// A connection that never says hello is not kept forever: the server
// closes it after the timeout, as it does a silent player.
func TestConnectionsWithoutHelloTimeOut(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, transport.Conditions{})
	opts.Server.Timeout = time.Second
	h, err := harness.New(opts)
	require.NoError(t, err)
	mute, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	p := newPeer(t, mute, h.Time)
	h.Run(500 * time.Millisecond)
	require.NoError(t, mute.Send([]byte{1}), "still open before the timeout")
	h.Run(time.Second)
	assert.ErrorIs(t, mute.Send([]byte{1}), transport.ErrClosed, "the server closed its end")
	bye, ok := p.receive()
	require.True(t, ok, "told why")
	var m protocol.Reject
	require.NoError(t, protocol.DecodeReject(bye, protocol.MsgDisconnect, &m))
	assert.Equal(t, protocol.RejectTimeout, m.Reason)
	assert.True(t, h.Clients[0].Connected())
	assert.Equal(t, 1, h.Server.Stats().Connections)
}

// The RTT echo in snapshots is the newest client time received, held
// since it arrived: a reordered older batch or a duplicate arriving later
// must not replace it, or the client measures the reorder delay as RTT.
func TestSnapshotsEchoTheNewestClientTime(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(0, transport.Conditions{}))
	require.NoError(t, err)
	raw, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	conn := newPeer(t, raw, h.Time)
	conn.send(protocol.AppendHello(nil, &protocol.Hello{SchemaHash: (*codec.Schema)(g.schema).Hash(), TickRate: 60, ClientTime: 1}))
	h.Run(50 * time.Millisecond)
	require.Equal(t, 1, h.Server.Stats().Connections)

	batch := func(clientTime uint32) []byte {
		tick := h.Server.World().Tick() + 2
		return protocol.AppendInputs(nil, (*codec.Schema)(g.schema), &protocol.InputBatch{ClientTime: clientTime,
			Heads: []components.InputHeader{{Tick: tick}}, Data: make([]byte, (*codec.Schema)(g.schema).InputSize())})
	}
	newest := batch(1000)
	older := batch(900)
	conn.send(newest)
	h.Run(40 * time.Millisecond)
	conn.send(newest)            // a late duplicate
	conn.send(older)             // overtaken on the way
	h.Run(20 * time.Millisecond) // the next snapshot leaves after both arrived

	var last protocol.Snapshot
	for {
		p, ok := conn.receive()
		if !ok {
			break
		}
		if typ, _ := protocol.PeekType(p); typ == protocol.MsgSnapshot {
			require.NoError(t, protocol.DecodeSnapshot(p, (*codec.Schema)(g.schema), &last))
		}
	}
	assert.Equal(t, uint32(1000), last.EchoTime)
	assert.GreaterOrEqual(t, last.Hold, uint16(40), "held since the first arrival, in ms")
}
