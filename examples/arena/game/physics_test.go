package game

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// Two players standing exactly on the same spot (two connections share a
// spawn point every 16) are pushed apart along x by ID order, as far as
// one tick's push allows, like any other overlap.
func TestCollideSeparatesPlayersOnTheSameSpot(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	spawn := generic.NewMap4[components.Ghost, Position, Health, components.Predicted](w.Arche())
	at := SpawnPoint(1)
	assert.Equal(t, at, SpawnPoint(17), "connections 1 and 17 spawn on the same spot")
	var es []ecs.Entity
	for id := components.GhostID(1); id <= 2; id++ {
		es = append(es, spawn.NewWith(&components.Ghost{ID: id}, &at, &Health{HP: MaxHP}, &components.Predicted{}))
	}
	pos := generic.NewMap[Position](w.Arche())
	NewCollideSystem(w).Update(w)
	a, b := *pos.Get(es[0]), *pos.Get(es[1])
	assert.InDelta(t, at.X-PushPerTick, a.X, 1e-6, "the lower ID goes to -x")
	assert.InDelta(t, at.X+PushPerTick, b.X, 1e-6, "the higher ID goes to +x")
	assert.Equal(t, at.Y, a.Y)
	assert.Equal(t, at.Y, b.Y)
}
