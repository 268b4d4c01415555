package codec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

func TestServerOwnedMarksTheTypesComponents(t *testing.T) {
	var b codec.SchemaBuilder
	pos := wiretest.Component[wiretest.Pos](&b)
	vel := wiretest.Component[wiretest.Vel](&b)
	health := wiretest.Component[wiretest.Health](&b)
	player := b.GhostType("player", pos, vel, health)
	other := b.GhostType("other", health, pos)
	b.ServerOwned(player, health)
	b.ServerOwned(player, health) // twice is once
	s, err := b.Build()
	require.NoError(t, err)
	gt, _ := s.GhostType(player)
	assert.Equal(t, uint32(1<<2), gt.ServerOwned)
	assert.False(t, gt.Owned(0))
	assert.False(t, gt.Owned(1))
	assert.True(t, gt.Owned(2))
	gt, _ = s.GhostType(other)
	assert.Zero(t, gt.ServerOwned, "per ghost type: the other type predicts its Health")

	b.ServerOwned(other, health)
	gt, _ = s.GhostType(other)
	assert.Zero(t, gt.ServerOwned, "a built schema never changes")
}

func TestServerOwnedRefusesAnUnknownTypeOrAComponentNotInIt(t *testing.T) {
	err := buildErr(func(b *codec.SchemaBuilder) {
		b.GhostType("a", wiretest.Component[wiretest.Pos](b))
		b.ServerOwned(1, 0)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "server-owned components of ghost type ID 1 outside 0..0")

	err = buildErr(func(b *codec.SchemaBuilder) {
		pos := wiretest.Component[wiretest.Pos](b)
		health := wiretest.Component[wiretest.Health](b)
		b.ServerOwned(b.GhostType("ball", pos), health)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ghost type "ball": server-owned component wiretest.Health is not one of its components`)

	err = buildErr(func(b *codec.SchemaBuilder) {
		b.ServerOwned(b.GhostType("ball", wiretest.Component[wiretest.Pos](b)), 7)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ghost type "ball": server-owned component ID 7 is not one of its components`)
}

// A client and a server that disagree on what is server-owned would each
// compare what the other does not: the hash refuses them.
func TestServerOwnedIsPartOfTheSchemaHash(t *testing.T) {
	hash := func(owned bool) uint64 {
		var b codec.SchemaBuilder
		pos := wiretest.Component[wiretest.Pos](&b)
		health := wiretest.Component[wiretest.Health](&b)
		player := b.GhostType("player", pos, health)
		if owned {
			b.ServerOwned(player, health)
		}
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash()
	}
	assert.NotEqual(t, hash(false), hash(true))
	assert.Equal(t, hash(true), hash(true))
}
