// Package wiretest holds the fixtures the tests of the wire packages
// (codec, protocol, control) share: a test schema with four components and
// four ghost types, a test input type, and the typed declarations that
// package netsync offers games, over the internal schema builder.
package wiretest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// The replicated components of the test schema. Their sizes differ (12, 8,
// 6 and 1 bytes) so that snapshot storage alignment is exercised.
type (
	Pos    struct{ X, Y, Z float32 }
	Vel    struct{ X, Y float32 }
	Health struct {
		HP    uint8
		Armor uint16 // 0..1000
		Alive bool
	}
	Team struct{ ID uint8 } // 0..2
)

// The test components' wire forms.
var (
	PosQ = codec.Range(-500, 500, 0.01)
	VelQ = codec.Range(-50, 50, 0.01)
)

func (v *Pos) Serialize(s *codec.Stream) {
	s.Float(&v.X, PosQ)
	s.Float(&v.Y, PosQ)
	s.Float(&v.Z, PosQ)
}

func (v *Vel) Serialize(s *codec.Stream) { s.Float(&v.X, VelQ); s.Float(&v.Y, VelQ) }

func (v *Health) Serialize(s *codec.Stream) {
	codec.Int(s, &v.HP, 0, 255)
	codec.Int(s, &v.Armor, 0, 1000)
	s.Bool(&v.Alive)
}

func (v *Team) Serialize(s *codec.Stream) { codec.Int(s, &v.ID, 0, 2) }

// Schema is the schema most tests of this package share: four
// components and four ghost types, one of them with no component at all.
type Schema struct {
	*codec.Schema
	PosQ, VelQ                     codec.Quantizer
	Pos, Vel, Health, Team         codec.ComponentID
	Player, Rocket, Pickup, Marker codec.GhostTypeID
}

func NewSchema(t testing.TB) *Schema {
	t.Helper()
	ts := &Schema{PosQ: PosQ, VelQ: VelQ}
	var b codec.SchemaBuilder
	ts.Pos = Component[Pos](&b)
	ts.Vel = Component[Vel](&b)
	ts.Health = Component[Health](&b)
	ts.Team = Component[Team](&b)
	ts.Player = b.GhostType("player", ts.Pos, ts.Vel, ts.Health, ts.Team)
	ts.Rocket = b.GhostType("rocket", ts.Pos, ts.Vel)
	ts.Pickup = b.GhostType("pickup", ts.Team, ts.Pos) // not in declaration order
	ts.Marker = b.GhostType("marker")
	s, err := b.Build()
	require.NoError(t, err)
	ts.Schema = s
	return ts
}

// Ghost is a ghost's identity and the values of every test component;
// Values returns pointers to the ones its type replicates, in order.
type Ghost struct {
	components.Ghost
	Pos    Pos
	Vel    Vel
	Health Health
	Team   Team
}

func (g *Ghost) Values(ts *Schema) []unsafe.Pointer {
	gt, ok := ts.GhostType(codec.GhostTypeID(g.Type))
	if !ok {
		panic(fmt.Sprintf("ghost type %d not in the test schema", g.Type))
	}
	out := make([]unsafe.Pointer, len(gt.Components))
	for i, c := range gt.Components {
		switch c {
		case ts.Pos:
			out[i] = unsafe.Pointer(&g.Pos)
		case ts.Vel:
			out[i] = unsafe.Pointer(&g.Vel)
		case ts.Health:
			out[i] = unsafe.Pointer(&g.Health)
		case ts.Team:
			out[i] = unsafe.Pointer(&g.Team)
		}
	}
	return out
}

// Quantize applies every replicated component's round trip in place, as
// the server does at the end of its tick.
func (g *Ghost) Quantize(ts *Schema, q *codec.Coder) {
	gt, _ := ts.GhostType(codec.GhostTypeID(g.Type))
	for i, p := range g.Values(ts) {
		q.Quantize(ts.Schema, gt.Components[i], p)
	}
}

// RequireGhostState checks that ghost gi of s has g's identity and the
// (already Quantized) values of g, bit for bit.
func RequireGhostState(t testing.TB, ts *Schema, g *Ghost, s *protocol.Snapshot, gi int) {
	t.Helper()
	require.Equal(t, g.Ghost, s.Ghosts[gi].Ghost, "ghost %d identity", gi)
	gt, _ := ts.GhostType(codec.GhostTypeID(g.Type))
	for ci, p := range g.Values(ts) {
		size := ts.ComponentType(gt.Components[ci]).Size()
		want := unsafe.Slice((*byte)(p), size)
		got := unsafe.Slice((*byte)(s.Value(gi, ci)), size)
		require.Equal(t, want, got, "ghost %d (ID %d) component %d (%v)", gi, g.ID, ci, ts.ComponentType(gt.Components[ci]))
	}
}

// Input is the test game's input type: two move axes, a jump that must
// count exactly once and a steering notch in -3..3.
type Input struct {
	X, Y  float32
	Jump  components.Press
	Steer int8
}

// InputQ codes the move axes: 129 codes in 8 bits, so codes 129..255
// are refused by the decoder.
var InputQ = codec.Range(-1, 1, 1.0/64)

func (in *Input) Serialize(s *codec.Stream) {
	s.Float(&in.X, InputQ)
	s.Float(&in.Y, InputQ)
	s.Press(&in.Jump)
	codec.Int(s, &in.Steer, -3, 3)
}

// NewInputSchema returns a schema with one component and Input as its
// input type, treated by rules.
func NewInputSchema(t testing.TB, rules InputRulesOf[Input]) *codec.Schema {
	t.Helper()
	var b codec.SchemaBuilder
	Component[Pos](&b)
	DeclareInput[Input](&b, rules)
	s, err := b.Build()
	require.NoError(t, err)
	return s
}

// NewHeaderOnlySchema returns a schema without an input type.
func NewHeaderOnlySchema(t testing.TB) *codec.Schema {
	t.Helper()
	var b codec.SchemaBuilder
	Component[Pos](&b)
	s, err := b.Build()
	require.NoError(t, err)
	return s
}

// RecOf returns the bytes of in: the record the framework stores.
func RecOf(in *Input) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(in)), unsafe.Sizeof(*in))
}

// InputOf returns the input a record holds.
func InputOf(t testing.TB, rec []byte) Input {
	t.Helper()
	var in Input
	require.Len(t, rec, int(unsafe.Sizeof(in)), "a record of %d bytes, want %d", len(rec), unsafe.Sizeof(in))
	copy(RecOf(&in), rec)
	return in
}

// RequireSameInputs checks that two runs of records of the input schema s
// hold the same inputs, field by field: records a game wrote keep its
// padding bytes, which the wire does not carry.
func RequireSameInputs(t testing.TB, s *codec.Schema, want, got []byte, msgAndArgs ...any) {
	t.Helper()
	size := s.InputSize()
	require.Len(t, got, len(want), msgAndArgs...)
	for i := 0; i < len(want); i += size {
		if w, g := InputBits(InputOf(t, want[i:i+size])), InputBits(InputOf(t, got[i:i+size])); w != g {
			require.Equal(t, w, g, msgAndArgs...) // fails, with the difference
		}
	}
}

// InputBits is an input's fields bit for bit (so -0 and NaN compare).
func InputBits(in Input) [4]uint32 {
	return [4]uint32{math.Float32bits(in.X), math.Float32bits(in.Y), uint32(in.Jump), uint32(uint8(in.Steer))}
}

// WildFloat returns a float32 from a mix of ordinary, tiny, huge and
// special values.
func WildFloat(rng *rand.Rand) float32 {
	switch rng.IntN(12) {
	case 0:
		return float32(math.NaN())
	case 1:
		return float32(math.Inf(1 - 2*rng.IntN(2)))
	case 2:
		return math.Float32frombits(rng.Uint32()) // anything, NaN payloads included
	case 3:
		return float32(math.Copysign(0, -1))
	case 4:
		return float32((rng.Float64() - 0.5) * 1e30)
	case 5:
		return float32(rng.NormFloat64() * 1e-30)
	case 6:
		return float32(rng.IntN(129)-64) / 64 // on the grid
	default:
		return float32(rng.NormFloat64())
	}
}

// RandomInput returns an input with wild axes, any press value and any
// steering.
func RandomInput(rng *rand.Rand) Input {
	return Input{X: WildFloat(rng), Y: WildFloat(rng), Jump: components.Press(rng.IntN(3) * rng.IntN(200)), Steer: int8(rng.Uint32())}
}

// Quantized returns in as the client predicts with it.
func Quantized(s *codec.Schema, in Input) Input {
	var c codec.Coder
	c.QuantizeInput(s, unsafe.Pointer(&in))
	return in
}

// ClampX is a game rule: X beyond ±0.5 is clamped onto the grid, and
// steering -3 is refused as a cheat.
func ClampX(in *Input) (bool, string) {
	if in.Steer == -3 {
		return false, "steer"
	}
	if in.X > 0.5 || in.X < -0.5 {
		in.X = max(-0.5, min(0.5, in.X))
		return true, ""
	}
	return false, ""
}

// Component declares T as netsync.Component does.
func Component[T any, PT interface {
	*T
	Serialize(s *codec.Stream)
}](b *codec.SchemaBuilder) codec.ComponentID {
	return b.AddComponent(reflect.TypeFor[T](), func(p unsafe.Pointer, s *codec.Stream) { PT((*T)(p)).Serialize(s) })
}

// Message is netsync.Message without the public wrapper.
func Message[T any, PT interface {
	*T
	Serialize(s *codec.Stream)
}](b *codec.SchemaBuilder, rules codec.MessageRules) codec.MessageID {
	return b.AddMessage(reflect.TypeFor[T](), func(p unsafe.Pointer, s *codec.Stream) { PT((*T)(p)).Serialize(s) }, rules)
}

// InputRulesOf is netsync.InputRules.
type InputRulesOf[T any] struct {
	Validate   func(in *T) (clamped bool, refuse string)
	Missing    codec.MissingPolicy
	Substitute func(last, out *T)
}

// DeclareInput declares T as netsync.Input does.
func DeclareInput[T any, PT interface {
	*T
	Serialize(s *codec.Stream)
}](b *codec.SchemaBuilder, rules InputRulesOf[T]) {
	r := codec.InputRules{Missing: rules.Missing}
	if v := rules.Validate; v != nil {
		r.Validate = func(p unsafe.Pointer) (bool, string) { return v((*T)(p)) }
	}
	if f := rules.Substitute; f != nil {
		r.Substitute = func(last, out unsafe.Pointer) { f((*T)(last), (*T)(out)) }
	}
	b.AddInput(reflect.TypeFor[T](), func(p unsafe.Pointer, s *codec.Stream) { PT((*T)(p)).Serialize(s) }, r)
}

// Lerp is netsync.Lerp.
func Lerp[T any](f func(a, b *T, t float32) T) codec.BlendFunc {
	return func(a, b, out unsafe.Pointer, t float32) { *(*T)(out) = f((*T)(a), (*T)(b), t) }
}

// Distance is netsync.Distance.
func Distance[T any](f func(a, b *T) float32) func(a, b unsafe.Pointer) float32 {
	return func(a, b unsafe.Pointer) float32 { return f((*T)(a), (*T)(b)) }
}
