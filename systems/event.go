package systems

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// Event is a predicted event as a client's presentation gets it (see
// Raise and HandleEvent).
type Event[T any] struct {
	// Data is what the raising system gave (the server's, for a late one).
	Data T
	// Entity is the entity the event is about on this client: the one
	// given to Raise, or for a late event the ghost's entity if this
	// client has it. Zero when none.
	Entity ecs.Entity
	// Ghost is the ghost the event is about; 0 when none (or a predicted
	// spawn the server has not confirmed yet).
	Ghost components.GhostID
	// Tick is the tick the event happened on: the predicting system's, or
	// the server's for a late one.
	Tick gw.Tick
	// Late is set on an event the server had and this client did not
	// predict: it is played when the server's events arrive. LateBy is
	// then the ticks between the event and the tick the client predicted
	// when it learnt of it.
	Late   bool
	LateBy int
}

// EventHandler is what a client does with one event type: the game's
// presentation (a sound, particles). Every func may be nil.
//
// Over a match, Play is called once per event the server had (at once
// when first predicted, or late), plus once per predicted event the
// server did not have, for which Cancel follows once the server's events
// of its window are known (about a round trip). Confirm tells a played
// predicted event the server had. Play runs inside the prediction system
// that raised the event (read the world there, do not change its
// layout); Cancel, Confirm and late Plays run in Client.Update.
type EventHandler[T any] struct {
	Play    func(ev Event[T])
	Cancel  func(ev Event[T])
	Confirm func(ev Event[T])
}

// HandleEvent sets c's handler of the event type T (declared with
// netsync.Event), replacing any before. It errors naming T when the
// schema declares no such event type.
func HandleEvent[T any](c *Client, h EventHandler[T]) error {
	t := reflect.TypeFor[T]()
	id, ok := c.binding.Schema().EventOf(t)
	if !ok {
		return fmt.Errorf("systems: %v is not an event type of the schema (declare it with netsync.Event)", t)
	}
	wrap := func(f func(Event[T])) func(*eventInfo, unsafe.Pointer) {
		if f == nil {
			return nil
		}
		return func(in *eventInfo, data unsafe.Pointer) {
			f(Event[T]{Data: *(*T)(data), Entity: in.entity, Ghost: in.ghost, Tick: in.tick, Late: in.late, LateBy: in.lateBy})
		}
	}
	c.events.handlers[id] = eventHandler{play: wrap(h.Play), cancel: wrap(h.Cancel), confirm: wrap(h.Confirm)}
	return nil
}

// HandleServerEvent sets the function s calls with each event of type T
// its prediction raises (once: not on the determinism check's replays),
// replacing any before: a server's log, statistics or replay recorder.
// It runs inside the raising system. It errors naming T when the schema
// declares no such event type.
func HandleServerEvent[T any](s *Server, f func(ev Event[T])) error {
	t := reflect.TypeFor[T]()
	id, ok := s.binding.Schema().EventOf(t)
	if !ok {
		return fmt.Errorf("systems: %v is not an event type of the schema (declare it with netsync.Event)", t)
	}
	s.events.handlers[id] = func(in *eventInfo, data unsafe.Pointer) {
		f(Event[T]{Data: *(*T)(data), Entity: in.entity, Ghost: in.ghost, Tick: in.tick})
	}
	return nil
}

// eventInfo is an Event without its data, for the untyped handlers.
type eventInfo struct {
	entity ecs.Entity
	ghost  components.GhostID
	tick   gw.Tick
	late   bool
	lateBy int
}

// eventHandler is an EventHandler behind its type.
type eventHandler struct {
	play, cancel, confirm func(*eventInfo, unsafe.Pointer)
}

// eventSink is an endpoint's side of Raise: a resource of its world.
type eventSink struct {
	schema *codec.Schema
	ghost  ecs.ID // components.Ghost
	raise  func(w *gw.World, t codec.EventID, e ecs.Entity, g components.GhostID, data unsafe.Pointer)
}

// installEventSink makes Raise reach raise on w.
func installEventSink(w *gw.World, schema *codec.Schema, raise func(*gw.World, codec.EventID, ecs.Entity, components.GhostID, unsafe.Pointer)) {
	a := w.Arche()
	ecs.AddResource(a, &eventSink{schema: schema, ghost: ecs.ComponentID[components.Ghost](a), raise: raise})
}

// Raise raises the predicted event ev, of a type declared with
// netsync.Event, about entity e (a ghost; or the zero entity for none),
// on the tick w runs. Call it from a prediction system, on the server and
// the clients alike: the server's events are the truth, sent to every
// client reliably; a client plays its own at once, never twice for one
// event (a replay raising it again is recognised), and the server's
// decide the rest (see EventHandler). A raise during the server's
// determinism-check replays is ignored. Raise copies ev.
//
// It panics when w is not a Server's or a Client's world, or when T is not
// an event type of its schema: mistakes of the program, not the network.
func Raise[T any](w *gw.World, e ecs.Entity, ev *T) {
	a := w.Arche()
	id := ecs.ResourceID[eventSink](a)
	if !a.Resources().Has(id) {
		panic("systems: Raise on a world that is not a Server's or a Client's")
	}
	sink := a.Resources().Get(id).(*eventSink)
	t, ok := sink.schema.EventOf(reflect.TypeFor[T]())
	if !ok {
		panic(fmt.Sprintf("systems: Raise of %v, which is not an event type of the schema (declare it with netsync.Event)", reflect.TypeFor[T]()))
	}
	var g components.GhostID
	if !e.IsZero() && a.Alive(e) && a.Has(e, sink.ghost) {
		g = (*components.Ghost)(a.Get(e, sink.ghost)).ID
	}
	sink.raise(w, t, e, g, unsafe.Pointer(ev))
}
