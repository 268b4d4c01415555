package netsync

import (
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/codec"
)

// MissingPolicy says what the server applies on a tick for which a
// client's input has not arrived.
type MissingPolicy codec.MissingPolicy

const (
	// MissingRepeatLast applies the client's previous input again, its presses
	// cleared: players mostly keep holding the same keys, so a late input
	// often equals the repeated one and the client's prediction stays
	// right. The default.
	MissingRepeatLast = MissingPolicy(codec.MissingRepeatLast)
	// MissingNeutral applies the input type's zero value: the player lets go of
	// everything.
	MissingNeutral = MissingPolicy(codec.MissingNeutral)
)

// String returns "repeat-last" or "neutral".
func (p MissingPolicy) String() string { return codec.MissingPolicy(p).String() }

// InputRules says how the server treats a game's input type T.
type InputRules[T any] struct {
	// Validate checks a decoded input; it may clamp fields in place and
	// then reports clamped. A non-empty refuse refuses the input (the tick
	// then runs on the missing-input policy), counted under that reason;
	// keep reasons few and constant. The client runs it on its own input
	// before predicting, so it predicts what the server applies: a clamped
	// value must therefore be one the wire form keeps (on the
	// quantization grid). nil accepts everything.
	Validate func(in *T) (clamped bool, refuse string)
	// Missing is the policy for a tick whose input has not arrived.
	Missing MissingPolicy
	// Substitute, if set, replaces Missing: it writes the input to apply
	// from the last one applied. Presses are cleared after it, so a
	// substitute never presses anything.
	Substitute func(last, out *T)
}

// Input declares the game's input type T, whose pointer implements
// [Serializer]: what a player did on one tick, as the game sees it (move
// axes, steering, unit orders), with [components.Press] fields for events
// that must count exactly once. Systems read it as a component of the
// entities the player owns, beside the framework's
// [components.InputHeader]. A schema declares at most one input type; a
// second one, an unknown policy or an invalid description makes Build
// fail.
func Input[T any, PT interface {
	*T
	Serializer
}](b *SchemaBuilder, rules InputRules[T]) {
	r := codec.InputRules{Missing: codec.MissingPolicy(rules.Missing)}
	if v := rules.Validate; v != nil {
		r.Validate = func(p unsafe.Pointer) (bool, string) { return v((*T)(p)) }
	}
	if f := rules.Substitute; f != nil {
		r.Substitute = func(last, out unsafe.Pointer) { f((*T)(last), (*T)(out)) }
	}
	(*codec.SchemaBuilder)(b).AddInput(reflect.TypeFor[T](), func(p unsafe.Pointer, s *codec.Stream) {
		PT((*T)(p)).Serialize((*Stream)(s))
	}, r)
}
