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
)

func TestStallPausesOneClientOnly(t *testing.T) {
	var b netsync.SchemaBuilder
	player := b.GhostType("player", netsync.Component[Pos](&b))
	schema, err := b.Build()
	require.NoError(t, err)
	h, err := harness.New(harness.Options{Game: &systems.Game{Schema: schema, OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
		m := generic.NewMap1[Pos](w.Arche())
		return m.New(), player, nil
	}},
		Clients: []harness.ClientSpec{{}, {}}})
	require.NoError(t, err)
	h.Run(time.Second)
	stalled, running := h.Clients[0], h.Clients[1]
	require.True(t, stalled.Connected())
	a, b0 := stalled.Stats().Ticks, running.Stats().Ticks

	h.Stall(0, 500*time.Millisecond)
	h.Run(250 * time.Millisecond)
	assert.True(t, harness.Stalled(h, 0))
	assert.False(t, harness.Stalled(h, 1))
	assert.Equal(t, a, stalled.Stats().Ticks, "no Update while stalled")
	assert.InDelta(t, 15, running.Stats().Ticks-b0, 1, "the others run on")
	h.Run(250 * time.Millisecond)
	assert.False(t, harness.Stalled(h, 0), "over after its duration")
	h.Step()
	assert.Greater(t, stalled.Stats().Ticks, a, "updated again")
}

// OnServerTick is called once per server tick (not per 1 ms step), with
// the wall time of the server's Updates since the previous tick.
func TestOnServerTickTimesEachServerTick(t *testing.T) {
	var b netsync.SchemaBuilder
	player := b.GhostType("player", netsync.Component[Pos](&b))
	schema, err := b.Build()
	require.NoError(t, err)
	var calls int
	var total time.Duration
	h, err := harness.New(harness.Options{Game: &systems.Game{Schema: schema, OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
		m := generic.NewMap1[Pos](w.Arche())
		return m.New(), player, nil
	}},
		Clients:      []harness.ClientSpec{{}},
		OnServerTick: func(d time.Duration) { calls, total = calls+1, total+d },
	})
	require.NoError(t, err)
	h.Run(time.Second)
	assert.EqualValues(t, h.Server.Stats().Ticks, calls, "one call per server tick")
	assert.Positive(t, total)
}
