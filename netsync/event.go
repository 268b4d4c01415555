package netsync

import (
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/codec"
)

// EventID is an event type's wire identity: its index in the [Schema].
type EventID codec.EventID

// Limits of event declarations.
const (
	// MaxEventTypes bounds the event types of a schema.
	MaxEventTypes = codec.MaxEvents
	// MaxEventWindow bounds EventRules.Window, in ticks.
	MaxEventWindow = codec.MaxEventWindow
)

// EventRules says when a client's predicted event and the server's are
// the same event. The zero value matches within 8 ticks.
type EventRules struct {
	// Window is how many ticks apart a predicted event and the server's,
	// of the same type and about the same entity, may lie and still be one
	// event: a ball predicted against paddles drawn in the past bounces a
	// tick or two early or late. It must be shorter than the least time
	// between two real events of the type on one entity. 8 when zero.
	// Allowed: 0..MaxEventWindow.
	Window int
}

// Event declares the predicted event type T, whose pointer implements
// [Serializer] (its data, coded like a component's; T is declared as a
// component too), and returns its ID. A prediction system raises one with
// systems.Raise on the server and on clients alike; each client's
// presentation gets it exactly once per event the server had: at once
// when first predicted, cancelled when the server had none, late when the
// server had one the client did not predict (docs/predicted-events.md).
// A window out of range, more than MaxEventTypes types, or what
// [Component] refuses makes Build fail naming the type.
func Event[T any, PT interface {
	*T
	Serializer
}](b *SchemaBuilder, rules EventRules) EventID {
	return EventID((*codec.SchemaBuilder)(b).AddEvent(reflect.TypeFor[T](), func(p unsafe.Pointer, s *codec.Stream) {
		PT((*T)(p)).Serialize((*Stream)(s))
	}, codec.EventRules{Window: rules.Window}))
}
