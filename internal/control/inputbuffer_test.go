package control_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

func newInputBuffer(t testing.TB, s *codec.Schema, opts control.InputBufferOptions) *control.InputBuffer {
	t.Helper()
	b, err := control.NewInputBuffer(s, opts)
	require.NoError(t, err)
	return b
}

// hd returns the header of an input for tick without a view.
func hd(tick gw.Tick) components.InputHeader { return components.InputHeader{Tick: tick} }

// rec returns the record of an input with the given steering and move.
func rec(steer int8, x float32) []byte {
	in := wiretest.Input{X: x, Steer: steer}
	return wiretest.RecOf(&in)
}

// jump returns the record of an input pressing jump, with steering steer.
func jump(steer int8) []byte {
	in := wiretest.Input{Jump: 1, Steer: steer}
	return wiretest.RecOf(&in)
}

func TestInputBufferOptions(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	for _, tt := range []struct {
		opts control.InputBufferOptions
		text string
	}{
		{control.InputBufferOptions{Capacity: 7}, "capacity 7 outside 8..4096"},
		{control.InputBufferOptions{Capacity: 4097}, "capacity 4097"},
		{control.InputBufferOptions{Capacity: -1}, "capacity -1"},
		{control.InputBufferOptions{MaxAhead: 64}, "max-ahead 64 outside 1..63"},
		{control.InputBufferOptions{Capacity: 8, MaxAhead: 8}, "max-ahead 8 outside 1..7"},
		{control.InputBufferOptions{MaxAhead: -3}, "max-ahead -3"},
	} {
		_, err := control.NewInputBuffer(s, tt.opts)
		require.Error(t, err, "%+v", tt.opts)
		assert.Contains(t, err.Error(), tt.text)
	}
	for _, opts := range []control.InputBufferOptions{
		{}, {Capacity: 8}, {Capacity: 4096, MaxAhead: 4095}, {Capacity: 8, MaxAhead: 1},
	} {
		_, err := control.NewInputBuffer(s, opts)
		assert.NoError(t, err, "%+v", opts)
	}
}

func TestInputBufferDefaultsAllowCapacityMinusOneAhead(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{})
	assert.Equal(t, control.AddAccepted, b.Add(hd(163), rec(0, 0), 100), "63 ahead with the default capacity 64")
	assert.Equal(t, control.AddTooFarAhead, b.Add(hd(164), rec(0, 0), 100))
}

func TestInputBufferDropsAndCountsDuplicates(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	b := newInputBuffer(t, s, control.InputBufferOptions{})
	first := components.InputHeader{Tick: 11, HasView: true, ViewTick: 9, ViewFraction: 0.5, InterpolationDelay: 2}
	assert.Equal(t, control.AddAccepted, b.Add(first, rec(1, 0.5), 10))
	// Same tick, other content: the first copy wins.
	assert.Equal(t, control.AddDuplicate, b.Add(hd(11), rec(2, -0.5), 10))
	assert.Equal(t, control.AddDuplicate, b.Add(first, rec(1, 0.5), 10))
	st := b.Stats()
	assert.Equal(t, uint64(3), st.Received)
	assert.Equal(t, uint64(1), st.Accepted)
	assert.Equal(t, uint64(2), st.Duplicates)
	assert.Equal(t, 1, st.Buffered)

	h, got, real := b.Take(11)
	assert.True(t, real)
	assert.Equal(t, first, h)
	assert.Equal(t, wiretest.Input{X: 0.5, Steer: 1}, wiretest.InputOf(t, got))
	// Applied now: copies arriving later are duplicates too.
	assert.Equal(t, control.AddDuplicate, b.Add(first, rec(1, 0.5), 11))
	assert.Equal(t, uint64(3), b.Stats().Duplicates)
	assert.Equal(t, 0, b.Stats().Buffered)
}

func TestInputBufferCopiesTheRecord(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX}), control.InputBufferOptions{})
	r := rec(2, 0.25)
	require.Equal(t, control.AddAccepted, b.Add(hd(5), r, 4))
	clear(r) // the caller reuses its packet buffer
	_, got, _ := b.Take(5)
	assert.Equal(t, wiretest.Input{X: 0.25, Steer: 2}, wiretest.InputOf(t, got))

	// Validate clamps the buffer's copy, never the caller's record: on
	// time or late.
	clamped := wiretest.Input{X: 1, Jump: 1, Steer: 1}
	require.Equal(t, control.AddAccepted, b.Add(hd(6), wiretest.RecOf(&clamped), 5))
	assert.Equal(t, wiretest.Input{X: 1, Jump: 1, Steer: 1}, clamped, "on time")
	_, _, real := b.Take(6)
	require.True(t, real)
	_, _, real = b.Take(7)
	require.False(t, real)
	require.Equal(t, control.AddLate, b.Add(hd(7), wiretest.RecOf(&clamped), 7))
	assert.Equal(t, wiretest.Input{X: 1, Jump: 1, Steer: 1}, clamped, "late")
	assert.Equal(t, uint64(2), b.Stats().Clamped)
}

func TestInputBufferTicksAlreadyRunAreDuplicateOrLateOnce(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{})
	// Ticks at or before current that were never taken as missing are
	// duplicates (the server had them, or never ran them here).
	assert.Equal(t, control.AddDuplicate, b.Add(hd(10), rec(0, 0), 10))
	assert.Equal(t, control.AddDuplicate, b.Add(hd(3), rec(0, 0), 10))

	_, _, real := b.Take(11) // runs without input
	require.False(t, real)
	assert.Equal(t, control.AddLate, b.Add(hd(11), rec(1, 0), 11), "the first copy of a tick run without it")
	assert.Equal(t, control.AddDuplicate, b.Add(hd(11), rec(1, 0), 11), "late only once")
	assert.Equal(t, control.AddDuplicate, b.Add(hd(11), rec(1, 0), 12))
	st := b.Stats()
	assert.Equal(t, uint64(1), st.Late)
	assert.Equal(t, uint64(4), st.Duplicates)
	assert.Equal(t, uint64(1), st.Missing)
	assert.Zero(t, st.LatePresses, "the late input pressed nothing")
	assert.Zero(t, st.Accepted)
	assert.Zero(t, st.Buffered)

	// A late arrival is not taken for a later tick, but it is the client's
	// newest input: the next substitute repeats it (before, it repeated
	// the input of a tick before 11, here none).
	h, got, real := b.Take(12)
	assert.False(t, real)
	assert.Equal(t, gw.Tick(12), h.Tick)
	assert.Equal(t, wiretest.Input{Steer: 1}, wiretest.InputOf(t, got))
	// An older late arrival does not replace it.
	_, _, real = b.Take(13)
	require.False(t, real)
	b.Take(14)
	assert.Equal(t, control.AddLate, b.Add(hd(14), rec(2, 0), 14))
	assert.Equal(t, control.AddLate, b.Add(hd(13), rec(3, 0), 14))
	_, got, _ = b.Take(15)
	assert.Equal(t, wiretest.Input{Steer: 2}, wiretest.InputOf(t, got))
}

func TestInputBufferRefusesTicksTooFarAhead(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{Capacity: 16, MaxAhead: 5})
	assert.Equal(t, control.AddAccepted, b.Add(hd(105), rec(0, 0), 100))
	assert.Equal(t, control.AddTooFarAhead, b.Add(hd(106), rec(0, 0), 100))
	assert.Equal(t, control.AddTooFarAhead, b.Add(hd(gw.Tick(100).Add(math.MaxInt32)), rec(0, 0), 100), "the farthest tick after 100")
	assert.Equal(t, uint64(2), b.Stats().TooFarAhead)
	// Ticks wrap: the last tick of the range is 101 ticks before tick 100.
	assert.Equal(t, control.AddDuplicate, b.Add(hd(math.MaxUint32), rec(0, 0), 100))
	assert.Equal(t, uint64(2), b.Stats().TooFarAhead)
	assert.Equal(t, control.AddAccepted, b.Add(hd(106), rec(0, 0), 101), "accepted once the server caught up")
}

func TestInputBufferWrapsAcrossTickZero(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{Capacity: 8})
	start := gw.Tick(math.MaxUint32 - 20)
	for i := range 40 {
		tick := start.Add(i)
		require.Equal(t, control.AddAccepted, b.Add(hd(tick.Add(2)), rec(int8(tick.Add(2)%3), 0), tick.Add(-1).Add(2)), "tick %d", tick.Add(2))
		if i == 0 {
			require.Equal(t, control.AddAccepted, b.Add(hd(tick), rec(int8(tick%3), 0), tick.Add(-1)))
			require.Equal(t, control.AddAccepted, b.Add(hd(tick.Add(1)), rec(int8(tick.Add(1)%3), 0), tick.Add(-1)))
		}
		h, got, real := b.Take(tick)
		require.True(t, real, "tick %d", tick)
		require.Equal(t, tick, h.Tick)
		require.Equal(t, int8(tick%3), wiretest.InputOf(t, got).Steer, "tick %d got another tick's input", tick)
	}
	assert.Zero(t, b.Stats().Missing)
	assert.Equal(t, uint64(40), b.Stats().Applied)
}

// A capacity that does not divide 2³² still holds MaxAhead inputs across
// the wrap: 2³²−96 and 0 are 96 ticks apart, and must not share a slot.
func TestInputBufferFullAcrossTheWrapWithAnyCapacity(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{Capacity: 100})
	current := gw.Tick(math.MaxUint32 - 96) // the server's newest tick
	for i := 1; i <= 99; i++ {
		tick := current.Add(i)
		require.Equal(t, control.AddAccepted, b.Add(hd(tick), rec(int8(i%3), 0), current), "tick %d", tick)
	}
	for i := 1; i <= 99; i++ {
		tick := current.Add(i)
		h, got, real := b.Take(tick)
		require.True(t, real, "tick %d", tick)
		require.Equal(t, tick, h.Tick)
		require.Equal(t, int8(i%3), wiretest.InputOf(t, got).Steer, "tick %d got another tick's input", tick)
	}
	assert.Zero(t, b.Stats().Missing)
	assert.Equal(t, 99, b.Stats().MaxBuffered)
}

func TestInputBufferValidateRefusesAndCountsByReason(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: func(in *wiretest.Input) (bool, string) {
		if in.Steer < 0 {
			return false, fmt.Sprintf("reason %d", -in.Steer)
		}
		return false, ""
	}})
	b := newInputBuffer(t, s, control.InputBufferOptions{})
	for steer := int8(-1); steer >= -3; steer-- {
		assert.Equal(t, control.AddRefused, b.Add(hd(20), rec(steer, 0), 10), "steering %d", steer)
	}
	assert.Equal(t, control.AddRefused, b.Add(hd(21), rec(-1, 0), 10))
	st := b.Stats()
	assert.Equal(t, uint64(4), st.Refused)
	assert.Equal(t, map[string]uint64{"reason 1": 2, "reason 2": 1, "reason 3": 1}, st.RefusedBy)
	assert.Zero(t, st.Buffered)
	assert.Zero(t, st.Accepted)
	assert.Equal(t, st.Received, st.Accepted+st.Duplicates+st.Late+st.TooFarAhead+st.Refused)

	assert.Equal(t, control.AddAccepted, b.Add(hd(20), rec(2, 0), 10), "a refused copy does not occupy the tick")
	_, got, real := b.Take(11)
	assert.False(t, real)
	assert.Equal(t, wiretest.Input{}, wiretest.InputOf(t, got))
	// A refused tick runs on the missing-input policy.
	for tick := gw.Tick(12); tick <= 21; tick++ {
		_, got, real = b.Take(tick)
		assert.Equal(t, tick == 20, real, "tick %d", tick)
	}
	assert.Equal(t, wiretest.Input{Steer: 2}, wiretest.InputOf(t, got), "tick 21 repeats tick 20's input")
}

func TestInputBufferCountsAtMostEightRefusalReasons(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: func(in *wiretest.Input) (bool, string) {
		return false, fmt.Sprintf("reason %v", in.X)
	}})
	b := newInputBuffer(t, s, control.InputBufferOptions{})
	for i := range 12 {
		require.Equal(t, control.AddRefused, b.Add(hd(20), rec(0, float32(i)/64), 10))
	}
	// The first eight reasons again: still counted one by one.
	for i := range 8 {
		require.Equal(t, control.AddRefused, b.Add(hd(20), rec(0, float32(i)/64), 10))
	}
	want := map[string]uint64{"other": 4}
	for i := range 8 {
		want[fmt.Sprintf("reason %v", float32(i)/64)] = 2
	}
	st := b.Stats()
	assert.Equal(t, want, st.RefusedBy, "reasons beyond the eighth are counted as other")
	assert.Equal(t, uint64(20), st.Refused)
}

func TestInputBufferValidateClamps(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	b := newInputBuffer(t, s, control.InputBufferOptions{})
	for i, x := range []float32{1, -1, 0.75, 0.5, -0.5, 0.25, 0} {
		tick := gw.Tick(11 + i)
		require.Equal(t, control.AddAccepted, b.Add(hd(tick), rec(1, x), 10))
		_, got, real := b.Take(tick)
		require.True(t, real)
		want := max(-0.5, min(0.5, x))
		assert.Equal(t, wiretest.Input{X: want, Steer: 1}, wiretest.InputOf(t, got), "X %v", x)
	}
	st := b.Stats()
	assert.Equal(t, uint64(3), st.Clamped, "1, -1 and 0.75 were clamped")
	assert.Zero(t, st.Refused)
	assert.Equal(t, uint64(7), st.Accepted)
}

func TestInputBufferTakeAppliesExactlyOneInputPerTick(t *testing.T) {
	for _, policy := range []codec.MissingPolicy{codec.MissingRepeatLast, codec.MissingNeutral} {
		s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Missing: policy})
		b := newInputBuffer(t, s, control.InputBufferOptions{})
		_, ok := b.Applied()
		assert.False(t, ok)

		// Before any real input, both policies give a neutral input.
		h, got, real := b.Take(1)
		assert.False(t, real)
		assert.Equal(t, hd(1), h)
		assert.Equal(t, wiretest.Input{}, wiretest.InputOf(t, got))

		held := wiretest.Input{X: 1, Y: -0.5, Steer: 2}
		view := components.InputHeader{Tick: 3, HasView: true, ViewTick: 2, ViewFraction: 0.5, InterpolationDelay: 2}
		require.Equal(t, control.AddAccepted, b.Add(hd(2), rec(1, 0), 1))
		require.Equal(t, control.AddAccepted, b.Add(view, wiretest.RecOf(&held), 1))

		h, got, real = b.Take(2)
		assert.True(t, real)
		assert.Equal(t, hd(2), h)
		assert.Equal(t, wiretest.Input{Steer: 1}, wiretest.InputOf(t, got))
		h, got, real = b.Take(3)
		assert.True(t, real)
		assert.Equal(t, view, h)
		assert.Equal(t, held, wiretest.InputOf(t, got))

		for tick := gw.Tick(4); tick < 8; tick++ {
			h, got, real = b.Take(tick)
			assert.False(t, real, "tick %d has no input", tick)
			assert.Equal(t, hd(tick), h, "a substitute has no view: nothing to rewind to")
			want := wiretest.Input{}
			if policy == codec.MissingRepeatLast {
				want = held
			}
			assert.Equal(t, want, wiretest.InputOf(t, got), "%v at tick %d", policy, tick)
			applied, ok := b.Applied()
			assert.True(t, ok)
			assert.Equal(t, tick, applied)
		}
		// A real input again; repeating then uses the newest real one.
		require.Equal(t, control.AddAccepted, b.Add(hd(8), rec(3, 0), 7))
		_, got, real = b.Take(8)
		assert.True(t, real)
		assert.Equal(t, int8(3), wiretest.InputOf(t, got).Steer)
		_, got, _ = b.Take(9)
		if policy == codec.MissingRepeatLast {
			assert.Equal(t, wiretest.Input{Steer: 3}, wiretest.InputOf(t, got))
		} else {
			assert.Equal(t, wiretest.Input{}, wiretest.InputOf(t, got))
		}
		st := b.Stats()
		assert.Equal(t, uint64(3), st.Applied)
		assert.Equal(t, uint64(6), st.Missing)
		assert.Zero(t, st.Buffered)
		assert.Equal(t, 2, st.MaxBuffered)
	}
}

func TestInputBufferRepeatLastNeverRepeatsAPress(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{})
	pressed := wiretest.Input{X: 0.5, Jump: 1, Steer: 1}
	require.Equal(t, control.AddAccepted, b.Add(hd(5), wiretest.RecOf(&pressed), 4))
	_, got, real := b.Take(5)
	require.True(t, real)
	assert.Equal(t, pressed, wiretest.InputOf(t, got), "the real input presses")
	for tick := gw.Tick(6); tick < 10; tick++ {
		_, got, real = b.Take(tick)
		require.False(t, real)
		assert.Equal(t, wiretest.Input{X: 0.5, Steer: 1}, wiretest.InputOf(t, got), "tick %d holds the axes but never jumps again", tick)
	}
}

func TestInputBufferSubstituteReplacesThePolicy(t *testing.T) {
	calls := 0
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{
		Missing: codec.MissingNeutral, // ignored: Substitute is set
		Substitute: func(last, out *wiretest.Input) {
			calls++
			*out = wiretest.Input{X: last.X / 2, Y: last.Y, Jump: 1, Steer: -last.Steer}
		},
	})
	b := newInputBuffer(t, s, control.InputBufferOptions{})

	_, got, real := b.Take(1)
	assert.False(t, real)
	assert.Equal(t, wiretest.Input{}, wiretest.InputOf(t, got), "before any real input the substitute is neutral")
	assert.Zero(t, calls, "with nothing to substitute from")

	last := wiretest.Input{X: 1, Y: 0.25, Jump: 1, Steer: 2}
	require.Equal(t, control.AddAccepted, b.Add(hd(2), wiretest.RecOf(&last), 1))
	_, got, real = b.Take(2)
	require.True(t, real)
	assert.Equal(t, last, wiretest.InputOf(t, got))
	for tick := gw.Tick(3); tick < 6; tick++ {
		_, got, real = b.Take(tick)
		require.False(t, real)
		assert.Equal(t, wiretest.Input{X: 0.5, Y: 0.25, Steer: -2}, wiretest.InputOf(t, got), "tick %d: the game's substitute, its press cleared", tick)
	}
	assert.Equal(t, 3, calls)
	assert.Equal(t, uint64(4), b.Stats().Missing)
}

func TestInputBufferAppliesALatePressOnce(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{})
	require.Equal(t, control.AddAccepted, b.Add(hd(10), rec(1, 0.5), 9))
	_, _, real := b.Take(10)
	require.True(t, real)
	_, got, real := b.Take(11) // tick 11's input (a jump) is late
	require.False(t, real)
	assert.Equal(t, wiretest.Input{X: 0.5, Steer: 1}, wiretest.InputOf(t, got))

	assert.Equal(t, control.AddLate, b.Add(hd(11), jump(3), 11))
	assert.Equal(t, uint64(1), b.Stats().LatePresses)
	assert.Equal(t, control.AddDuplicate, b.Add(hd(11), jump(3), 11), "a second late copy")
	assert.Equal(t, uint64(1), b.Stats().LatePresses, "is not applied again")

	_, got, real = b.Take(12)
	assert.False(t, real)
	// The substitute repeats the newest input received, tick 11's, though
	// it came late (and with it the claims that go with its press), not
	// tick 10's.
	assert.Equal(t, wiretest.Input{Jump: 1, Steer: 3}, wiretest.InputOf(t, got), "the jump counts on the next tick")
	_, got, _ = b.Take(13)
	assert.Equal(t, wiretest.Input{Steer: 3}, wiretest.InputOf(t, got), "and exactly once")

	// A late press is added to the next tick's real input too.
	_, _, real = b.Take(14)
	require.False(t, real)
	require.Equal(t, control.AddAccepted, b.Add(hd(15), rec(-2, 0), 14))
	assert.Equal(t, control.AddLate, b.Add(hd(14), jump(0), 14))
	_, got, real = b.Take(15)
	assert.True(t, real)
	assert.Equal(t, wiretest.Input{Jump: 1, Steer: -2}, wiretest.InputOf(t, got))
	_, got, _ = b.Take(16)
	assert.Equal(t, wiretest.Input{Steer: -2}, wiretest.InputOf(t, got), "repeated without the carried press")

	st := b.Stats()
	assert.Equal(t, uint64(2), st.LatePresses)
	assert.Equal(t, uint64(2), st.Late)
	assert.Equal(t, uint64(1), st.Duplicates)
}

// Confirmed holds back at a tick that ran without its input until a copy
// arrives, so the client keeps resending it; ticks before the client's
// first input and ticks beyond what a batch can carry do not hold it back.
func TestInputBufferConfirmedWaitsForMissingInputs(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{Capacity: 128})
	_, ok := b.Confirmed()
	assert.False(t, ok, "nothing taken yet")
	b.Take(1) // before the first input: nothing to wait for
	c, ok := b.Confirmed()
	require.True(t, ok)
	assert.Equal(t, gw.Tick(1), c)

	require.Equal(t, control.AddAccepted, b.Add(hd(3), rec(1, 0), 1))
	b.Take(2)
	b.Take(3)
	c, _ = b.Confirmed()
	assert.Equal(t, gw.Tick(3), c, "tick 2 came before the first input")

	for tick := gw.Tick(4); tick <= 10; tick++ { // 4..10 are all lost
		b.Take(tick)
	}
	c, _ = b.Confirmed()
	assert.Equal(t, gw.Tick(3), c, "tick 4 is awaited")
	assert.Equal(t, control.AddLate, b.Add(hd(4), jump(1), 10))
	c, _ = b.Confirmed()
	assert.Equal(t, gw.Tick(4), c, "tick 5 is awaited")
	for tick := gw.Tick(5); tick <= 10; tick++ {
		assert.Equal(t, control.AddLate, b.Add(hd(tick), rec(1, 0), 10))
	}
	c, _ = b.Confirmed()
	assert.Equal(t, gw.Tick(10), c, "every input arrived")
	assert.Equal(t, uint64(1), b.Stats().LatePresses)

	// A tick whose input never comes stops holding back once it is older
	// than a batch can reach.
	b.Take(11)
	for tick := gw.Tick(12); tick < 11+codec.MaxInputsPerBatch; tick++ {
		require.Equal(t, control.AddAccepted, b.Add(hd(tick), rec(1, 0), tick-1))
		b.Take(tick)
		c, _ = b.Confirmed()
		require.Equal(t, gw.Tick(10), c, "tick %d: tick 11 is awaited", tick)
	}
	require.Equal(t, control.AddAccepted, b.Add(hd(11+codec.MaxInputsPerBatch), rec(1, 0), 10+codec.MaxInputsPerBatch))
	b.Take(11 + codec.MaxInputsPerBatch)
	c, _ = b.Confirmed()
	assert.Equal(t, gw.Tick(11+codec.MaxInputsPerBatch), c, "tick 11 is given up")
}

func TestInputBufferRefusedLateInputPressesNothing(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	b := newInputBuffer(t, s, control.InputBufferOptions{})
	_, _, real := b.Take(1)
	require.False(t, real)
	assert.Equal(t, control.AddLate, b.Add(hd(1), jump(-3), 1), "late: it is counted as late, whatever it holds")
	st := b.Stats()
	assert.Zero(t, st.LatePresses, "but a refused input presses nothing")
	assert.Equal(t, uint64(1), st.Refused)
	assert.Equal(t, uint64(1), st.RefusedBy["steer"])
	_, got, _ := b.Take(2)
	assert.Equal(t, wiretest.Input{}, wiretest.InputOf(t, got))
}

func TestInputBufferDropsAnInputWhoseTickWasSkipped(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{Capacity: 8})
	require.Equal(t, control.AddAccepted, b.Add(hd(5), rec(3, 0), 4))
	// The server never takes tick 5; tick 13 shares its slot.
	h, got, real := b.Take(13)
	assert.False(t, real, "tick 5's input is not tick 13's")
	assert.Equal(t, gw.Tick(13), h.Tick)
	assert.Equal(t, wiretest.Input{}, wiretest.InputOf(t, got))
	assert.Zero(t, b.Stats().Buffered)
}

func TestInputBufferWithoutAnInputType(t *testing.T) {
	b := newInputBuffer(t, wiretest.NewHeaderOnlySchema(t), control.InputBufferOptions{})
	view := components.InputHeader{Tick: 5, HasView: true, ViewTick: 3, ViewFraction: 0.25}
	require.Equal(t, control.AddAccepted, b.Add(view, nil, 4))
	h, got, real := b.Take(5)
	assert.True(t, real)
	assert.Equal(t, view, h)
	assert.Empty(t, got)
	h, got, real = b.Take(6)
	assert.False(t, real)
	assert.Equal(t, hd(6), h)
	assert.Empty(t, got)
	assert.Equal(t, control.AddLate, b.Add(hd(6), nil, 6))
	assert.Zero(t, b.Stats().LatePresses)
}

func TestInputBufferSpeedHackGainsNothing(t *testing.T) {
	// A client sends inputs for two ticks per server tick. It runs ahead
	// until MaxAhead refuses it, and the server never applies more than
	// one input per tick.
	const ticks = 20000
	b := newInputBuffer(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputBufferOptions{Capacity: 32, MaxAhead: 20})
	next := gw.Tick(1)
	for tick := gw.Tick(1); tick <= ticks; tick++ {
		for range 2 {
			if b.Add(hd(next), rec(int8(next%4), 0), tick-1) == control.AddAccepted {
				next++
			}
		}
		h, got, real := b.Take(tick)
		require.Equal(t, tick, h.Tick)
		if real {
			require.Equal(t, int8(tick%4), wiretest.InputOf(t, got).Steer, "tick %d got the input of another tick", tick)
		}
		st := b.Stats()
		require.LessOrEqual(t, st.Buffered, 20)
		require.LessOrEqual(t, st.MaxBuffered, 32)
	}
	st := b.Stats()
	assert.LessOrEqual(t, st.Applied, uint64(ticks))
	assert.Equal(t, uint64(ticks), st.Applied+st.Missing)
	assert.Equal(t, uint64(ticks), st.Applied, "the hacker never misses a tick")
	assert.Greater(t, st.TooFarAhead, uint64(ticks/2), "and half of what it sends is refused")
	assert.Equal(t, st.Received, st.Accepted+st.Duplicates+st.Late+st.TooFarAhead+st.Refused)
	assert.Equal(t, 20, st.MaxBuffered)
}

func TestInputBufferLongRandomRun(t *testing.T) {
	// Redundant batches over a link with delay, jitter, loss, duplication
	// and reordering, from a client whose clock wanders (sometimes two
	// inputs per server tick). Every tick takes one input, the client's own
	// when it arrived in time, and the counters add up. Every press the
	// client made is applied exactly once, on its tick or (late) on a
	// later one, unless all of its copies were lost or refused.
	rng := rand.New(rand.NewPCG(51, 52))
	const ticks = 50000
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Missing: codec.MissingNeutral})
	for _, capacity := range []int{8, 64, 256} {
		b := newInputBuffer(t, s, control.InputBufferOptions{Capacity: capacity})
		type packet struct {
			at     gw.Tick
			inputs []gw.Tick
		}
		var inflight []packet
		sent := map[gw.Tick]wiretest.Input{}
		clientTick := gw.Tick(3)
		lead := 3 // how far ahead of the server the client runs
		arrived := map[gw.Tick]bool{}
		takenMissing := map[gw.Tick]bool{}
		var real, presses, lateApplied, pressesMade uint64
		carried := false
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
				in := wiretest.Quantized(s, wiretest.Input{X: float32(rng.NormFloat64()), Y: float32(rng.NormFloat64()),
					Jump: components.Press(b2i(rng.IntN(8) == 0)), Steer: int8(rng.IntN(7) - 3)})
				sent[clientTick] = in
				if in.Jump != 0 {
					pressesMade++
				}
				first := clientTick.Add(-min(int(clientTick.Sub(1)), rng.IntN(5)))
				var batch []gw.Tick
				for t := first; !t.After(clientTick); t++ {
					batch = append(batch, t)
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
				for _, it := range p.inputs {
					in := sent[it]
					switch b.Add(hd(it), wiretest.RecOf(&in), tick-1) {
					case control.AddAccepted:
						require.False(t, arrived[it], "tick %d accepted twice", it)
						arrived[it] = true
					case control.AddLate:
						require.True(t, takenMissing[it], "tick %d late but not taken as missing", it)
						delete(takenMissing, it)
						if in.Jump != 0 {
							carried = true
							lateApplied++
						}
					}
				}
			}
			inflight = keep
			h, got, ok := b.Take(tick)
			require.Equal(t, tick, h.Tick)
			g := wiretest.InputOf(t, got)
			want := wiretest.Input{}
			if ok {
				real++
				want = sent[tick]
			} else {
				takenMissing[tick] = true
			}
			if carried {
				want.Jump = 1
				carried = false
			}
			require.Equal(t, want, g, "tick %d", tick)
			if g.Jump != 0 {
				presses++
			}
			if tick%1000 == 0 {
				st := b.Stats()
				require.GreaterOrEqual(t, st.Buffered, 0)
				require.LessOrEqual(t, st.Buffered, capacity)
				require.LessOrEqual(t, st.MaxBuffered, capacity)
			}
		}
		st := b.Stats()
		assert.Equal(t, uint64(ticks), st.Applied+st.Missing, "capacity %d", capacity)
		assert.Equal(t, real, st.Applied)
		assert.LessOrEqual(t, st.Applied, uint64(ticks))
		assert.Equal(t, st.Received, st.Accepted+st.Duplicates+st.Late+st.TooFarAhead+st.Refused)
		assert.Equal(t, lateApplied, st.LatePresses)
		assert.Positive(t, st.LatePresses)
		assert.LessOrEqual(t, presses, pressesMade, "no press applied twice")
		assert.Zero(t, st.Clamped)
		assert.Zero(t, st.Refused)
		assert.Positive(t, st.Duplicates)
		assert.Positive(t, st.Missing)
		assert.LessOrEqual(t, st.MaxBuffered, capacity)
		assert.GreaterOrEqual(t, st.Buffered, 0)
		t.Logf("capacity %d: %+v", capacity, st)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestInputBufferAddAndTakeAllocateNothing(t *testing.T) {
	// Steady state with every path: accepted, duplicate, missing, late
	// with a press carried, clamped.
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	b := newInputBuffer(t, s, control.InputBufferOptions{})
	tick := gw.Tick(1)
	var in wiretest.Input
	allocs := testing.AllocsPerRun(1000, func() {
		in = wiretest.Input{X: 0.75, Jump: 1, Steer: 1}
		if tick%2 == 0 {
			b.Add(hd(tick+2), wiretest.RecOf(&in), tick-1)
			b.Add(hd(tick+2), wiretest.RecOf(&in), tick-1)
		}
		b.Take(tick)
		b.Add(hd(tick), wiretest.RecOf(&in), tick)
		tick++
	})
	assert.Zero(t, allocs)
	st := b.Stats()
	assert.Positive(t, st.Clamped)
	assert.Positive(t, st.Duplicates)
	assert.Positive(t, st.LatePresses)
	assert.Positive(t, st.Applied)
}
