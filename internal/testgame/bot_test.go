package testgame

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestBotIsSeededAndLetsGo(t *testing.T) {
	a, b := NewBot(3, 600), NewBot(3, 600)
	for tick := gw.Tick(0); tick < 700; tick++ {
		da, db := a.Input(nil, tick), b.Input(nil, tick)
		require.Equal(t, da, db, "tick %d", tick)
		if tick >= 600 {
			require.Equal(t, Drive{}, da, "tick %d: the bot let go", tick)
		}
	}
	assert.Greater(t, a.Pulls, uint64(0))
	assert.Equal(t, a.Pulls, b.Pulls)
}
