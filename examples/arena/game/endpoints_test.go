package game

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestEndpointsValidateAndCapPlayers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TickRate = 5
	_, err := NewEndpoints(cfg, &gw.VirtualTime{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-tick-rate 5")

	cfg = DefaultConfig()
	cfg.Clients, cfg.TickRate, cfg.InterpDelay = 2, 30, 50*time.Millisecond
	g, err := NewEndpoints(cfg, &gw.VirtualTime{})
	require.NoError(t, err)
	for want := range 2 {
		i, o := g.AddPlayer()
		assert.Equal(t, want, i)
		assert.Equal(t, 50*time.Millisecond, o.InterpolationDelay)
		assert.NotNil(t, o.Input, "a bot plays")
		assert.NotNil(t, o.BeforeCorrection)
	}
	i, _ := g.AddPlayer()
	assert.Equal(t, -1, i, "no more players than cfg.Clients")
	assert.Equal(t, 30, g.Game().TickRate)
	assert.NotNil(t, g.Game().OnConnect)
	assert.Len(t, g.Game().Prediction, 5, "collide, move, shove, rockets, ball")
	assert.Equal(t, 2, g.ReportConfig().Clients)
}
