package ecs_test

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/ecs/event"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"

	gw "github.com/ghostwire/ghostwire/ecs"
)

type recordingListener struct {
	events []ecs.EntityEvent
	mask   *ecs.Mask
}

func (l *recordingListener) Notify(_ *ecs.World, e ecs.EntityEvent) { l.events = append(l.events, e) }
func (l *recordingListener) Subscriptions() event.Subscription {
	return event.EntityCreated | event.ComponentAdded
}
func (l *recordingListener) Components() *ecs.Mask { return l.mask }

func TestWorldCountsStructuralChangesAndForwardsEvents(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{Role: gw.RoleClient, InitialCapacity: 64})
	assert.Equal(t, gw.RoleClient, w.Role())
	assert.Equal(t, "client", w.Role().String())
	assert.Equal(t, "server", gw.RoleServer.String())
	a := w.Arche()
	posID := ecs.ComponentID[Position](a)
	velID := ecs.ComponentID[Velocity](a)
	mask := ecs.All(velID)
	l := &recordingListener{mask: &mask}
	w.SetListener(l)

	v0 := w.LayoutVersion()
	e := a.NewEntity(posID)
	assert.Greater(t, w.LayoutVersion(), v0)
	v1 := w.LayoutVersion()
	pm := generic.NewMap[Position](a)
	pm.Get(e).X = 3 // a value change is not structural
	assert.Equal(t, v1, w.LayoutVersion())
	a.Add(e, velID)
	assert.Greater(t, w.LayoutVersion(), v1)
	a.RemoveEntity(e)

	// Only the event touching Velocity and of a subscribed type reaches the game.
	if assert.Len(t, l.events, 1) {
		assert.True(t, l.events[0].Contains(event.ComponentAdded))
	}
	w.SetTick(41)
	assert.Equal(t, uint32(41), w.Tick())
	assert.False(t, w.IsReplaying())
	assert.True(t, w.IsFirstTimePredicted())
	assert.Nil(t, w.History())
}
