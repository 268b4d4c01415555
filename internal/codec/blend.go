package codec

import (
	"math"
	"reflect"
	"unsafe"
)

// BlendFunc writes into out the value between a (t = 0) and b (t = 1); t
// above 1 extrapolates. The three pointers point to values of the
// component's type; out may alias neither a nor b.
type BlendFunc func(a, b, out unsafe.Pointer, t float32)

// Interpolation says how a replicated component is shown between two
// received states, for interpolated ghosts and for lag compensation's
// rewind (the server blends exactly as clients do, so a shot is judged
// against the pose the shooter saw).
type Interpolation struct {
	// Blend blends two values; nil means linear for float fields and a step
	// (a until b's tick) for every other field.
	Blend BlendFunc
	// Snap disables blending: the value steps from a to b at b's tick.
	Snap bool
	// Distance and Teleport detect a teleport: when Distance(a, b) exceeds
	// Teleport the value steps instead of blending and never extrapolates.
	// A nil Distance never detects one.
	Distance func(a, b unsafe.Pointer) float32
	Teleport float32
}

// LerpFloat is a + (b − a)·t, computed the same way everywhere (explicit
// float32 roundings, no fused multiply-add), so client and server blend to
// the same bits. t = 1 gives b exactly (a + (b − a) can round elsewhere).
func LerpFloat(a, b, t float32) float32 {
	if t == 1 {
		return b
	}
	return a + float32(float32(b-a)*t)
}

// LerpAngle blends two angles in radians along the shorter way round and
// wraps the result into [-π, π).
func LerpAngle(a, b, t float32) float32 {
	d := mod2Pi(float64(b) - float64(a))
	if d >= math.Pi {
		d -= 2 * math.Pi
	} else if d < -math.Pi {
		d += 2 * math.Pi
	}
	return wrapAngle(a + float32(float32(d)*t))
}

func wrapAngle(v float32) float32 {
	r := mod2Pi(float64(v) + math.Pi)
	if r < 0 {
		r += 2 * math.Pi
	}
	return float32(r - math.Pi)
}

// mod2Pi is math.Mod(x, 2π), which returns x itself when |x| < 2π: the
// common case (angles already wrapped) skips its loop, with the same bits.
func mod2Pi(x float64) float64 {
	if x > -2*math.Pi && x < 2*math.Pi {
		return x
	}
	return math.Mod(x, 2*math.Pi)
}

// Teleported reports whether a and b of component id are a teleport apart.
func (in *Interpolation) Teleported(a, b unsafe.Pointer) bool {
	return in.Distance != nil && in.Distance(a, b) > in.Teleport
}

// Apply blends a and b into out by t, honouring Snap (and teleported,
// which the caller computes once per pair of states).
func (in *Interpolation) Apply(a, b, out unsafe.Pointer, t float32, size uintptr, teleported bool) {
	if in.Snap || teleported {
		src := a
		if t >= 1 {
			src = b
		}
		copy(unsafe.Slice((*byte)(out), size), unsafe.Slice((*byte)(src), size))
		return
	}
	in.Blend(a, b, out, t)
}

// DefaultInterpolation returns the interpolation a component of type t
// gets unless the schema says otherwise: linear blend, no teleports.
func DefaultInterpolation(t reflect.Type) Interpolation {
	return Interpolation{Blend: defaultBlend(t)}
}

// defaultBlend lerps float32 and float64 fields (nested structs and arrays
// included) and steps every other field.
func defaultBlend(t reflect.Type) BlendFunc {
	var f32, f64 []uintptr
	var walk func(t reflect.Type, off uintptr)
	walk = func(t reflect.Type, off uintptr) {
		switch t.Kind() {
		case reflect.Float32:
			f32 = append(f32, off)
		case reflect.Float64:
			f64 = append(f64, off)
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				walk(t.Field(i).Type, off+t.Field(i).Offset)
			}
		case reflect.Array:
			for i := 0; i < t.Len(); i++ {
				walk(t.Elem(), off+uintptr(i)*t.Elem().Size())
			}
		}
	}
	walk(t, 0)
	size := t.Size()
	return func(a, b, out unsafe.Pointer, tt float32) {
		src := a
		if tt >= 1 {
			src = b
		}
		copy(unsafe.Slice((*byte)(out), size), unsafe.Slice((*byte)(src), size))
		if tt == 1 {
			return // exactly b, float fields included
		}
		for _, o := range f32 {
			*(*float32)(unsafe.Add(out, o)) = LerpFloat(*(*float32)(unsafe.Add(a, o)), *(*float32)(unsafe.Add(b, o)), tt)
		}
		for _, o := range f64 {
			x, y := *(*float64)(unsafe.Add(a, o)), *(*float64)(unsafe.Add(b, o))
			// The explicit conversion forbids a fused multiply-add, so
			// every machine rounds the same way (as LerpFloat does).
			*(*float64)(unsafe.Add(out, o)) = x + float64((y-x)*float64(tt))
		}
	}
}
