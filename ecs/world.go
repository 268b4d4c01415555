package ecs

import (
	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/ecs/event"
)

// WorldOptions configures [NewWorld]. The zero value gives arche's default
// capacity.
type WorldOptions struct {
	// InitialCapacity is passed to arche's NewWorld when positive.
	InitialCapacity int
	// Authoritative marks the server's world: its registered state may
	// change outside the prediction stages (respawns, hits, players
	// joining and leaving), so a [SyncTest] bounds its windows at such
	// changes instead of calling them desyncs. The server endpoint sets it.
	Authoritative bool
}

// World is one arche world plus what netcode needs to know about it: the
// tick being simulated, whether the prediction group is replaying and a
// command buffer for deferred structural changes.
//
// World installs itself as the arche world's listener to notice structural
// changes (the per-tick history relies on it). A game that needs its own
// listener sets it with [World.SetListener], never with arche's
// World.SetListener, which would replace ghostwire's. arche's World.Reset
// sends no events and recycles entity IDs: never call it on a world with a
// history; make a new World instead.
type World struct {
	arche     ecs.World
	tick      Tick
	replaying bool
	commands  Commands
	history   *History
	probe     *unregisteredProbe // set by NewSyncTest
	// server marks the authoritative world: its registered state may
	// change outside the prediction stages (see SyncTest).
	server bool

	// layout counts structural changes (entity created or removed,
	// component added or removed); equal counts mean equal archetype rows.
	layout   uint64
	listener ecs.Listener
}

// NewWorld creates a world at tick 0.
func NewWorld(opts WorldOptions) *World {
	w := &World{}
	if opts.InitialCapacity > 0 {
		w.arche = ecs.NewWorld(opts.InitialCapacity)
	} else {
		w.arche = ecs.NewWorld()
	}
	w.server = opts.Authoritative
	w.commands.world = w
	w.arche.SetListener(&layoutListener{world: w})
	return w
}

// Arche returns the underlying arche world. Queries, maps and filters are
// arche's own; structural changes made while a query is open must go
// through [World.Commands] instead.
func (w *World) Arche() *ecs.World { return &w.arche }

// Tick returns the tick being simulated (during replay: the tick being
// replayed).
func (w *World) Tick() Tick { return w.tick }

// SetTick sets the current tick: a client endpoint adopts the server's
// tick at connection, a test starts a world near the 2³² wrap. The next
// [Schedule.Tick] simulates t+1. It panics while replaying.
func (w *World) SetTick(t Tick) {
	if w.replaying {
		panic("ecs: SetTick while replaying")
	}
	w.tick = t
}

// LayoutVersion returns a counter that changes with every structural
// change of the arche world (an entity created or removed, a component
// added or removed). Two equal values mean every archetype holds the same
// entities in the same rows, so a cache keyed by rows is still valid.
func (w *World) LayoutVersion() uint64 { return w.layout }

// IsReplaying reports whether the prediction group is re-running a tick
// after a rollback. Nothing may be sent and no side effect may fire then.
func (w *World) IsReplaying() bool { return w.replaying }

// IsFirstTimePredicted reports whether the current tick is simulated for the
// first time: true on the server and for a client's normal tick, false
// during replay. Systems use it for effects finer than a whole side-effect
// system.
func (w *World) IsFirstTimePredicted() bool { return !w.replaying }

// History returns the world's rollback history, or nil before
// [EnableHistory]. A client endpoint enables it and registers the
// replicated components; a game registers there what else its prediction
// writes ([Register]) before the first tick.
func (w *World) History() *History { return w.history }

// Commands returns the world's command buffer. Changes queued there are
// applied by the schedule after the running system returns.
func (w *World) Commands() *Commands { return &w.commands }

// SetListener sets the game's own arche listener. ghostwire keeps its
// internal one and forwards every event that l subscribes to. nil removes
// it.
func (w *World) SetListener(l ecs.Listener) { w.listener = l }

// layoutListener bumps the world's layout version on every structural
// change and forwards events to the game's listener.
type layoutListener struct{ world *World }

func (l *layoutListener) Notify(aw *ecs.World, evt ecs.EntityEvent) {
	l.world.layout++
	user := l.world.listener
	if user == nil {
		return
	}
	trigger := user.Subscriptions() & evt.EventTypes
	if trigger == 0 || !subscribes(trigger, &evt, user.Components()) {
		return
	}
	user.Notify(aw, evt)
}

// subscribes applies arche's own rule for a listener with component
// subscriptions subs (nil: all): a relation event concerns the old or new
// relation component, an addition the added components, a removal the
// removed ones; only the event types in trigger are considered.
func subscribes(trigger event.Subscription, evt *ecs.EntityEvent, subs *ecs.Mask) bool {
	if subs == nil {
		return true
	}
	if trigger.ContainsAny(event.Relations) &&
		(evt.OldRelation != nil && subs.Get(*evt.OldRelation) || evt.NewRelation != nil && subs.Get(*evt.NewRelation)) {
		return true
	}
	if trigger.ContainsAny(event.EntityCreated|event.ComponentAdded) && subs.ContainsAny(&evt.Added) {
		return true
	}
	return trigger.ContainsAny(event.EntityRemoved|event.ComponentRemoved) && subs.ContainsAny(&evt.Removed)
}

func (l *layoutListener) Subscriptions() event.Subscription {
	return event.EntityCreated | event.EntityRemoved | event.ComponentAdded |
		event.ComponentRemoved | event.RelationChanged | event.TargetChanged
}

func (l *layoutListener) Components() *ecs.Mask { return nil }
