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
	w := gw.NewWorld(gw.WorldOptions{InitialCapacity: 64})
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
	assert.Equal(t, gw.Tick(41), w.Tick())
	assert.False(t, w.IsReplaying())
	assert.True(t, w.IsFirstTimePredicted())
	assert.Nil(t, w.History())
}

// The game's listener gets exactly the events arche itself would give it:
// with a component subscription, a change that neither adds nor removes
// one of those components is not delivered, even on an entity that has one.
func TestForwardedEventsMatchArcheSubscriptions(t *testing.T) {
	run := func(a *ecs.World, set func(ecs.Listener)) []ecs.EntityEvent {
		velID := ecs.ComponentID[Velocity](a)
		posID := ecs.ComponentID[Position](a)
		bodyID := ecs.ComponentID[Body](a)
		mask := ecs.All(velID)
		l := &subscribedListener{subs: event.ComponentAdded, mask: &mask}
		set(l)
		e := a.NewEntity(velID)                          // delivered
		a.Add(e, posID)                                  // Velocity untouched: not for this listener
		a.Exchange(e, []ecs.ID{bodyID}, []ecs.ID{velID}) // Velocity removed: not subscribed
		a.Add(e, velID)                                  // delivered
		return l.events
	}
	raw := ecs.NewWorld()
	want := run(&raw, raw.SetListener)
	w := gw.NewWorld(gw.WorldOptions{})
	got := run(w.Arche(), w.SetListener)
	assert.Len(t, want, 2)
	assert.Equal(t, want, got)
}

type subscribedListener struct {
	events []ecs.EntityEvent
	subs   event.Subscription
	mask   *ecs.Mask
}

func (l *subscribedListener) Notify(_ *ecs.World, e ecs.EntityEvent) {
	e.AddedIDs = append([]ecs.ID(nil), e.AddedIDs...)
	e.RemovedIDs = append([]ecs.ID(nil), e.RemovedIDs...)
	l.events = append(l.events, e)
}
func (l *subscribedListener) Subscriptions() event.Subscription { return l.subs }
func (l *subscribedListener) Components() *ecs.Mask             { return l.mask }
