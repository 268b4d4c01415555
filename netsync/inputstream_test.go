package netsync_test

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

func newInputStream(t testing.TB, opts netsync.InputStreamOptions) *netsync.InputStream {
	t.Helper()
	s, err := netsync.NewInputStream(opts)
	require.NoError(t, err)
	return s
}

func batchTicks(b *netsync.InputBatch) []gw.Tick {
	ticks := make([]gw.Tick, len(b.Inputs))
	for i, c := range b.Inputs {
		ticks[i] = c.Tick
	}
	return ticks
}

func tickRange(first, last gw.Tick) []gw.Tick {
	var out []gw.Tick
	for t := first; ; t++ {
		out = append(out, t)
		if t == last {
			return out
		}
	}
}

func TestInputStreamOptions(t *testing.T) {
	for _, tt := range []struct {
		opts netsync.InputStreamOptions
		text string
	}{
		{netsync.InputStreamOptions{Capacity: 15}, "capacity 15 outside 16..65536"},
		{netsync.InputStreamOptions{Capacity: 65537}, "capacity 65537"},
		{netsync.InputStreamOptions{Capacity: -4}, "capacity -4"},
		{netsync.InputStreamOptions{Redundancy: 33}, "redundancy 33 outside 1..32"},
		{netsync.InputStreamOptions{Redundancy: -1}, "redundancy -1"},
	} {
		_, err := netsync.NewInputStream(tt.opts)
		require.Error(t, err, "%+v", tt.opts)
		assert.Contains(t, err.Error(), tt.text)
	}
	for _, opts := range []netsync.InputStreamOptions{{}, {Capacity: 16, Redundancy: 1}, {Capacity: 65536, Redundancy: 32}} {
		_, err := netsync.NewInputStream(opts)
		assert.NoError(t, err, "%+v", opts)
	}
}

func TestInputStreamRecordQuantizesAndStores(t *testing.T) {
	s := newInputStream(t, netsync.InputStreamOptions{Capacity: 16})
	raw := components.InputCommand{Tick: 7, Buttons: 3, MoveX: 0.9, MoveY: 0.9, Aim: 10, ViewTick: 5, ViewFraction: 0.77, InterpolationDelay: 1.01, OriginZ: float32(math.NaN())}
	got := s.Record(raw)
	want := raw
	netsync.QuantizeInput(&want)
	assert.Equal(t, commandBits(want), commandBits(got), "Record returns the quantized command")
	assert.LessOrEqual(t, moveLength2(got.MoveX, got.MoveY), 1.0)
	stored, ok := s.Get(7)
	require.True(t, ok)
	assert.Equal(t, commandBits(got), commandBits(stored), "and stores exactly that")

	_, ok = s.Get(6)
	assert.False(t, ok, "never recorded")

	// Recording a tick again (a re-sampled input) replaces it.
	s.Record(components.InputCommand{Tick: 7, Buttons: 9})
	stored, _ = s.Get(7)
	assert.Equal(t, uint32(9), stored.Buttons)
}

func TestInputStreamGetFailsForOverwrittenTicks(t *testing.T) {
	s := newInputStream(t, netsync.InputStreamOptions{Capacity: 16})
	for tick := gw.Tick(0); tick <= 40; tick++ {
		s.Record(components.InputCommand{Tick: tick, Buttons: uint32(tick)})
	}
	for tick := gw.Tick(0); tick <= 24; tick++ {
		_, ok := s.Get(tick)
		assert.False(t, ok, "tick %d was overwritten", tick)
	}
	for tick := gw.Tick(25); tick <= 40; tick++ {
		c, ok := s.Get(tick)
		require.True(t, ok, "tick %d", tick)
		assert.Equal(t, uint32(tick), c.Buttons)
	}
	_, ok := s.Get(41)
	assert.False(t, ok, "not recorded yet (its slot holds tick 25)")
}

func TestInputStreamBatch(t *testing.T) {
	s := newInputStream(t, netsync.InputStreamOptions{Redundancy: 4})
	var b netsync.InputBatch
	s.Batch(&b)
	assert.Empty(t, b.Inputs, "nothing recorded")

	s.Record(components.InputCommand{Tick: 1})
	s.Batch(&b)
	assert.Equal(t, []gw.Tick{1}, batchTicks(&b), "redundancy wants 4, the ring has one")

	// Tick 0 exists too.
	s0 := newInputStream(t, netsync.InputStreamOptions{Redundancy: 4})
	s0.Record(components.InputCommand{Tick: 0})
	s0.Record(components.InputCommand{Tick: 1})
	s0.Batch(&b)
	assert.Equal(t, []gw.Tick{0, 1}, batchTicks(&b))

	for tick := gw.Tick(2); tick <= 100; tick++ {
		s.Record(components.InputCommand{Tick: tick})
	}
	s.Batch(&b)
	assert.Equal(t, tickRange(69, 100), batchTicks(&b), "100 unconfirmed: the newest 32")

	_, ok := s.Confirmed()
	assert.False(t, ok, "nothing confirmed yet")
	s.Confirm(90)
	confirmed, ok := s.Confirmed()
	assert.True(t, ok)
	assert.Equal(t, gw.Tick(90), confirmed)
	s.Batch(&b)
	assert.Equal(t, tickRange(91, 100), batchTicks(&b), "every unconfirmed input")

	s.Confirm(80) // older news changes nothing
	confirmed, ok = s.Confirmed()
	assert.True(t, ok)
	assert.Equal(t, gw.Tick(90), confirmed)

	s.Confirm(98)
	s.Batch(&b)
	assert.Equal(t, tickRange(97, 100), batchTicks(&b), "never fewer than the redundancy")

	s.Confirm(100)
	s.Batch(&b)
	assert.Equal(t, tickRange(97, 100), batchTicks(&b), "all confirmed: still the newest few")

	s.Confirm(150) // confirmed beyond the newest (a confused server)
	s.Batch(&b)
	assert.Equal(t, tickRange(97, 100), batchTicks(&b))
}

func TestInputStreamBatchStopsAtGaps(t *testing.T) {
	// After a clock jump the client skips ticks: a batch never spans the
	// gap, as AppendInputs needs consecutive ticks.
	s := newInputStream(t, netsync.InputStreamOptions{Redundancy: 8})
	for tick := gw.Tick(10); tick <= 20; tick++ {
		s.Record(components.InputCommand{Tick: tick})
	}
	for tick := gw.Tick(26); tick <= 28; tick++ {
		s.Record(components.InputCommand{Tick: tick})
	}
	var b netsync.InputBatch
	s.Batch(&b)
	assert.Equal(t, tickRange(26, 28), batchTicks(&b))
	assert.NotPanics(t, func() { netsync.AppendInputs(nil, &b) })

	// The ring is smaller than a batch: only what it still holds.
	small := newInputStream(t, netsync.InputStreamOptions{Capacity: 16, Redundancy: 32})
	for tick := gw.Tick(1); tick <= 50; tick++ {
		small.Record(components.InputCommand{Tick: tick})
	}
	small.Batch(&b)
	assert.Equal(t, tickRange(35, 50), batchTicks(&b))
}

func TestInputStreamBatchRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for run := range 50 {
		redundancy := 1 + rng.IntN(netsync.MaxInputsPerBatch)
		capacity := 16 + rng.IntN(100)
		s := newInputStream(t, netsync.InputStreamOptions{Capacity: capacity, Redundancy: redundancy})
		var b netsync.InputBatch
		var pkt []byte
		var decoded netsync.InputBatch
		tick := gw.Tick(rng.IntN(3))
		var confirmed gw.Tick
		hasConfirmed := false
		first := tick
		for range 500 {
			raw := randomCommand(rng)
			raw.Tick = tick
			raw.ViewTick = min(raw.ViewTick, tick)
			stored := s.Record(raw)
			if rng.IntN(3) == 0 { // tick 0 can be confirmed too
				c := tick.Add(-rng.IntN(min(int(tick), 40) + 1))
				if !hasConfirmed || c.After(confirmed) {
					confirmed, hasConfirmed = c, true
				}
				s.Confirm(c)
			}
			got, ok := s.Confirmed()
			require.Equal(t, hasConfirmed, ok)
			require.Equal(t, confirmed, got)
			s.Batch(&b)
			unconfirmed := netsync.MaxInputsPerBatch // none confirmed: a full batch
			if hasConfirmed {
				unconfirmed = max(0, int(tick.Sub(confirmed)))
			}
			// The ring rounds its slots up to a power of two: it holds
			// at least the last capacity ticks.
			available := min(int(tick.Sub(first))+1, 1<<bits.Len(uint(capacity-1)))
			want := min(netsync.MaxInputsPerBatch, max(unconfirmed, redundancy), available)
			require.Len(t, b.Inputs, want, "run %d tick %d confirmed %d", run, tick, confirmed)
			if commandBits(stored) != commandBits(b.Inputs[want-1]) {
				t.Fatalf("tick %d: batch ends with %+v, recorded %+v", tick, b.Inputs[want-1], stored)
			}
			for i, c := range b.Inputs {
				r, ok := s.Get(c.Tick)
				if c.Tick != tick.Add(-(want-1-i)) || !ok || commandBits(r) != commandBits(c) {
					t.Fatalf("tick %d: batch input %d is %+v; ring holds %+v, %v", tick, i, c, r, ok)
				}
			}
			// Every batch the stream builds encodes, and the server decodes
			// exactly what the client predicted with.
			pkt = netsync.AppendInputs(pkt, &b)
			require.NoError(t, netsync.DecodeInputs(pkt, &decoded))
			for i := range b.Inputs {
				if commandBits(b.Inputs[i]) != commandBits(decoded.Inputs[i]) {
					t.Fatalf("tick %d: sent %+v, decoded %+v", tick, b.Inputs[i], decoded.Inputs[i])
				}
			}
			tick++
		}
	}
}

func TestInputStreamAllocatesNothing(t *testing.T) {
	s := newInputStream(t, netsync.InputStreamOptions{})
	b := netsync.InputBatch{Inputs: make([]components.InputCommand, 0, netsync.MaxInputsPerBatch)}
	tick := gw.Tick(1)
	allocs := testing.AllocsPerRun(500, func() {
		s.Record(components.InputCommand{Tick: tick, MoveX: 0.3})
		if tick > 10 {
			s.Confirm(tick - 10)
		}
		s.Batch(&b)
		tick++
	})
	assert.Zero(t, allocs)
}
