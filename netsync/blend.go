package netsync

import (
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/codec"
)

// BlendFunc writes into out the value between a (t = 0) and b (t = 1); t
// above 1 extrapolates. The three pointers point to values of the
// component's type; out may alias neither a nor b. Make one with [Lerp].
type BlendFunc func(a, b, out unsafe.Pointer, t float32)

// Interpolation says how a replicated component is shown between two
// received states, for interpolated ghosts and for lag compensation's
// rewind (the server blends exactly as clients do, so a shot is judged
// against the pose the shooter saw). Declare it with
// [SchemaBuilder.Interpolate].
type Interpolation struct {
	// Blend blends two values; nil means linear for float fields and a step
	// (a until b's tick) for every other field.
	Blend BlendFunc
	// Snap disables blending: the value steps from a to b at b's tick.
	Snap bool
	// Distance and Teleport detect a teleport: when Distance(a, b) exceeds
	// Teleport the value steps instead of blending and never extrapolates.
	// A nil Distance never detects one. Make one with [Distance].
	Distance func(a, b unsafe.Pointer) float32
	Teleport float32
}

// Interpolate sets how component id is shown between two received states
// (see [Interpolation]); a nil Blend keeps the default. An unknown ID or a
// negative teleport threshold makes Build fail.
func (b *SchemaBuilder) Interpolate(id ComponentID, in Interpolation) {
	(*codec.SchemaBuilder)(b).Interpolate(codec.ComponentID(id), codec.Interpolation{
		Blend:    codec.BlendFunc(in.Blend),
		Snap:     in.Snap,
		Distance: in.Distance,
		Teleport: in.Teleport,
	})
}

// Lerp adapts a typed blend function.
func Lerp[T any](f func(a, b *T, t float32) T) BlendFunc {
	return func(a, b, out unsafe.Pointer, t float32) { *(*T)(out) = f((*T)(a), (*T)(b), t) }
}

// Distance adapts a typed distance function, for [Interpolation].Distance.
func Distance[T any](f func(a, b *T) float32) func(a, b unsafe.Pointer) float32 {
	return func(a, b unsafe.Pointer) float32 { return f((*T)(a), (*T)(b)) }
}

// LerpFloat is a + (b − a)·t, computed the same way everywhere (explicit
// float32 roundings, no fused multiply-add), so client and server blend to
// the same bits. t = 1 gives b exactly (a + (b − a) can round elsewhere).
func LerpFloat(a, b, t float32) float32 { return codec.LerpFloat(a, b, t) }

// LerpAngle blends two angles in radians along the shorter way round and
// wraps the result into [-π, π).
func LerpAngle(a, b, t float32) float32 { return codec.LerpAngle(a, b, t) }
