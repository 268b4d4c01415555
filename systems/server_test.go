package systems_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
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

	other := newTestGame()
	_, _ = other.schema.AddGhostType("extra", 0)
	conn, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	quiet := systems.ClientOptions{Logger: slog.New(slog.DiscardHandler)}
	wrongSchema, err := systems.NewClient(h.Time, conn, other.schema, quiet)
	require.NoError(t, err)
	conn2, _ := h.Net.Dial("server", transport.Conditions{})
	wrongRate, err := systems.NewClient(h.Time, conn2, g.schema, systems.ClientOptions{TickRate: 30, Logger: quiet.Logger})
	require.NoError(t, err)
	conn3, _ := h.Net.Dial("server", transport.Conditions{})
	tooMany, err := systems.NewClient(h.Time, conn3, g.schema, quiet)
	require.NoError(t, err)
	for i := 0; i < 500; i++ {
		h.Step()
		wrongSchema.Update()
		wrongRate.Update()
		tooMany.Update()
	}
	assert.Equal(t, systems.Connected, h.Clients[0].State())
	for c, reason := range map[*systems.Client]netsync.RejectReason{
		wrongSchema: netsync.RejectSchema, wrongRate: netsync.RejectTickRate, tooMany: netsync.RejectFull,
	} {
		assert.Equal(t, systems.Refused, c.State())
		assert.Equal(t, reason, c.Stats().Reason)
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
	opts.Server.OnDisconnect = func(w *gw.World, conn components.ConnID, owned []ecs.Entity) {
		gone = append(gone, conn)
		for _, e := range owned {
			w.Arche().RemoveEntity(e)
		}
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(2 * time.Second)
	_, ok := h.Clients[0].Ghosts.Lookup(2)
	require.True(t, ok)

	// Client 2 goes silent: its link drops everything from now on.
	h.Clients = h.Clients[:1]
	h.Run(2 * time.Second)
	assert.Equal(t, []components.ConnID{2}, gone)
	assert.Equal(t, 1, h.Server.Stats().Connections)
	assert.Equal(t, uint64(1), h.Server.Stats().Dropped)
	_, ok = h.Clients[0].Ghosts.Lookup(2)
	assert.False(t, ok, "the other client despawned the dropped player's ghost")
	assert.Equal(t, 1, h.Server.Ghosts.Len())
}

func TestServerCountsBadPacketsAndSurvives(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(1, transport.Conditions{}))
	require.NoError(t, err)
	h.Run(500 * time.Millisecond)
	junk, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	for _, p := range [][]byte{{1}, {9, 9, 9}, {netsync.ProtocolVersion, byte(netsync.MsgSnapshot), 1, 2}, {netsync.ProtocolVersion, byte(netsync.MsgHello)}} {
		require.NoError(t, junk.Send(p))
	}
	h.Run(500 * time.Millisecond)
	assert.Equal(t, uint64(4), h.Server.Stats().BadPackets)
	assert.Equal(t, 1, h.Server.Stats().Connections)
	assert.Equal(t, systems.Connected, h.Clients[0].State())
}

func TestServerOptionValidation(t *testing.T) {
	g := newTestGame()
	net := transport.NewMemoryNetwork(&gw.VirtualTime{}, 1)
	l, _ := net.Listen("s")
	_, err := systems.NewServer(&gw.VirtualTime{}, l, g.schema, systems.ServerOptions{})
	require.Error(t, err, "OnConnect is required")
	for _, tc := range []struct {
		opts systems.ServerOptions
		want string
	}{
		{systems.ServerOptions{SendInterval: 100}, "send interval 100"},
		{systems.ServerOptions{MaxClients: -1}, "max clients -1"},
		{systems.ServerOptions{Timeout: time.Millisecond}, "timeout 1ms"},
		{systems.ServerOptions{TickRate: 2000}, "tick rate 2000"},
		{systems.ServerOptions{SnapshotBytes: 10}, "snapshot size 10"},
		{systems.ServerOptions{Inputs: netsync.InputBufferOptions{Capacity: 2}}, "capacity 2"},
	} {
		tc.opts.OnConnect = g.spawn
		_, err := systems.NewServer(&gw.VirtualTime{}, l, g.schema, tc.opts)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestOnConnectErrorRefusesTheClient(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, transport.Conditions{})
	opts.Server.OnConnect = func(*gw.World, components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
		return ecs.Entity{}, 0, errors.New("no spawn point")
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(time.Second)
	assert.Equal(t, systems.Refused, h.Clients[0].State())
	assert.Equal(t, 0, h.Server.Stats().Connections)
}
