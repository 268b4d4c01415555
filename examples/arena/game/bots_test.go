package game

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// A bot asked for input before its own player exists (or after it is gone)
// moves by its mode but neither panics nor fires; with a living player and
// a visible target it fires, and the world is not left locked either way.
func TestBotSamplesWithoutOwnPlayer(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	bot := NewBot(7, &gw.VirtualTime{}, time.Hour)
	var cmd Command
	require.NotPanics(t, func() { cmd = bot.Input(w, 1) })
	assert.False(t, cmd.Fire.Pressed(), "no own player: nothing to fire with")
	assert.False(t, w.Arche().IsLocked(), "the bot left a query open")

	own := generic.NewMap4[Position, Health, components.Predicted, Command](w.Arche())
	own.NewWith(&Position{}, &Health{HP: MaxHP}, &components.Predicted{}, &Command{})
	other := generic.NewMap3[Position, Health, components.Interpolated](w.Arche())
	other.NewWith(&Position{X: 2}, &Health{HP: MaxHP}, &components.Interpolated{})
	require.NotPanics(t, func() { cmd = bot.Input(w, 2) })
	assert.True(t, cmd.Fire.Pressed(), "a living player with a target in view fires")
	assert.False(t, w.Arche().IsLocked())
}
