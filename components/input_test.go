package components_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/components"
)

func TestInputCommandQueries(t *testing.T) {
	c := components.InputCommand{Buttons: 0b101}
	assert.False(t, c.Moving())
	c.MoveY = -0.5
	assert.True(t, c.Moving())
	assert.True(t, c.Pressed(0b001))
	assert.True(t, c.Pressed(0b101))
	assert.False(t, c.Pressed(0b011), "all buttons of the mask must be down")
}
