package components_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/components"
)

func TestPressedIsAnyNonZeroValue(t *testing.T) {
	assert.False(t, components.Press(0).Pressed())
	assert.True(t, components.Press(1).Pressed())
	assert.True(t, components.Press(7).Pressed(), "a hand-made record with another non-zero value still counts as pressed")
}
