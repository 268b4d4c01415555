package systems_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/systems"
)

func TestLatchKeepsAPressUntilTakenOnce(t *testing.T) {
	var l systems.Latch
	assert.Equal(t, components.Press(0), l.Take(), "a new latch is released")
	l.Press()
	l.Press() // pressed twice within one tick: still one press
	assert.Equal(t, components.Press(1), l.Take())
	assert.Equal(t, components.Press(0), l.Take(), "taken once")
}

func TestLatchPressFromAnotherGoroutine(t *testing.T) {
	var l systems.Latch
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); l.Press() }()
	wg.Wait()
	assert.True(t, l.Take().Pressed())
}
