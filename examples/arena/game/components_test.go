package game

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/netsync"
)

func mustSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := NewSchema()
	require.NoError(t, err)
	return s
}

// Health's wire form, quantized through the schema as the server does at
// the end of every tick: HP clamps to its range, and a respawn tick near
// 2^32 stays exact (32 bits: it never grows with uptime).
func TestHealthWireFormIsBoundedAndKeepsLateTicks(t *testing.T) {
	s := mustSchema(t)
	h := Health{HP: 30000, Respawn: math.MaxUint32}
	require.NoError(t, netsync.Quantize(s.Schema, &h))
	assert.Equal(t, Health{HP: MaxHP, Respawn: math.MaxUint32}, h)
	h = Health{HP: -30000, Respawn: 7}
	require.NoError(t, netsync.Quantize(s.Schema, &h))
	assert.Equal(t, Health{HP: -MaxHP, Respawn: 7}, h)
}

// A position off the grid lands on the nearest step of coord, and a
// value already on the grid stays as it is.
func TestPositionQuantizesOntoItsGrid(t *testing.T) {
	s := mustSchema(t)
	p := Position{X: 1 - 3.3, Y: 2.25}
	require.NoError(t, netsync.Quantize(s.Schema, &p))
	assert.Equal(t, Position{X: coord.Quantize(1 - 3.3), Y: 2.25}, p)
	again := p
	require.NoError(t, netsync.Quantize(s.Schema, &again))
	assert.Equal(t, p, again, "quantizing is idempotent")
}
