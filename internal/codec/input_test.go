package codec_test

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
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

func TestInputDeclaration(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	assert.Equal(t, reflect.TypeFor[wiretest.Input](), s.InputType())
	assert.Equal(t, int(unsafe.Sizeof(wiretest.Input{})), s.InputSize())

	none := wiretest.NewHeaderOnlySchema(t)
	assert.Nil(t, none.InputType())
	assert.Zero(t, none.InputSize())
	assert.NotEqual(t, none.Hash(), s.Hash(), "the input type is part of the schema hash")
	assert.Equal(t, s.Hash(), wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Missing: codec.MissingNeutral}).Hash(),
		"the server's rules do not change the wire form")

	var b codec.SchemaBuilder
	wiretest.Component[wiretest.Pos](&b)
	wiretest.DeclareInput[wiretest.Health](&b, wiretest.InputRulesOf[wiretest.Health]{})
	other, err := b.Build()
	require.NoError(t, err)
	assert.NotEqual(t, other.Hash(), s.Hash(), "another input type is another schema")
}

// badInput codes a field with an unconfigured quantizer.
type badInput struct{ X float32 }

func (in *badInput) Serialize(s *codec.Stream) { s.Float(&in.X, codec.Quantizer{}) }

func TestInputDeclarationErrors(t *testing.T) {
	tests := map[string]struct {
		declare func(b *codec.SchemaBuilder)
		want    []string
	}{
		"two input types": {func(b *codec.SchemaBuilder) {
			wiretest.DeclareInput[wiretest.Input](b, wiretest.InputRulesOf[wiretest.Input]{})
			wiretest.DeclareInput[wiretest.Health](b, wiretest.InputRulesOf[wiretest.Health]{})
		}, []string{"wiretest.Health", "declared after", "wiretest.Input", "one input type"}},
		"unknown missing policy": {func(b *codec.SchemaBuilder) {
			wiretest.DeclareInput[wiretest.Input](b, wiretest.InputRulesOf[wiretest.Input]{Missing: 2})
		}, []string{"wiretest.Input", "missing-input policy 2"}},
		"invalid description": {func(b *codec.SchemaBuilder) {
			wiretest.DeclareInput[badInput](b, wiretest.InputRulesOf[badInput]{})
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
	assert.Equal(t, "repeat-last", codec.MissingRepeatLast.String())
	assert.Equal(t, "neutral", codec.MissingNeutral.String())
	assert.Equal(t, "MissingPolicy(9)", codec.MissingPolicy(9).String())
}

func TestQuantizeInputIsIdempotentAndInRange(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	rng := rand.New(rand.NewPCG(21, 22))
	onGrid := func(v float32) bool { return v == float32(math.Round(float64(v)*64))/64 }
	for range 300_000 {
		in := wiretest.RandomInput(rng)
		q := wiretest.Quantized(s, in)
		again := wiretest.Quantized(s, q)
		require.Equal(t, wiretest.InputBits(q), wiretest.InputBits(again), "quantizing %+v gave %+v, then %+v", in, q, again)
		ok := q.X >= -1 && q.X <= 1 && q.Y >= -1 && q.Y <= 1 && onGrid(q.X) && onGrid(q.Y) &&
			(q.Jump == 0) == (in.Jump == 0) && q.Jump <= 1 && q.Steer >= -3 && q.Steer <= 3
		require.True(t, ok, "QuantizeInput(%+v) = %+v: axes on the 1/64 grid in [-1, 1], a press 0 or 1, steering in -3..3", in, q)

	}
}

func TestQuantizeInputExamples(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	q := wiretest.Quantized(s, wiretest.Input{X: 0.3, Y: -7, Jump: 200, Steer: 100})
	assert.Equal(t, wiretest.Input{X: float32(19) / 64, Y: -1, Jump: 1, Steer: 3}, q, "0.3·64 = 19.2 rounds to 19; Y and steering clamp; any press is 1")

	var c codec.Coder
	clamped, refuse := c.QuantizeInput(wiretest.NewHeaderOnlySchema(t), nil)
	assert.False(t, clamped, "without an input type there is nothing to quantize")
	assert.Empty(t, refuse)
}

func TestQuantizeInputValidatesAsTheServerWill(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	var c codec.Coder
	in := wiretest.Input{X: 0.9, Steer: 1}
	clamped, refuse := c.QuantizeInput(s, unsafe.Pointer(&in))
	assert.True(t, clamped)
	assert.Empty(t, refuse)
	assert.Equal(t, float32(0.5), in.X, "the client predicts with the clamped value")

	in = wiretest.Input{X: 0.25, Steer: -7}
	clamped, refuse = c.QuantizeInput(s, unsafe.Pointer(&in))
	assert.False(t, clamped)
	assert.Equal(t, "steer", refuse, "steering -7 quantizes to -3, which the rule refuses")
}

func TestQuantizeInputMatchesTheWire(t *testing.T) {
	// Whatever the sampler produced, the quantized input is what the
	// server decodes, bit for bit: the client predicts with exactly the
	// server's input.
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	rng := rand.New(rand.NewPCG(23, 24))
	var got protocol.InputBatch
	buf := make([]byte, 0, 64)
	for range 100_000 {
		in := wiretest.Quantized(s, wiretest.RandomInput(rng))
		b := protocol.InputBatch{Heads: []components.InputHeader{{Tick: gw.Tick(rng.Uint32())}}, Data: wiretest.RecOf(&in)}
		buf = protocol.AppendInputs(buf[:0], s, &b)
		require.NoError(t, protocol.DecodeInputs(buf, s, &got), "%+v", in)
		require.Equal(t, wiretest.InputBits(in), wiretest.InputBits(wiretest.InputOf(t, got.Data)), "%+v", in)
	}
}
