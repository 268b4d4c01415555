package codec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

func TestPredictSetsTheGhostTypesMode(t *testing.T) {
	var b codec.SchemaBuilder
	pos := wiretest.Component[wiretest.Pos](&b)
	player := b.GhostType("player", pos)
	platform := b.GhostType("platform", pos)
	spectator := b.GhostType("spectator", pos)
	b.Predict(platform, codec.PredictAll)
	b.Predict(spectator, codec.PredictAll)
	b.Predict(spectator, codec.PredictNone) // the last call wins
	s, err := b.Build()
	require.NoError(t, err)
	for id, want := range map[codec.GhostTypeID]codec.PredictionMode{
		player: codec.PredictOwner, platform: codec.PredictAll, spectator: codec.PredictNone,
	} {
		gt, ok := s.GhostType(id)
		require.True(t, ok)
		assert.Equal(t, want, gt.Mode, gt.Name)
	}

	b.Predict(player, codec.PredictAll)
	gt, _ := s.GhostType(player)
	assert.Equal(t, codec.PredictOwner, gt.Mode, "a built schema never changes")
}

func TestPredictRefusesAnUnknownTypeOrMode(t *testing.T) {
	err := buildErr(func(b *codec.SchemaBuilder) {
		b.GhostType("a", wiretest.Component[wiretest.Pos](b))
		b.Predict(1, codec.PredictAll)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ghost type ID 1 outside 0..0")

	err = buildErr(func(b *codec.SchemaBuilder) {
		b.Predict(b.GhostType("ball", wiretest.Component[wiretest.Pos](b)), codec.PredictNone+1)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ghost type "ball": prediction mode 3 outside 0..2`)
}

func TestPredictionModeIsPartOfTheSchemaHash(t *testing.T) {
	hash := func(mode codec.PredictionMode) uint64 {
		var b codec.SchemaBuilder
		b.Predict(b.GhostType("ball", wiretest.Component[wiretest.Pos](&b)), mode)
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash()
	}
	owner, all, none := hash(codec.PredictOwner), hash(codec.PredictAll), hash(codec.PredictNone)
	assert.NotEqual(t, owner, all)
	assert.NotEqual(t, owner, none)
	assert.NotEqual(t, all, none)
	assert.Equal(t, all, hash(codec.PredictAll))
}

func TestPredictionModeString(t *testing.T) {
	assert.Equal(t, "owner", codec.PredictOwner.String())
	assert.Equal(t, "all", codec.PredictAll.String())
	assert.Equal(t, "none", codec.PredictNone.String())
	assert.Equal(t, "PredictionMode(9)", codec.PredictionMode(9).String())
}
