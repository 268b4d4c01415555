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

func newInputBuffer(t testing.TB, opts netsync.InputBufferOptions) *netsync.InputBuffer {
	t.Helper()
	b, err := netsync.NewInputBuffer(opts)
	require.NoError(t, err)
	return b
}

// cmd returns a quantized command for tick with the given buttons and move.
func cmd(tick gw.Tick, buttons uint32, x, y float32) components.InputCommand {
	c := components.InputCommand{Tick: tick, Buttons: buttons, MoveX: x, MoveY: y}
	netsync.QuantizeInput(&c)
	return c
}

func TestInputBufferOptions(t *testing.T) {
	for _, tt := range []struct {
		opts netsync.InputBufferOptions
		text string
	}{
		{netsync.InputBufferOptions{Capacity: 7}, "capacity 7 outside 8..4096"},
		{netsync.InputBufferOptions{Capacity: 4097}, "capacity 4097"},
		{netsync.InputBufferOptions{Capacity: -1}, "capacity -1"},
		{netsync.InputBufferOptions{MaxAhead: 64}, "max-ahead 64 outside 1..63"},
		{netsync.InputBufferOptions{Capacity: 8, MaxAhead: 8}, "max-ahead 8 outside 1..7"},
		{netsync.InputBufferOptions{MaxAhead: -3}, "max-ahead -3"},
		{netsync.InputBufferOptions{Missing: 2}, "policy 2"},
	} {
		_, err := netsync.NewInputBuffer(tt.opts)
		require.Error(t, err, "%+v", tt.opts)
		assert.Contains(t, err.Error(), tt.text)
	}
	for _, opts := range []netsync.InputBufferOptions{
		{}, {Capacity: 8}, {Capacity: 4096, MaxAhead: 4095}, {Capacity: 8, MaxAhead: 1, Missing: netsync.Neutral},
	} {
		_, err := netsync.NewInputBuffer(opts)
		assert.NoError(t, err, "%+v", opts)
	}
	assert.Equal(t, "repeat-last", netsync.RepeatLast.String())
	assert.Equal(t, "neutral", netsync.Neutral.String())
	assert.Equal(t, "MissingPolicy(9)", netsync.MissingPolicy(9).String())
}

func TestInputBufferDefaultsAllowCapacityMinusOneAhead(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{})
	assert.Equal(t, netsync.Accepted, b.Add(cmd(163, 0, 0, 0), 100), "63 ahead with the default capacity 64")
	assert.Equal(t, netsync.TooFarAhead, b.Add(cmd(164, 0, 0, 0), 100))
}

func TestInputBufferDropsAndCountsDuplicates(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{})
	first := cmd(11, 1, 0.5, 0)
	assert.Equal(t, netsync.Accepted, b.Add(first, 10))
	second := cmd(11, 2, -0.5, 0) // same tick, other content: the first copy wins
	assert.Equal(t, netsync.Duplicate, b.Add(second, 10))
	assert.Equal(t, netsync.Duplicate, b.Add(first, 10))
	s := b.Stats()
	assert.Equal(t, uint64(3), s.Received)
	assert.Equal(t, uint64(1), s.Accepted)
	assert.Equal(t, uint64(2), s.Duplicates)
	assert.Equal(t, 1, s.Buffered)

	got, real := b.Take(11)
	assert.True(t, real)
	assert.Equal(t, first, got)
	// Applied now: copies arriving later are duplicates too.
	assert.Equal(t, netsync.Duplicate, b.Add(first, 11))
	assert.Equal(t, uint64(3), b.Stats().Duplicates)
	assert.Equal(t, 0, b.Stats().Buffered)
}

func TestInputBufferTicksAlreadyRunAreDuplicateOrLateOnce(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{})
	// Ticks at or before current that were never taken as missing are
	// duplicates (the server had them, or never ran them here).
	assert.Equal(t, netsync.Duplicate, b.Add(cmd(10, 0, 0, 0), 10))
	assert.Equal(t, netsync.Duplicate, b.Add(cmd(3, 0, 0, 0), 10))

	_, real := b.Take(11) // runs without input
	require.False(t, real)
	assert.Equal(t, netsync.Late, b.Add(cmd(11, 0, 0, 0), 11), "the first copy of a tick run without it")
	assert.Equal(t, netsync.Duplicate, b.Add(cmd(11, 0, 0, 0), 11), "late only once")
	assert.Equal(t, netsync.Duplicate, b.Add(cmd(11, 0, 0, 0), 12))
	s := b.Stats()
	assert.Equal(t, uint64(1), s.Late)
	assert.Equal(t, uint64(4), s.Duplicates)
	assert.Equal(t, uint64(1), s.Missing)
	assert.Zero(t, s.Accepted)
	assert.Zero(t, s.Buffered)

	// A late arrival is not applied to any later tick.
	got, real := b.Take(12)
	assert.False(t, real)
	assert.Equal(t, gw.Tick(12), got.Tick)
}

func TestInputBufferRefusesTicksTooFarAhead(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{Capacity: 16, MaxAhead: 5})
	assert.Equal(t, netsync.Accepted, b.Add(cmd(105, 0, 0, 0), 100))
	assert.Equal(t, netsync.TooFarAhead, b.Add(cmd(106, 0, 0, 0), 100))
	assert.Equal(t, netsync.TooFarAhead, b.Add(cmd(gw.Tick(100).Add(math.MaxInt32), 0, 0, 0), 100), "the farthest tick after 100")
	assert.Equal(t, uint64(2), b.Stats().TooFarAhead)
	// Ticks wrap: the last tick of the range is 101 ticks before tick 100.
	assert.Equal(t, netsync.Duplicate, b.Add(cmd(math.MaxUint32, 0, 0, 0), 100))
	assert.Equal(t, uint64(2), b.Stats().TooFarAhead)
	assert.Equal(t, netsync.Accepted, b.Add(cmd(106, 0, 0, 0), 101), "accepted once the server caught up")
}

func TestInputBufferRejectsNonFiniteValues(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{})
	set := []func(c *components.InputCommand, v float32){
		func(c *components.InputCommand, v float32) { c.MoveX = v },
		func(c *components.InputCommand, v float32) { c.MoveY = v },
		func(c *components.InputCommand, v float32) { c.Aim = v },
		func(c *components.InputCommand, v float32) { c.ViewFraction = v },
		func(c *components.InputCommand, v float32) { c.InterpolationDelay = v },
		func(c *components.InputCommand, v float32) { c.OriginX = v },
		func(c *components.InputCommand, v float32) { c.OriginY = v },
		func(c *components.InputCommand, v float32) { c.OriginZ = v },
	}
	n := uint64(0)
	for i, f := range set {
		for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			c := components.InputCommand{Tick: 20}
			f(&c, v)
			assert.Equal(t, netsync.Rejected, b.Add(c, 10), "field %d = %v", i, v)
			n++
		}
	}
	assert.Equal(t, n, b.Stats().Rejected)
	assert.Zero(t, b.Stats().Buffered)
	assert.Equal(t, netsync.Accepted, b.Add(components.InputCommand{Tick: 20}, 10), "a refused copy does not occupy the tick")
}

func TestInputBufferClampsLongMoveVectors(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{})
	for i, v := range [][2]float32{{10, 0}, {0, -10}, {6, 8}, {1, 1}, {math.MaxFloat32, -math.MaxFloat32}} {
		tick := gw.Tick(11 + i)
		require.Equal(t, netsync.Accepted, b.Add(components.InputCommand{Tick: tick, MoveX: v[0], MoveY: v[1]}, 10))
		got, real := b.Take(tick)
		require.True(t, real)
		l := math.Sqrt(moveLength2(got.MoveX, got.MoveY))
		assert.LessOrEqual(t, l, 1.0, "%v", v)
		assert.Greater(t, l, 0.98, "%v", v)
		dot := (float64(v[0])*float64(got.MoveX) + float64(v[1])*float64(got.MoveY)) / math.Hypot(float64(v[0]), float64(v[1]))
		assert.Greater(t, dot, 0.98, "%v keeps its direction: (%v, %v)", v, got.MoveX, got.MoveY)
		assert.Equal(t, uint64(i+1), b.Stats().Clamped)
	}
	got := [2]float32{}
	require.Equal(t, netsync.Accepted, b.Add(components.InputCommand{Tick: 30, MoveX: 6, MoveY: 8}, 29))
	c, _ := b.Take(30)
	got[0], got[1] = c.MoveX, c.MoveY
	assert.Equal(t, [2]float32{76.0 / 127, 101.0 / 127}, got, "(6, 8)/10 = (0.6, 0.8) truncated to 1/127 steps")
	// Length exactly 1 is not clamped; (0.6, 0.8) is, as float32 rounds
	// both axes up.
	require.Equal(t, netsync.Accepted, b.Add(components.InputCommand{Tick: 31, MoveX: 1}, 30))
	require.Equal(t, netsync.Accepted, b.Add(components.InputCommand{Tick: 32, MoveY: -1}, 30))
	assert.Equal(t, uint64(6), b.Stats().Clamped)
	require.Equal(t, netsync.Accepted, b.Add(components.InputCommand{Tick: 33, MoveX: 0.6, MoveY: 0.8}, 30))
	assert.Equal(t, uint64(7), b.Stats().Clamped)
}

func TestInputBufferTakeAppliesExactlyOneInputPerTick(t *testing.T) {
	for _, policy := range []netsync.MissingPolicy{netsync.RepeatLast, netsync.Neutral} {
		b := newInputBuffer(t, netsync.InputBufferOptions{Missing: policy})
		_, ok := b.Applied()
		assert.False(t, ok)

		// Before any real input, both policies give a neutral command.
		got, real := b.Take(1)
		assert.False(t, real)
		assert.Equal(t, components.InputCommand{Tick: 1}, got)

		held := components.InputCommand{Tick: 3, Buttons: 5, MoveX: 1, Aim: 0.5, ViewTick: 2, ViewFraction: 0.5, InterpolationDelay: 2, OriginX: 9}
		netsync.QuantizeInput(&held)
		require.Equal(t, netsync.Accepted, b.Add(cmd(2, 1, 0, 1), 1))
		require.Equal(t, netsync.Accepted, b.Add(held, 1))

		got, real = b.Take(2)
		assert.True(t, real)
		assert.Equal(t, cmd(2, 1, 0, 1), got)
		got, real = b.Take(3)
		assert.True(t, real)
		assert.Equal(t, held, got)

		for tick := gw.Tick(4); tick < 8; tick++ {
			got, real = b.Take(tick)
			assert.False(t, real, "tick %d has no input", tick)
			want := components.InputCommand{Tick: tick}
			if policy == netsync.RepeatLast {
				want = held
				want.Tick = tick
			}
			assert.Equal(t, want, got, "%v at tick %d", policy, tick)
			applied, ok := b.Applied()
			assert.True(t, ok)
			assert.Equal(t, tick, applied)
		}
		// A real input again; repeating then uses the newest real one.
		require.Equal(t, netsync.Accepted, b.Add(cmd(8, 8, 0, 0), 7))
		got, real = b.Take(8)
		assert.True(t, real)
		assert.Equal(t, uint32(8), got.Buttons)
		got, _ = b.Take(9)
		if policy == netsync.RepeatLast {
			assert.Equal(t, cmd(9, 8, 0, 0), got)
		} else {
			assert.Equal(t, components.InputCommand{Tick: 9}, got)
		}
		s := b.Stats()
		assert.Equal(t, uint64(3), s.Applied)
		assert.Equal(t, uint64(6), s.Missing)
		assert.Zero(t, s.Buffered)
		assert.Equal(t, 2, s.MaxBuffered)
	}
}

func TestInputBufferDropsAnInputWhoseTickWasSkipped(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{Capacity: 8})
	require.Equal(t, netsync.Accepted, b.Add(cmd(5, 5, 0, 0), 4))
	// The server never takes tick 5; tick 13 shares its slot.
	got, real := b.Take(13)
	assert.False(t, real, "tick 5's input is not tick 13's")
	assert.Equal(t, gw.Tick(13), got.Tick)
	assert.Zero(t, got.Buttons)
	assert.Zero(t, b.Stats().Buffered)
}

func TestInputBufferSpeedHackGainsNothing(t *testing.T) {
	// A client sends inputs for two ticks per server tick. It runs ahead
	// until MaxAhead refuses it, and the server never applies more than
	// one input per tick.
	const ticks = 20000
	b := newInputBuffer(t, netsync.InputBufferOptions{Capacity: 32, MaxAhead: 20})
	next := gw.Tick(1)
	for tick := gw.Tick(1); tick <= ticks; tick++ {
		for range 2 {
			if b.Add(cmd(next, uint32(next), 0, 0), tick-1) == netsync.Accepted {
				next++
			}
		}
		got, real := b.Take(tick)
		require.Equal(t, tick, got.Tick)
		if real {
			require.Equal(t, uint32(tick), got.Buttons, "tick %d got the input of another tick", tick)
		}
		s := b.Stats()
		require.LessOrEqual(t, s.Buffered, 20)
		require.LessOrEqual(t, s.MaxBuffered, 32)
	}
	s := b.Stats()
	assert.LessOrEqual(t, s.Applied, uint64(ticks))
	assert.Equal(t, uint64(ticks), s.Applied+s.Missing)
	assert.Equal(t, uint64(ticks), s.Applied, "the hacker never misses a tick")
	assert.Greater(t, s.TooFarAhead, uint64(ticks/2), "and half of what it sends is refused")
	assert.Equal(t, s.Received, s.Accepted+s.Duplicates+s.Late+s.TooFarAhead+s.Rejected)
	assert.Equal(t, 20, s.MaxBuffered)
}

func TestInputBufferLongRandomRun(t *testing.T) {
	// Redundant batches over a link with delay, jitter, loss, duplication
	// and reordering, from a client whose clock wanders (sometimes two
	// inputs per server tick). Every tick takes one input, the client's own
	// when it arrived in time, and the counters add up.
	rng := rand.New(rand.NewPCG(51, 52))
	const ticks = 50000
	for _, capacity := range []int{8, 64, 256} {
		b := newInputBuffer(t, netsync.InputBufferOptions{Capacity: capacity, Missing: netsync.Neutral})
		type packet struct {
			at     gw.Tick
			inputs []components.InputCommand
		}
		var inflight []packet
		sent := map[gw.Tick]components.InputCommand{}
		clientTick := gw.Tick(3)
		lead := 3 // how far ahead of the server the client runs
		arrived := map[gw.Tick]bool{}
		takenMissing := map[gw.Tick]bool{}
		var real uint64
		for tick := gw.Tick(1); tick <= ticks; tick++ {
			// The client: its lead over the server wanders (clock drift)
			// and sometimes leaps (a speed hack burst), so it produces
			// zero, one or several inputs per server tick.
			lead = max(-3, min(capacity+4, lead+rng.IntN(3)-1))
			if rng.IntN(200) == 0 {
				lead += 6
			}
			for clientTick.Before(tick.Add(lead)) {
				clientTick++
				c := components.InputCommand{Tick: clientTick, Buttons: rng.Uint32(), MoveX: float32(rng.NormFloat64()), MoveY: float32(rng.NormFloat64())}
				netsync.QuantizeInput(&c)
				sent[clientTick] = c
				first := clientTick.Add(-min(int(clientTick.Sub(1)), rng.IntN(5)))
				var batch []components.InputCommand
				for t := first; !t.After(clientTick); t++ {
					batch = append(batch, sent[t])
				}
				if rng.IntN(10) > 0 { // 10% loss
					inflight = append(inflight, packet{at: tick.Add(rng.IntN(8)), inputs: batch})
				}
				if rng.IntN(20) == 0 { // 5% duplication
					inflight = append(inflight, packet{at: tick.Add(rng.IntN(8)), inputs: batch})
				}
			}
			// The server: receive, then take exactly one input.
			keep := inflight[:0]
			for _, p := range inflight {
				if p.at.After(tick) {
					keep = append(keep, p)
					continue
				}
				for _, c := range p.inputs {
					res := b.Add(c, tick-1)
					switch res {
					case netsync.Accepted:
						require.False(t, arrived[c.Tick], "tick %d accepted twice", c.Tick)
						arrived[c.Tick] = true
					case netsync.Late:
						require.True(t, takenMissing[c.Tick], "tick %d late but not taken as missing", c.Tick)
						delete(takenMissing, c.Tick)
					}
				}
			}
			inflight = keep
			got, ok := b.Take(tick)
			require.Equal(t, tick, got.Tick)
			if ok {
				real++
				require.Equal(t, sent[tick], got, "tick %d", tick)
			} else {
				require.Equal(t, components.InputCommand{Tick: tick}, got)
				takenMissing[tick] = true
			}
			if tick%1000 == 0 {
				s := b.Stats()
				require.GreaterOrEqual(t, s.Buffered, 0)
				require.LessOrEqual(t, s.Buffered, capacity)
				require.LessOrEqual(t, s.MaxBuffered, capacity)
			}
		}
		s := b.Stats()
		assert.Equal(t, uint64(ticks), s.Applied+s.Missing, "capacity %d", capacity)
		assert.Equal(t, real, s.Applied)
		assert.LessOrEqual(t, s.Applied, uint64(ticks))
		assert.Equal(t, s.Received, s.Accepted+s.Duplicates+s.Late+s.TooFarAhead+s.Rejected)
		assert.Zero(t, s.Clamped, "quantized inputs are never clamped")
		assert.Zero(t, s.Rejected)
		assert.Positive(t, s.Duplicates)
		assert.Positive(t, s.Missing)
		assert.LessOrEqual(t, s.MaxBuffered, capacity)
		assert.GreaterOrEqual(t, s.Buffered, 0)
		t.Logf("capacity %d: %+v", capacity, s)
	}
}

func TestInputBufferAddAndTakeAllocateNothing(t *testing.T) {
	b := newInputBuffer(t, netsync.InputBufferOptions{})
	tick := gw.Tick(1)
	c := cmd(0, 3, 0.5, 0.5)
	allocs := testing.AllocsPerRun(1000, func() {
		c.Tick = tick + 2
		b.Add(c, tick-1)
		b.Add(c, tick-1)
		b.Take(tick)
		tick++
	})
	assert.Zero(t, allocs)
}
