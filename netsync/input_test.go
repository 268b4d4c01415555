package netsync_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// tInput is the test game's input type: two move axes, a jump that must
// count exactly once and a steering notch in -3..3.
type tInput struct {
	X, Y  float32
	Jump  components.Press
	Steer int8
}

// testInputQ codes the move axes: 129 codes in 8 bits, so codes 129..255
// are refused by the decoder.
var testInputQ = netsync.Range(-1, 1, 1.0/64)

func (in *tInput) Serialize(s *netsync.Stream) {
	s.Float(&in.X, testInputQ)
	s.Float(&in.Y, testInputQ)
	s.Press(&in.Jump)
	netsync.Int(s, &in.Steer, -3, 3)
}

// newInputSchema returns a schema with one component and tInput as its
// input type, treated by rules.
func newInputSchema(t testing.TB, rules netsync.InputRules[tInput]) *netsync.Schema {
	t.Helper()
	var b netsync.SchemaBuilder
	netsync.Component[tPos](&b)
	netsync.Input[tInput](&b, rules)
	s, err := b.Build()
	require.NoError(t, err)
	return s
}

// newHeaderOnlySchema returns a schema without an input type.
func newHeaderOnlySchema(t testing.TB) *netsync.Schema {
	t.Helper()
	var b netsync.SchemaBuilder
	netsync.Component[tPos](&b)
	s, err := b.Build()
	require.NoError(t, err)
	return s
}

// recOf returns the bytes of in: the record the framework stores.
func recOf(in *tInput) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(in)), unsafe.Sizeof(*in))
}

// inputOf returns the input a record holds.
func inputOf(t testing.TB, rec []byte) tInput {
	t.Helper()
	var in tInput
	require.Len(t, rec, int(unsafe.Sizeof(in)), "a record of %d bytes, want %d", len(rec), unsafe.Sizeof(in))
	copy(recOf(&in), rec)
	return in
}

// requireSameInputs checks that two runs of records of the input schema s
// hold the same inputs, field by field: records a game wrote keep its
// padding bytes, which the wire does not carry.
func requireSameInputs(t testing.TB, s *netsync.Schema, want, got []byte, msgAndArgs ...any) {
	t.Helper()
	size := s.InputSize()
	require.Len(t, got, len(want), msgAndArgs...)
	for i := 0; i < len(want); i += size {
		if w, g := inputBits(inputOf(t, want[i:i+size])), inputBits(inputOf(t, got[i:i+size])); w != g {
			require.Equal(t, w, g, msgAndArgs...) // fails, with the difference
		}
	}
}

// inputBits is an input's fields bit for bit (so -0 and NaN compare).
func inputBits(in tInput) [4]uint32 {
	return [4]uint32{math.Float32bits(in.X), math.Float32bits(in.Y), uint32(in.Jump), uint32(uint8(in.Steer))}
}

// wildFloat returns a float32 from a mix of ordinary, tiny, huge and
// special values.
func wildFloat(rng *rand.Rand) float32 {
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

// randomInput returns an input with wild axes, any press value and any
// steering.
func randomInput(rng *rand.Rand) tInput {
	return tInput{X: wildFloat(rng), Y: wildFloat(rng), Jump: components.Press(rng.IntN(3) * rng.IntN(200)), Steer: int8(rng.Uint32())}
}

// quantized returns in as the client predicts with it.
func quantized(s *netsync.Schema, in tInput) tInput {
	var c netsync.Coder
	c.QuantizeInput(s, unsafe.Pointer(&in))
	return in
}

func TestInputDeclaration(t *testing.T) {
	s := newInputSchema(t, netsync.InputRules[tInput]{})
	assert.Equal(t, reflect.TypeFor[tInput](), s.InputType())
	assert.Equal(t, int(unsafe.Sizeof(tInput{})), s.InputSize())

	none := newHeaderOnlySchema(t)
	assert.Nil(t, none.InputType())
	assert.Zero(t, none.InputSize())
	assert.NotEqual(t, none.Hash(), s.Hash(), "the input type is part of the schema hash")
	assert.Equal(t, s.Hash(), newInputSchema(t, netsync.InputRules[tInput]{Missing: netsync.MissingNeutral}).Hash(),
		"the server's rules do not change the wire form")

	var b netsync.SchemaBuilder
	netsync.Component[tPos](&b)
	netsync.Input[tHealth](&b, netsync.InputRules[tHealth]{})
	other, err := b.Build()
	require.NoError(t, err)
	assert.NotEqual(t, other.Hash(), s.Hash(), "another input type is another schema")
}

// badInput codes a field with an unconfigured quantizer.
type badInput struct{ X float32 }

func (in *badInput) Serialize(s *netsync.Stream) { s.Float(&in.X, netsync.Quantizer{}) }

func TestInputDeclarationErrors(t *testing.T) {
	tests := map[string]struct {
		declare func(b *netsync.SchemaBuilder)
		want    []string
	}{
		"two input types": {func(b *netsync.SchemaBuilder) {
			netsync.Input[tInput](b, netsync.InputRules[tInput]{})
			netsync.Input[tHealth](b, netsync.InputRules[tHealth]{})
		}, []string{"tHealth", "declared after", "tInput", "one input type"}},
		"unknown missing policy": {func(b *netsync.SchemaBuilder) {
			netsync.Input[tInput](b, netsync.InputRules[tInput]{Missing: 2})
		}, []string{"tInput", "missing-input policy 2"}},
		"invalid description": {func(b *netsync.SchemaBuilder) {
			netsync.Input[badInput](b, netsync.InputRules[badInput]{})
		}, []string{"badInput", "unconfigured"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := buildErr(tt.declare)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestMissingPolicyString(t *testing.T) {
	assert.Equal(t, "repeat-last", netsync.MissingRepeatLast.String())
	assert.Equal(t, "neutral", netsync.MissingNeutral.String())
	assert.Equal(t, "MissingPolicy(9)", netsync.MissingPolicy(9).String())
}

func TestQuantizeInputIsIdempotentAndInRange(t *testing.T) {
	s := newInputSchema(t, netsync.InputRules[tInput]{})
	rng := rand.New(rand.NewPCG(21, 22))
	onGrid := func(v float32) bool { return v == float32(math.Round(float64(v)*64))/64 }
	for range 300_000 {
		in := randomInput(rng)
		q := quantized(s, in)
		again := quantized(s, q)
		require.Equal(t, inputBits(q), inputBits(again), "quantizing %+v gave %+v, then %+v", in, q, again)
		ok := q.X >= -1 && q.X <= 1 && q.Y >= -1 && q.Y <= 1 && onGrid(q.X) && onGrid(q.Y) &&
			(q.Jump == 0) == (in.Jump == 0) && q.Jump <= 1 && q.Steer >= -3 && q.Steer <= 3
		require.True(t, ok, "QuantizeInput(%+v) = %+v: axes on the 1/64 grid in [-1, 1], a press 0 or 1, steering in -3..3", in, q)

	}
}

func TestQuantizeInputExamples(t *testing.T) {
	s := newInputSchema(t, netsync.InputRules[tInput]{})
	q := quantized(s, tInput{X: 0.3, Y: -7, Jump: 200, Steer: 100})
	assert.Equal(t, tInput{X: float32(19) / 64, Y: -1, Jump: 1, Steer: 3}, q, "0.3·64 = 19.2 rounds to 19; Y and steering clamp; any press is 1")

	var c netsync.Coder
	clamped, refuse := c.QuantizeInput(newHeaderOnlySchema(t), nil)
	assert.False(t, clamped, "without an input type there is nothing to quantize")
	assert.Empty(t, refuse)
}

// clampX is a game rule: X beyond ±0.5 is clamped onto the grid, and
// steering -3 is refused as a cheat.
func clampX(in *tInput) (bool, string) {
	if in.Steer == -3 {
		return false, "steer"
	}
	if in.X > 0.5 || in.X < -0.5 {
		in.X = max(-0.5, min(0.5, in.X))
		return true, ""
	}
	return false, ""
}

func TestQuantizeInputValidatesAsTheServerWill(t *testing.T) {
	s := newInputSchema(t, netsync.InputRules[tInput]{Validate: clampX})
	var c netsync.Coder
	in := tInput{X: 0.9, Steer: 1}
	clamped, refuse := c.QuantizeInput(s, unsafe.Pointer(&in))
	assert.True(t, clamped)
	assert.Empty(t, refuse)
	assert.Equal(t, float32(0.5), in.X, "the client predicts with the clamped value")

	in = tInput{X: 0.25, Steer: -7}
	clamped, refuse = c.QuantizeInput(s, unsafe.Pointer(&in))
	assert.False(t, clamped)
	assert.Equal(t, "steer", refuse, "steering -7 quantizes to -3, which the rule refuses")
}

func TestQuantizeInputMatchesTheWire(t *testing.T) {
	// Whatever the sampler produced, the quantized input is what the
	// server decodes, bit for bit: the client predicts with exactly the
	// server's input.
	s := newInputSchema(t, netsync.InputRules[tInput]{})
	rng := rand.New(rand.NewPCG(23, 24))
	var got netsync.InputBatch
	buf := make([]byte, 0, 64)
	for range 100_000 {
		in := quantized(s, randomInput(rng))
		b := netsync.InputBatch{Heads: []components.InputHeader{{Tick: gw.Tick(rng.Uint32())}}, Data: recOf(&in)}
		buf = netsync.AppendInputs(buf[:0], s, &b)
		require.NoError(t, netsync.DecodeInputs(buf, s, &got), "%+v", in)
		require.Equal(t, inputBits(in), inputBits(inputOf(t, got.Data)), "%+v", in)
	}
}

func TestQuantizedInputIsNeverClampedByTheServer(t *testing.T) {
	// The server's Validate clamps (and counts) what the client's own
	// Validate already clamped: an honest client's quantized input is
	// never touched, or its prediction would differ from the server's
	// simulation.
	s := newInputSchema(t, netsync.InputRules[tInput]{Validate: clampX})
	rng := rand.New(rand.NewPCG(25, 26))
	stream := newInputStream(t, s, netsync.InputStreamOptions{})
	buf := newInputBuffer(t, s, netsync.InputBufferOptions{})
	var batch, got netsync.InputBatch
	var pkt []byte
	clamped := 0
	for tick := gw.Tick(1); tick <= 100_000; tick++ {
		raw := randomInput(rng)
		stored, refuse := stream.Record(components.InputHeader{Tick: tick}, recOf(&raw))
		predicted := inputOf(t, stored)
		if predicted.X == 0.5 || predicted.X == -0.5 {
			clamped++
		}
		stream.Confirm(tick - 1)
		stream.Batch(&batch)
		pkt = netsync.AppendInputs(pkt[:0], s, &batch)
		require.NoError(t, netsync.DecodeInputs(pkt, s, &got))
		last := len(got.Heads) - 1
		res := buf.Add(got.Heads[last], got.Data[last*s.InputSize():], tick-1)
		applied, rec, real := buf.Take(tick)
		require.Equal(t, tick, applied.Tick)
		if refuse != "" {
			require.Equal(t, netsync.AddRefused, res, "the server refuses what the client was told it would")
			require.False(t, real)
			continue
		}
		require.Equal(t, netsync.AddAccepted, res)
		require.True(t, real)
		require.Equal(t, inputBits(predicted), inputBits(inputOf(t, rec)), "the server applies exactly what the client predicted with")
		require.Zero(t, buf.Stats().Clamped, "quantized %+v was clamped", predicted)
	}
	assert.Greater(t, clamped, 10000, "the client clamped often")
	assert.Positive(t, buf.Stats().Refused)
	assert.Equal(t, buf.Stats().Refused, buf.Stats().RefusedBy["steer"])
}
