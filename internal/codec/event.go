package codec

import (
	"fmt"
	"reflect"
	"unsafe"
)

// EventID is an event type's index in the [Schema].
type EventID uint16

// MaxEvents bounds the event types of a schema.
const MaxEvents = 64

// MaxEventWindow bounds EventRules.Window, in ticks: two seconds at 60 Hz.
const MaxEventWindow = 120

// DefaultEventWindow is the window of a zero EventRules.Window.
const DefaultEventWindow = 8

// EventRules says how a predicted event is matched with the server's.
type EventRules struct {
	// Window is how many ticks apart a predicted event and the server's
	// of the same type and entity may lie and still be one event.
	Window int
}

// Event is a declared event type: the component that describes its data
// and its rules.
type Event struct {
	Comp   ComponentID
	Window int
}

// AddEvent declares the event type t, whose data is described by
// serialize like a component's (it is declared as one), and returns its
// ID. A window outside 1..MaxEventWindow (0 is DefaultEventWindow), more
// than MaxEvents types, or what AddComponent refuses makes Build fail
// naming the type.
func (b *SchemaBuilder) AddEvent(t reflect.Type, serialize func(p unsafe.Pointer, s *Stream), rules EventRules) EventID {
	id := EventID(len(b.s.events))
	comp := b.AddComponent(t, serialize)
	switch {
	case rules.Window == 0:
		rules.Window = DefaultEventWindow
	case rules.Window < 1 || rules.Window > MaxEventWindow:
		b.fail(fmt.Errorf("netsync: event %v: window %d ticks outside 1..%d", t, rules.Window, MaxEventWindow))
		return id
	}
	if len(b.s.events) >= MaxEvents {
		b.fail(fmt.Errorf("netsync: event %v would be the %dth; a schema holds at most %d", t, len(b.s.events)+1, MaxEvents))
		return id
	}
	b.s.events = append(b.s.events, Event{Comp: comp, Window: rules.Window})
	return id
}

// NumEvents returns the number of declared event types.
func (s *Schema) NumEvents() int { return len(s.events) }

// Event returns event type id; ok is false for an unknown ID (which a
// decoder must refuse).
func (s *Schema) Event(id EventID) (ev Event, ok bool) {
	if int(id) >= len(s.events) {
		return Event{}, false
	}
	return s.events[id], true
}

// EventOf returns the ID of event type t; ok is false when t is not one.
func (s *Schema) EventOf(t reflect.Type) (id EventID, ok bool) {
	c, ok := s.ComponentOf(t)
	if !ok {
		return 0, false
	}
	for i, ev := range s.events {
		if ev.Comp == c {
			return EventID(i), true
		}
	}
	return 0, false
}

// hashEvents folds the event types into h; a schema without events keeps
// the hash it had.
func (s *Schema) hashEvents(h uint64) uint64 {
	for _, ev := range s.events {
		h = fnv(h, []byte{0xfd, byte(ev.Comp), byte(ev.Comp >> 8), byte(ev.Window)})
	}
	return h
}
