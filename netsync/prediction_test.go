package netsync_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/netsync"
)

func TestPredictSetsTheGhostTypesMode(t *testing.T) {
	var b netsync.SchemaBuilder
	pos := netsync.Component[tPos](&b)
	player := b.GhostType("player", pos)
	platform := b.GhostType("platform", pos)
	spectator := b.GhostType("spectator", pos)
	b.Predict(platform, netsync.PredictAll)
	b.Predict(spectator, netsync.PredictAll)
	b.Predict(spectator, netsync.PredictNone) // the last call wins
	s, err := b.Build()
	require.NoError(t, err)
	for id, want := range map[netsync.GhostTypeID]netsync.PredictionMode{
		player: netsync.PredictOwner, platform: netsync.PredictAll, spectator: netsync.PredictNone,
	} {
		gt, ok := s.GhostType(id)
		require.True(t, ok)
		assert.Equal(t, want, gt.Mode, gt.Name)
	}

	b.Predict(player, netsync.PredictAll)
	gt, _ := s.GhostType(player)
	assert.Equal(t, netsync.PredictOwner, gt.Mode, "a built schema never changes")
}

func TestPredictRefusesAnUnknownTypeOrMode(t *testing.T) {
	err := buildErr(func(b *netsync.SchemaBuilder) {
		b.GhostType("a", netsync.Component[tPos](b))
		b.Predict(1, netsync.PredictAll)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ghost type ID 1 outside 0..0")

	err = buildErr(func(b *netsync.SchemaBuilder) {
		b.Predict(b.GhostType("ball", netsync.Component[tPos](b)), netsync.PredictNone+1)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ghost type "ball": prediction mode 3 outside 0..2`)
}

func TestPredictionModeIsPartOfTheSchemaHash(t *testing.T) {
	hash := func(mode netsync.PredictionMode) uint64 {
		var b netsync.SchemaBuilder
		b.Predict(b.GhostType("ball", netsync.Component[tPos](&b)), mode)
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash()
	}
	owner, all, none := hash(netsync.PredictOwner), hash(netsync.PredictAll), hash(netsync.PredictNone)
	assert.NotEqual(t, owner, all)
	assert.NotEqual(t, owner, none)
	assert.NotEqual(t, all, none)
	assert.Equal(t, all, hash(netsync.PredictAll))
}

func TestPredictionModeString(t *testing.T) {
	assert.Equal(t, "owner", netsync.PredictOwner.String())
	assert.Equal(t, "all", netsync.PredictAll.String())
	assert.Equal(t, "none", netsync.PredictNone.String())
	assert.Equal(t, "PredictionMode(9)", netsync.PredictionMode(9).String())
}
