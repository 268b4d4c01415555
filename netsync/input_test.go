package netsync_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// len2 is the squared length of a move vector as the server checks it:
// the float32 axes widened to float64.
func moveLength2(x, y float32) float64 { return float64(x)*float64(x) + float64(y)*float64(y) }

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
		return float32(int(rng.IntN(255)-127)) / 127 // on the move grid
	default:
		return float32(rng.NormFloat64())
	}
}

func TestQuantizeMoveIsIdempotentAndNeverLongerThanOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	onGrid := func(v float32) bool { return v == float32(math.Round(float64(v)*127))/127 }
	for i := range 1_000_000 {
		var x, y float32
		if i%2 == 0 {
			x, y = wildFloat(rng), wildFloat(rng)
		} else {
			x, y = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		qx, qy := netsync.QuantizeMove(x, y)
		if l := moveLength2(qx, qy); !(l <= 1) { // NaN fails too
			t.Fatalf("QuantizeMove(%v, %v) = (%v, %v): squared length %v", x, y, qx, qy, l)
		}
		rx, ry := netsync.QuantizeMove(qx, qy)
		if math.Float32bits(qx) != math.Float32bits(rx) || math.Float32bits(qy) != math.Float32bits(ry) {
			t.Fatalf("QuantizeMove(%v, %v) = (%v, %v), then (%v, %v)", x, y, qx, qy, rx, ry)
		}
		if !onGrid(qx) || !onGrid(qy) {
			t.Fatalf("QuantizeMove(%v, %v) = (%v, %v): not whole 1/127 steps", x, y, qx, qy)
		}
		// Short vectors only lose precision toward zero (but for values
		// within 1e-4 step of the grid, which snap to it), less than a step.
		if moveLength2(x, y) <= 1 {
			for _, a := range [][2]float32{{x, qx}, {y, qy}} {
				in, out := math.Abs(float64(a[0])), math.Abs(float64(a[1]))
				if out > in+1e-4/127 || in-out >= 1.0/127+1e-6 || a[0]*a[1] < 0 {
					t.Fatalf("QuantizeMove(%v, %v) = (%v, %v): axis %v became %v", x, y, qx, qy, a[0], a[1])
				}
			}
		}
	}
}

func TestQuantizeMoveKeepsEveryGridPoint(t *testing.T) {
	inside := 0
	for cx := -127; cx <= 127; cx++ {
		for cy := -127; cy <= 127; cy++ {
			x, y := float32(cx)/127, float32(cy)/127
			qx, qy := netsync.QuantizeMove(x, y)
			if cx*cx+cy*cy <= 127*127 {
				inside++
				require.LessOrEqual(t, moveLength2(x, y), 1.0, "grid point (%d, %d)", cx, cy)
				require.Equal(t, math.Float32bits(x), math.Float32bits(qx), "grid point (%d, %d)", cx, cy)
				require.Equal(t, math.Float32bits(y), math.Float32bits(qy), "grid point (%d, %d)", cx, cy)
			} else {
				// Corners beyond the unit circle are pulled onto it, keeping
				// their quadrant, and stay put after that.
				require.LessOrEqual(t, moveLength2(qx, qy), 1.0)
				require.Greater(t, moveLength2(qx, qy), 0.97, "(%d, %d) → (%v, %v)", cx, cy, qx, qy)
				require.False(t, qx*x < 0 || qy*y < 0, "(%d, %d) changed quadrant", cx, cy)
				rx, ry := netsync.QuantizeMove(qx, qy)
				require.Equal(t, [2]float32{qx, qy}, [2]float32{rx, ry})
			}
		}
	}
	assert.Greater(t, inside, 50000)
}

func TestQuantizeMoveScalesLongVectorsToUnitLength(t *testing.T) {
	for _, v := range [][2]float32{
		{10, 0}, {0, -10}, {3, 4}, {-1, -1}, {1e30, 1e30}, {math.MaxFloat32, math.MaxFloat32},
		{-math.MaxFloat32, math.MaxFloat32 / 2}, {1e-30, 5},
	} {
		qx, qy := netsync.QuantizeMove(v[0], v[1])
		l := math.Sqrt(moveLength2(qx, qy))
		assert.LessOrEqual(t, l, 1.0, "%v", v)
		assert.Greater(t, l, 1-2.0/127, "%v keeps (about) unit length: (%v, %v)", v, qx, qy)
		// Same direction: the cross product is tiny, the dot product positive.
		ux, uy := float64(v[0])/math.Hypot(float64(v[0]), float64(v[1])), float64(v[1])/math.Hypot(float64(v[0]), float64(v[1]))
		assert.InDelta(t, 0, ux*float64(qy)-uy*float64(qx), 2.0/127, "%v direction: (%v, %v)", v, qx, qy)
		assert.Greater(t, ux*float64(qx)+uy*float64(qy), 0.9, "%v", v)
	}
}

func TestQuantizeMoveZeroesNonFiniteAxes(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, v := range [][2]float32{{nan, 0.5}, {0.5, nan}, {inf, 0}, {0, -inf}, {nan, inf}} {
		x, y := netsync.QuantizeMove(v[0], v[1])
		assert.Equal(t, uint32(0), math.Float32bits(x), "%v", v)
		assert.Equal(t, uint32(0), math.Float32bits(y), "%v", v)
	}
}

// randomCommand returns a command with every field drawn from wildFloat.
func randomCommand(rng *rand.Rand) components.InputCommand {
	return components.InputCommand{
		Tick: gw.Tick(rng.Uint32()), Buttons: rng.Uint32(),
		MoveX: wildFloat(rng), MoveY: wildFloat(rng), Aim: wildFloat(rng) * 10,
		ViewTick: gw.Tick(rng.Uint32() * uint32(rng.IntN(2))), ViewFraction: wildFloat(rng), InterpolationDelay: wildFloat(rng) * 100,
		OriginX: wildFloat(rng), OriginY: wildFloat(rng), OriginZ: wildFloat(rng),
	}
}

// pastView moves a random view tick into the window the wire carries:
// 0..2^20-1 ticks before the input's tick.
func pastView(c *components.InputCommand) {
	if c.ViewTick != 0 {
		c.ViewTick = c.Tick.Add(-int(uint32(c.ViewTick) % (1 << 20)))
	}
}

func commandBits(c components.InputCommand) [11]uint32 {
	f := math.Float32bits
	return [11]uint32{uint32(c.Tick), c.Buttons, f(c.MoveX), f(c.MoveY), f(c.Aim), uint32(c.ViewTick), f(c.ViewFraction),
		f(c.InterpolationDelay), f(c.OriginX), f(c.OriginY), f(c.OriginZ)}
}

func TestQuantizeInputIsIdempotentAndInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	for range 300_000 {
		in := randomCommand(rng)
		c := in
		netsync.QuantizeInput(&c)
		again := c
		netsync.QuantizeInput(&again)
		if commandBits(c) != commandBits(again) {
			t.Fatalf("quantizing %+v gave %+v, then %+v", in, c, again)
		}
		var problems []string
		check := func(ok bool, what string) {
			if !ok {
				problems = append(problems, what)
			}
		}
		check(in.Tick == c.Tick && in.Buttons == c.Buttons && in.ViewTick == c.ViewTick, "integers kept")
		check(moveLength2(c.MoveX, c.MoveY) <= 1, "move length at most 1")
		check(c.Aim >= -math.Pi && c.Aim < math.Pi, "aim in [-π, π)")
		check(c.ViewFraction >= 0 && c.ViewFraction < 1, "view fraction in [0, 1)")
		check(c.InterpolationDelay >= 0 && c.InterpolationDelay <= netsync.MaxInterpolationDelay, "delay in range")
		check(c.ViewTick != 0 || c.ViewFraction == 0 && c.InterpolationDelay == 0, "no view tick, no fraction or delay on the wire")
		for _, o := range []float32{c.OriginX, c.OriginY, c.OriginZ} {
			check(finite(o), "finite origin")
			check(o != 0 || !math.Signbit(float64(o)), "-0 origin is +0 on the wire")
		}
		if problems != nil {
			t.Fatalf("QuantizeInput(%+v) = %+v: want %v", in, c, problems)
		}
	}
}

func TestQuantizeInputMatchesTheWire(t *testing.T) {
	// Whatever the sampler produced, the quantized command is what the
	// server decodes, bit for bit: the client predicts with exactly the
	// server's input.
	rng := rand.New(rand.NewPCG(23, 24))
	var got netsync.InputBatch
	buf := make([]byte, 0, 64)
	for range 100_000 {
		c := randomCommand(rng)
		pastView(&c)
		netsync.QuantizeInput(&c)
		buf = netsync.AppendInputs(buf, &netsync.InputBatch{Inputs: []components.InputCommand{c}})
		require.NoError(t, netsync.DecodeInputs(buf, &got), "%+v", c)
		require.Equal(t, commandBits(c), commandBits(got.Inputs[0]), "%+v", c)
	}
}

func TestQuantizeInputExamples(t *testing.T) {
	c := components.InputCommand{
		Tick: 50, MoveX: 0.5, MoveY: 0.5, Aim: 4, ViewTick: 48,
		ViewFraction: 0.3, InterpolationDelay: 2.03, OriginX: 1.25,
	}
	netsync.QuantizeInput(&c)
	assert.Equal(t, float32(63)/127, c.MoveX, "0.5·127 = 63.5 truncates to 63")
	assert.Equal(t, float32(63)/127, c.MoveY)
	assert.InDelta(t, 4-2*math.Pi, c.Aim, 2*math.Pi/65536, "aim wraps into [-π, π)")
	assert.Equal(t, float32(76)/256, c.ViewFraction, "0.3·256 = 76.8 truncates to 76")
	assert.Equal(t, float32(2), c.InterpolationDelay, "2.03·16 = 32.48 rounds to 32")
	assert.Equal(t, float32(1.25), c.OriginX, "origins are sent as they are")

	huge := components.InputCommand{ViewTick: 1, ViewFraction: 1e30, InterpolationDelay: 1e30}
	netsync.QuantizeInput(&huge)
	assert.Equal(t, float32(255)/256, huge.ViewFraction, "fractions clamp below 1")
	assert.Equal(t, netsync.MaxInterpolationDelay, huge.InterpolationDelay, "delays clamp to the maximum")

	bad := components.InputCommand{MoveX: float32(math.NaN()), Aim: float32(math.Inf(1)), ViewTick: 3,
		ViewFraction: -0.5, InterpolationDelay: float32(math.NaN()), OriginY: float32(math.Inf(-1))}
	netsync.QuantizeInput(&bad)
	assert.Equal(t, components.InputCommand{ViewTick: 3}, bad)
}

func TestQuantizedInputIsNeverClampedByTheServer(t *testing.T) {
	// The server clamps (and counts) move vectors longer than 1; an honest
	// client's quantized input must never be touched, or its prediction
	// would differ from the server's simulation.
	rng := rand.New(rand.NewPCG(25, 26))
	buf, err := netsync.NewInputBuffer(netsync.InputBufferOptions{Capacity: 64})
	require.NoError(t, err)
	var batch netsync.InputBatch
	var pkt []byte
	tick := gw.Tick(1)
	check := func(c components.InputCommand) {
		t.Helper()
		netsync.QuantizeInput(&c)
		c.Tick = tick
		c.ViewTick = min(c.ViewTick, c.Tick)
		pkt = netsync.AppendInputs(pkt, &netsync.InputBatch{Inputs: []components.InputCommand{c}})
		require.NoError(t, netsync.DecodeInputs(pkt, &batch))
		require.Equal(t, netsync.Accepted, buf.Add(batch.Inputs[0], tick-1))
		got, real := buf.Take(tick)
		require.True(t, real)
		require.Equal(t, commandBits(c), commandBits(got), "the server applies exactly what the client predicted with")
		require.Zero(t, buf.Stats().Clamped, "quantized %v, %v was clamped", c.MoveX, c.MoveY)
		tick++
	}
	for cx := -127; cx <= 127; cx++ {
		for cy := -127; cy <= 127; cy++ {
			check(components.InputCommand{MoveX: float32(cx) / 127, MoveY: float32(cy) / 127})
		}
	}
	for range 200_000 {
		check(randomCommand(rng))
	}
	for _, a := range []float64{0, math.Pi / 4, 1, 2, 3} { // full stick in many directions
		for _, s := range []float64{1, 1 + 1e-7, 1 - 1e-7, 2} {
			check(components.InputCommand{MoveX: float32(s * math.Cos(a)), MoveY: float32(s * math.Sin(a))})
		}
	}
}
