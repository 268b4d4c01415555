package harness_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// Each client's spec names the identity the server reads from its
// connection, whatever was dialled between: a raw connection dialled
// before a client's carries none and does not take the client's.
func TestClientIdentityReachesTheServer(t *testing.T) {
	var b netsync.SchemaBuilder
	player := b.GhostType("player", netsync.Component[Pos](&b))
	schema, err := b.Build()
	require.NoError(t, err)
	h, err := harness.New(harness.Options{Game: &systems.Game{Schema: schema,
		OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap1[Pos](w.Arche())
			return m.New(), player, nil
		}},
		Server:  systems.ServerOptions{ReconnectGrace: time.Second},
		Clients: []harness.ClientSpec{{Identity: "a"}, {}}})
	require.NoError(t, err)
	raw, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	defer raw.Close()
	require.NoError(t, h.AddClient(harness.ClientSpec{Identity: "b"}))
	require.True(t, h.RunUntil(func() bool {
		for _, c := range h.Clients {
			if !c.Connected() {
				return false
			}
		}
		return true
	}, time.Second))
	var got []string
	for _, c := range h.Clients {
		conn, _ := c.Conn()
		st, ok := h.Server.ConnStats(conn)
		require.True(t, ok)
		got = append(got, st.Identity)
	}
	assert.Equal(t, []string{"a", "", "b"}, got)
	assert.Equal(t, 1, h.Server.Stats().Pending, "the raw connection, accepted in its turn, waits for a hello")
}
