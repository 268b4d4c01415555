package codec_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// blendFloat returns a float32 of varied magnitude and sign.
func blendFloat(rng *rand.Rand) float32 {
	return float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-2)))
}

func TestLerpFloatEndpointsBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 200000; i++ {
		a, b := blendFloat(rng), blendFloat(rng)
		got := codec.LerpFloat(a, b, 0)
		require.Equal(t, math.Float32bits(a), math.Float32bits(got), "LerpFloat(%v, %v, 0) = %v, want a bit for bit", a, b, got)
		got = codec.LerpFloat(a, b, 1)
		require.Equal(t, math.Float32bits(b), math.Float32bits(got), "LerpFloat(%v, %v, 1) = %v, want b bit for bit", a, b, got)
	}
}

func TestLerpFloatMidpointAndExtrapolation(t *testing.T) {
	for _, c := range []struct{ a, b, t, want float32 }{
		{1, 3, 0.5, 2},
		{-2.5, 7.5, 0.5, 2.5},
		{10, -10, 0.5, 0},
		{0, 8, 0.25, 2},
		{4, 4, 0.5, 4},
		// Past 1 the line continues.
		{1, 3, 2, 5},
		{-1, 0.5, 4, 5},
		{2, 1, 3, -1},
		{0, 0.75, 1.5, 1.125},
	} {
		assert.Equal(t, c.want, codec.LerpFloat(c.a, c.b, c.t), "LerpFloat(%v, %v, %v)", c.a, c.b, c.t)
	}

	// Arbitrary values: a + (b − a)·t with both roundings explicit (a
	// conversion forbids a fused multiply-add), so every machine gets these
	// bits. Run with GOAMD64=v3 to check on a CPU that fuses.
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 100000; i++ {
		a, b := blendFloat(rng), blendFloat(rng)
		tt := float32(rng.Float64() * 3)
		if tt == 1 {
			continue
		}
		want := a + float32(float32(b-a)*tt)
		got := codec.LerpFloat(a, b, tt)
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "LerpFloat(%v, %v, %v) = %v, want %v", a, b, tt, got, want)
		// And it is the line through a and b, to float32 precision.
		exact := float64(a) + (float64(b)-float64(a))*float64(tt)
		tol := 4e-7 * (math.Abs(float64(a)) + math.Abs(float64(b))) * (1 + float64(tt))
		require.LessOrEqual(t, math.Abs(float64(got)-exact), tol, "LerpFloat(%v, %v, %v) = %v, off the line (%v) by more than %v", a, b, tt, got, exact, tol)
	}
}

// angleDist is the distance between two angles around the circle.
func angleDist(a, b float64) float64 {
	d := math.Mod(math.Abs(a-b), 2*math.Pi)
	return math.Min(d, 2*math.Pi-d)
}

// requireWrapped fails unless v lies in [-π, π) as float32 can hold it:
// float32(-π) is just below -π and is where -π rounds to.
func requireWrapped(t *testing.T, v float32, format string, args ...any) {
	t.Helper()
	require.True(t, v >= float32(-math.Pi) && float64(v) < math.Pi, append([]any{format + ": %v outside [-π, π)"}, append(args, v)...)...)
}

func TestLerpAngleShortWayAcrossPi(t *testing.T) {
	// 3 → -3 is 0.28 rad through ±π, not 6 rad through 0.
	for _, c := range []struct{ a, b float32 }{{3, -3}, {-3, 3}, {3.1, -3.1}, {-2.9, 2.5}} {
		prev := float64(c.a)
		for i := 0; i <= 100; i++ {
			tt := float32(i) / 100
			v := codec.LerpAngle(c.a, c.b, tt)
			requireWrapped(t, v, "LerpAngle(%v, %v, %v)", c.a, c.b, tt)
			require.GreaterOrEqual(t, math.Abs(float64(v)), 2.4, "LerpAngle(%v, %v, %v) = %v: went the long way, through 0", c.a, c.b, tt, v)
			// Even steps of the short arc.
			short := angleDist(float64(c.a), float64(c.b))
			if step := angleDist(prev, float64(v)); i > 0 {
				require.LessOrEqual(t, math.Abs(step-short/100), 1e-5, "LerpAngle(%v, %v, %v) = %v: step %v, want %v", c.a, c.b, tt, v, step, short/100)
			}
			prev = float64(v)
		}
	}
	// The midpoint of 3 and -3 the short way is ±π.
	mid := codec.LerpAngle(3, -3, 0.5)
	assert.InDelta(t, math.Pi, math.Abs(float64(mid)), 1e-6, "LerpAngle(3, -3, 0.5)")
	assert.InDelta(t, 0, angleDist(float64(codec.LerpAngle(3, -3, 1)), -3), 1e-6, "LerpAngle(3, -3, 1)")
	assert.InDelta(t, 0, angleDist(float64(codec.LerpAngle(3, -3, 0)), 3), 1e-6, "LerpAngle(3, -3, 0)")
	// Within the half circle, no wrap: plain midpoint.
	assert.InDelta(t, 0.5, float64(codec.LerpAngle(-1, 2, 0.5)), 1e-6)
	// Extrapolation keeps turning the short way and wraps: 3 → 3.1 twice
	// over is 3.2, i.e. 3.2 − 2π.
	assert.InDelta(t, 3.2-2*math.Pi, float64(codec.LerpAngle(3, 3.1, 2)), 1e-5)
}

func TestLerpAngleWrapsAndStaysShort(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	for i := 0; i < 100000; i++ {
		a := float32((rng.Float64()*2 - 1) * 20) // several turns either way
		b := float32((rng.Float64()*2 - 1) * 20)
		tt := float32(rng.Float64())
		v := codec.LerpAngle(a, b, tt)
		requireWrapped(t, v, "LerpAngle(%v, %v, %v)", a, b, tt)
		short := angleDist(float64(a), float64(b))
		// On the short arc: as far from a as t says, and from b as 1 − t.
		da := angleDist(float64(v), float64(a))
		require.LessOrEqual(t, math.Abs(da-float64(tt)*short), 2e-5, "LerpAngle(%v, %v, %v) = %v: %v from a, want %v", a, b, tt, v, da, float64(tt)*short)
		db := angleDist(float64(v), float64(b))
		require.LessOrEqual(t, math.Abs(db-float64(1-tt)*short), 2e-5, "LerpAngle(%v, %v, %v) = %v: %v from b, want %v", a, b, tt, v, db, float64(1-tt)*short)
		for _, end := range []struct {
			t    float32
			want float32
		}{{0, a}, {1, b}} {
			v := codec.LerpAngle(a, b, end.t)
			requireWrapped(t, v, "LerpAngle(%v, %v, %v)", a, b, end.t)
			require.LessOrEqual(t, angleDist(float64(v), float64(end.want)), 1e-5, "LerpAngle(%v, %v, %v) = %v, want %v modulo 2π", a, b, end.t, v, end.want)
		}
	}
}

type blendInner struct {
	F float64
	N int16
	G [2]float32
}

// blendState mixes float fields (lerped), nested and in arrays, with
// fields that step.
type blendState struct {
	X     float32
	Flag  bool
	Arr   [3]float32
	In    blendInner
	Count int32
	Bytes [2]uint8
	D     float64
	Outer [2]blendInner
}

func randomBlendState(rng *rand.Rand) blendState {
	f := func() float32 { return blendFloat(rng) }
	d := func() float64 { return rng.NormFloat64() * 1e3 }
	in := func() blendInner { return blendInner{F: d(), N: int16(rng.IntN(1 << 15)), G: [2]float32{f(), f()}} }
	return blendState{
		X: f(), Flag: rng.IntN(2) == 1, Arr: [3]float32{f(), f(), f()}, In: in(),
		Count: rng.Int32(), Bytes: [2]uint8{uint8(rng.IntN(256)), uint8(rng.IntN(256))}, D: d(),
		Outer: [2]blendInner{in(), in()},
	}
}

// wantBlend is what the default blend must produce: floats on the line,
// everything else a until t reaches 1, then b.
func wantBlend(a, b *blendState, t float32) blendState {
	src := a
	if t >= 1 {
		src = b
	}
	f := func(x, y float32) float32 { return codec.LerpFloat(x, y, t) }
	d := func(x, y float64) float64 {
		if t == 1 {
			return y
		}
		return x + float64((y-x)*float64(t)) // rounded twice, never fused
	}
	in := func(x, y, s *blendInner) blendInner {
		return blendInner{F: d(x.F, y.F), N: s.N, G: [2]float32{f(x.G[0], y.G[0]), f(x.G[1], y.G[1])}}
	}
	return blendState{
		X: f(a.X, b.X), Flag: src.Flag,
		Arr:   [3]float32{f(a.Arr[0], b.Arr[0]), f(a.Arr[1], b.Arr[1]), f(a.Arr[2], b.Arr[2])},
		In:    in(&a.In, &b.In, &src.In),
		Count: src.Count, Bytes: src.Bytes, D: d(a.D, b.D),
		Outer: [2]blendInner{in(&a.Outer[0], &b.Outer[0], &src.Outer[0]), in(&a.Outer[1], &b.Outer[1], &src.Outer[1])},
	}
}

func blendBytes[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

func TestDefaultBlendLerpsFloatsAndStepsTheRest(t *testing.T) {
	typ := reflect.TypeOf(blendState{})
	var sb codec.SchemaBuilder
	id := wiretest.Component[blendState](&sb)
	s, err := sb.Build()
	require.NoError(t, err)
	for name, in := range map[string]codec.Interpolation{
		"DefaultInterpolation": codec.DefaultInterpolation(typ),
		"Schema.Interpolation": s.Interpolation(id),
	} {
		require.NotNil(t, in.Blend, name)
		assert.False(t, in.Snap, name)
		assert.Nil(t, in.Distance, name)
		rng := rand.New(rand.NewPCG(23, 29))
		for i := 0; i < 2000; i++ {
			a, b := randomBlendState(rng), randomBlendState(rng)
			for _, tt := range []float32{0, 0.25, 0.5, 0.999, 1, 1.5, 3, float32(rng.Float64())} {
				var out blendState
				in.Blend(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), tt)
				want := wantBlend(&a, &b, tt)
				require.Equal(t, want, out, "%s: blend at t=%v:\n a   %+v\n b   %+v", name, tt, a, b)

				switch tt {
				case 0:
					require.Equal(t, blendBytes(&a), blendBytes(&out), "%s: t=0 is a, bit for bit", name)
				case 1:
					require.Equal(t, blendBytes(&b), blendBytes(&out), "%s: t=1 is b, bit for bit", name)
				}
			}
		}
		// Booleans and integers hold a until t reaches 1, then take b.
		a := blendState{Flag: false, Count: 1, X: 0}
		b := blendState{Flag: true, Count: 2, X: 10}
		for _, c := range []struct {
			t     float32
			flag  bool
			count int32
			x     float32
		}{{0, false, 1, 0}, {0.5, false, 1, 5}, {0.9999, false, 1, 9.999}, {1, true, 2, 10}, {1.5, true, 2, 15}} {
			var out blendState
			in.Blend(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), c.t)
			assert.Equal(t, c.flag, out.Flag, "%s: Flag at t=%v", name, c.t)
			assert.Equal(t, c.count, out.Count, "%s: Count at t=%v", name, c.t)
			assert.InDelta(t, c.x, out.X, 1e-5, "%s: X at t=%v", name, c.t)
		}
	}
}

func TestDefaultBlendPlainFloatAndNonFloat(t *testing.T) {
	in := codec.DefaultInterpolation(reflect.TypeOf(float32(0)))
	a, b := float32(2), float32(6)
	var out float32
	in.Blend(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), 0.25)
	assert.Equal(t, float32(3), out)

	type tag struct{ A, B uint32 }
	in = codec.DefaultInterpolation(reflect.TypeOf(tag{}))
	ta, tb := tag{1, 2}, tag{3, 4}
	var to tag
	in.Blend(unsafe.Pointer(&ta), unsafe.Pointer(&tb), unsafe.Pointer(&to), 0.75)
	assert.Equal(t, ta, to, "no float field: a before t=1")
	in.Blend(unsafe.Pointer(&ta), unsafe.Pointer(&tb), unsafe.Pointer(&to), 1)
	assert.Equal(t, tb, to, "no float field: b from t=1")
}

// applyBuf is a value of size bytes followed by sentinel bytes Apply must
// leave alone.
type applyBuf struct {
	V    [5]byte
	Tail [3]byte
}

func TestApplySnapAndTeleportStep(t *testing.T) {
	const size = 5
	a := applyBuf{V: [5]byte{1, 2, 3, 4, 5}, Tail: [3]byte{91, 92, 93}}
	b := applyBuf{V: [5]byte{6, 7, 8, 9, 10}, Tail: [3]byte{94, 95, 96}}
	blends := 0
	blend := func(pa, pb, out unsafe.Pointer, tt float32) { blends++ }
	for _, c := range []struct {
		name       string
		snap, tele bool
	}{{"Snap", true, false}, {"teleported", false, true}, {"Snap and teleported", true, true}} {
		in := codec.Interpolation{Blend: blend, Snap: c.snap}
		for _, tt := range []float32{-1, 0, 0.5, 0.999, 1, 1.001, 2.5} {
			out := applyBuf{V: [5]byte{0xEE, 0xEE, 0xEE, 0xEE, 0xEE}, Tail: [3]byte{0xAA, 0xBB, 0xCC}}
			in.Apply(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), tt, size, c.tele)
			want := a.V
			if tt >= 1 {
				want = b.V
			}
			assert.Equal(t, want, out.V, "%s at t=%v", c.name, tt)
			assert.Equal(t, [3]byte{0xAA, 0xBB, 0xCC}, out.Tail, "%s at t=%v: wrote past size", c.name, tt)
		}
	}
	assert.Zero(t, blends, "a step must not call Blend")

	// Neither: Blend does the work, with the same pointers and t.
	var got []float32
	in := codec.Interpolation{Blend: func(pa, pb, out unsafe.Pointer, tt float32) {
		assert.Equal(t, unsafe.Pointer(&a), pa)
		assert.Equal(t, unsafe.Pointer(&b), pb)
		got = append(got, tt)
		*(*byte)(out) = 42
	}}
	var out applyBuf
	in.Apply(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), 0.3, size, false)
	in.Apply(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), 1.7, size, false)
	assert.Equal(t, []float32{0.3, 1.7}, got)
	assert.Equal(t, byte(42), out.V[0])
}

type blendVec struct{ X, Y float32 }

func TestTeleportedUsesDistanceAndThreshold(t *testing.T) {
	dist := wiretest.Distance(func(a, b *blendVec) float32 {
		return float32(math.Hypot(float64(b.X-a.X), float64(b.Y-a.Y)))
	})
	p := func(x, y float32) unsafe.Pointer { return unsafe.Pointer(&blendVec{x, y}) }

	none := codec.Interpolation{Teleport: 0}
	assert.False(t, none.Teleported(p(0, 0), p(1e9, 0)), "nil Distance never detects a teleport")

	in := codec.Interpolation{Distance: dist, Teleport: 5}
	assert.False(t, in.Teleported(p(0, 0), p(3, 4)), "distance 5 equals the threshold: not above it")
	assert.True(t, in.Teleported(p(0, 0), p(3, 4.01)), "distance above the threshold")
	assert.False(t, in.Teleported(p(1, 1), p(1, 1)))
	assert.True(t, in.Teleported(p(10, 0), p(-10, 0)))

	zero := codec.Interpolation{Distance: dist}
	assert.False(t, zero.Teleported(p(2, 2), p(2, 2)), "threshold 0: no movement is no teleport")
	assert.True(t, zero.Teleported(p(2, 2), p(2, 2.001)), "threshold 0: any movement is one")

	// Distance gets a and b in that order.
	var seen [2]blendVec
	order := codec.Interpolation{Distance: wiretest.Distance(func(a, b *blendVec) float32 {
		seen = [2]blendVec{*a, *b}
		return 0
	})}
	order.Teleported(p(1, 2), p(3, 4))
	assert.Equal(t, [2]blendVec{{1, 2}, {3, 4}}, seen)
}

func TestLerpAdapter(t *testing.T) {
	var gotA, gotB blendVec
	var gotT float32
	f := wiretest.Lerp(func(a, b *blendVec, t float32) blendVec {
		gotA, gotB, gotT = *a, *b, t
		return blendVec{codec.LerpFloat(a.X, b.X, t), b.Y}
	})
	a, b := blendVec{0, 1}, blendVec{8, 2}
	var out blendVec
	f(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), 0.25)
	assert.Equal(t, blendVec{2, 2}, out)
	assert.Equal(t, a, gotA)
	assert.Equal(t, b, gotB)
	assert.Equal(t, float32(0.25), gotT)
}

type blendAngle struct{ A float32 }

func (v *blendState) Serialize(*codec.Stream) {}

func (v *blendVec) Serialize(s *codec.Stream) { s.Float32(&v.X); s.Float32(&v.Y) }

func (v *blendAngle) Serialize(s *codec.Stream) { s.Float32(&v.A) }

// interpolated builds a schema of blendVec and blendAngle with set applied
// and returns it with their IDs, or Build's error.
func interpolated(set func(b *codec.SchemaBuilder, vec, ang codec.ComponentID)) (*codec.Schema, codec.ComponentID, codec.ComponentID, error) {
	var b codec.SchemaBuilder
	vec := wiretest.Component[blendVec](&b)
	ang := wiretest.Component[blendAngle](&b)
	set(&b, vec, ang)
	s, err := b.Build()
	return s, vec, ang, err
}

func TestInterpolate(t *testing.T) {
	dist := wiretest.Distance(func(a, b *blendVec) float32 { return float32(math.Abs(float64(b.X - a.X))) })

	// Errors name the value at fault.
	for want, in := range map[string]struct {
		id codec.ComponentID
		in codec.Interpolation
	}{
		"2":    {2, codec.Interpolation{}},
		"1000": {1000, codec.Interpolation{}},
		"-0.5": {0, codec.Interpolation{Distance: dist, Teleport: -0.5}},
		"NaN":  {0, codec.Interpolation{Distance: dist, Teleport: float32(math.NaN())}},
		"-Inf": {0, codec.Interpolation{Teleport: float32(math.Inf(-1))}},
	} {
		_, _, _, err := interpolated(func(b *codec.SchemaBuilder, _, _ codec.ComponentID) { b.Interpolate(in.id, in.in) })
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}

	// A nil Blend gets the type's default, the rest is kept.
	s, vec, _, err := interpolated(func(b *codec.SchemaBuilder, vec, _ codec.ComponentID) {
		b.Interpolate(vec, codec.Interpolation{Distance: dist, Teleport: 50})
	})
	require.NoError(t, err)
	in := s.Interpolation(vec)
	require.NotNil(t, in.Blend)
	assert.Equal(t, float32(50), in.Teleport)
	require.NotNil(t, in.Distance)
	a, b := blendVec{0, 10}, blendVec{4, 20}
	var out blendVec
	in.Blend(unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&out), 0.5)
	assert.Equal(t, blendVec{2, 15}, out, "default blend lerps both floats")
	assert.False(t, in.Teleported(unsafe.Pointer(&a), unsafe.Pointer(&b)))
	far := blendVec{51, 0}
	assert.True(t, in.Teleported(unsafe.Pointer(&a), unsafe.Pointer(&far)))

	// A threshold of 0 is allowed; so is +Inf (never a teleport).
	for _, th := range []float32{0, float32(math.Inf(1))} {
		s, vec, _, err := interpolated(func(b *codec.SchemaBuilder, vec, _ codec.ComponentID) {
			b.Interpolate(vec, codec.Interpolation{Distance: dist, Teleport: th})
		})
		require.NoError(t, err)
		in := s.Interpolation(vec)
		assert.Equal(t, th == 0, in.Teleported(unsafe.Pointer(&a), unsafe.Pointer(&far)))
	}

	// A Blend of its own is kept; Snap is kept.
	angles := wiretest.Lerp(func(a, b *blendAngle, t float32) blendAngle { return blendAngle{codec.LerpAngle(a.A, b.A, t)} })
	s, _, ang, err := interpolated(func(b *codec.SchemaBuilder, _, ang codec.ComponentID) {
		b.Interpolate(ang, codec.Interpolation{Blend: angles})
	})
	require.NoError(t, err)
	aa, ab := blendAngle{3}, blendAngle{-3}
	var ao blendAngle
	in = s.Interpolation(ang)
	in.Blend(unsafe.Pointer(&aa), unsafe.Pointer(&ab), unsafe.Pointer(&ao), 0.5)
	assert.InDelta(t, math.Pi, math.Abs(float64(ao.A)), 1e-6, "the schema's angle blend goes through π")
	s, _, ang, err = interpolated(func(b *codec.SchemaBuilder, _, ang codec.ComponentID) {
		b.Interpolate(ang, codec.Interpolation{Snap: true})
	})
	require.NoError(t, err)
	in = s.Interpolation(ang)
	assert.True(t, in.Snap)
	require.NotNil(t, in.Blend)
	in.Apply(unsafe.Pointer(&aa), unsafe.Pointer(&ab), unsafe.Pointer(&ao), 0.5, unsafe.Sizeof(ao), false)
	assert.Equal(t, aa, ao, "Snap holds a before t=1")

	assert.Panics(t, func() { s.Interpolation(7) }, "Interpolation of an unknown ID")
}

// lerpAngleByMod is LerpAngle as it was first written, with math.Mod on
// every call: the reference its shortcut must match bit for bit, since
// server and client blend with it.
func lerpAngleByMod(a, b, t float32) float32 {
	d := math.Mod(float64(b)-float64(a), 2*math.Pi)
	if d >= math.Pi {
		d -= 2 * math.Pi
	} else if d < -math.Pi {
		d += 2 * math.Pi
	}
	r := math.Mod(float64(a+float32(float32(d)*t))+math.Pi, 2*math.Pi)
	if r < 0 {
		r += 2 * math.Pi
	}
	return float32(r - math.Pi)
}

func TestLerpAngleSameBitsAsMod(t *testing.T) {
	pi := float32(math.Pi)
	edge := []float32{0, float32(math.Copysign(0, -1)), pi, -pi, 2 * pi, -2 * pi, math.Nextafter32(pi, 0), math.Nextafter32(-pi, 0),
		math.Nextafter32(2*pi, 0), math.Nextafter32(-2*pi, 0), 3 * pi, -7, 100, -1e6, 1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	rng := rand.New(rand.NewPCG(1, 2))
	vals := append([]float32(nil), edge...)
	for range 2000 {
		vals = append(vals, float32(rng.Float64()*2*math.Pi-math.Pi), float32(rng.NormFloat64()*20))
	}
	for i, a := range vals {
		for _, b := range []float32{vals[(i*7+1)%len(vals)], vals[(i*13+5)%len(vals)], a} {
			for _, tt := range []float32{0, 0.25, 0.5, 1, 1.5, float32(rng.Float64() * 2)} {
				got, want := codec.LerpAngle(a, b, tt), lerpAngleByMod(a, b, tt)
				require.Equal(t, math.Float32bits(want), math.Float32bits(got), "LerpAngle(%v, %v, %v) = %v, math.Mod gives %v", a, b, tt, got, want)
			}
		}
	}
}
