package control_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

func newInputStream(t testing.TB, s *codec.Schema, opts control.InputStreamOptions) *control.InputStream {
	t.Helper()
	st, err := control.NewInputStream(s, opts)
	require.NoError(t, err)
	return st
}

func batchTicks(b *protocol.InputBatch) []gw.Tick {
	ticks := make([]gw.Tick, len(b.Heads))
	for i, h := range b.Heads {
		ticks[i] = h.Tick
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

// record records an input for tick with the given steering.
func record(s *control.InputStream, tick gw.Tick, steer int8) {
	s.Record(hd(tick), rec(steer, 0))
}

func TestInputStreamOptions(t *testing.T) {
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	for _, tt := range []struct {
		opts control.InputStreamOptions
		text string
	}{
		{control.InputStreamOptions{Capacity: 15}, "capacity 15 outside 16..65536"},
		{control.InputStreamOptions{Capacity: 65537}, "capacity 65537"},
		{control.InputStreamOptions{Capacity: -4}, "capacity -4"},
		{control.InputStreamOptions{Redundancy: 33}, "redundancy 33 outside 1..32"},
		{control.InputStreamOptions{Redundancy: -1}, "redundancy -1"},
	} {
		_, err := control.NewInputStream(s, tt.opts)
		require.Error(t, err, "%+v", tt.opts)
		assert.Contains(t, err.Error(), tt.text)
	}
	for _, opts := range []control.InputStreamOptions{{}, {Capacity: 16, Redundancy: 1}, {Capacity: 65536, Redundancy: 32}} {
		st, err := control.NewInputStream(s, opts)
		require.NoError(t, err, "%+v", opts)
		want := opts.Capacity
		if want == 0 {
			want = 256
		}
		assert.Equal(t, want, st.Capacity())
	}
}

func TestInputStreamRecordQuantizesAndStores(t *testing.T) {
	schema := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	s := newInputStream(t, schema, control.InputStreamOptions{Capacity: 16})
	raw := wiretest.Input{X: 0.3, Y: 7, Jump: 9, Steer: 2}
	h := components.InputHeader{Tick: 7, HasView: true, ViewTick: 5, ViewFraction: 0.77, InterpolationDelay: 1.01}
	got, refuse := s.Record(h, wiretest.RecOf(&raw))
	assert.Empty(t, refuse)
	assert.Equal(t, wiretest.Input{X: float32(19) / 64, Y: 1, Jump: 1, Steer: 2}, wiretest.InputOf(t, got), "Record returns the quantized input")
	assert.Equal(t, wiretest.Input{X: 0.3, Y: 7, Jump: 9, Steer: 2}, raw, "the caller's input is copied, not changed")
	sh, stored, ok := s.Get(7)
	require.True(t, ok)
	assert.Equal(t, got, stored, "and stores exactly that")
	assert.Equal(t, components.InputHeader{Tick: 7, HasView: true, ViewTick: 5, ViewFraction: float32(197) / 256, InterpolationDelay: 1},
		sh, "0.77·256 = 197.1 truncates; 1.01·16 = 16.16 rounds to 16")

	_, _, ok = s.Get(6)
	assert.False(t, ok, "never recorded")

	// Recording a tick again (a re-sampled input) replaces it, clamped
	// by the game's rule.
	got, refuse = s.Record(hd(7), rec(1, 0.9))
	assert.Empty(t, refuse)
	assert.Equal(t, wiretest.Input{X: 0.5, Steer: 1}, wiretest.InputOf(t, got))
	_, stored, _ = s.Get(7)
	assert.Equal(t, wiretest.Input{X: 0.5, Steer: 1}, wiretest.InputOf(t, stored))

	// A refused input is still recorded (and sent): the server decides.
	got, refuse = s.Record(hd(8), rec(-5, 0))
	assert.Equal(t, "steer", refuse)
	assert.Equal(t, int8(-3), wiretest.InputOf(t, got).Steer)
}

func TestInputStreamRecordQuantizesTheHeader(t *testing.T) {
	s := newInputStream(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputStreamOptions{})
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, tt := range []struct {
		in, want components.InputHeader
		why      string
	}{
		{components.InputHeader{Tick: 50, HasView: true, ViewTick: 48, ViewFraction: 0.3, InterpolationDelay: 2.03},
			components.InputHeader{Tick: 50, HasView: true, ViewTick: 48, ViewFraction: float32(76) / 256, InterpolationDelay: 2},
			"0.3·256 = 76.8 truncates to 76; 2.03·16 = 32.48 rounds to 32"},
		{components.InputHeader{Tick: 50, HasView: true, ViewTick: 1, ViewFraction: 1e30, InterpolationDelay: 1e30},
			components.InputHeader{Tick: 50, HasView: true, ViewTick: 1, ViewFraction: float32(255) / 256, InterpolationDelay: codec.MaxInterpolationDelay},
			"fractions clamp below 1, delays to the maximum"},
		{components.InputHeader{Tick: 50, HasView: true, ViewTick: 3, ViewFraction: -0.5, InterpolationDelay: nan},
			components.InputHeader{Tick: 50, HasView: true, ViewTick: 3},
			"negative and NaN become 0"},
		{components.InputHeader{Tick: 50, HasView: true, ViewTick: 3, ViewFraction: inf, InterpolationDelay: -inf},
			components.InputHeader{Tick: 50, HasView: true, ViewTick: 3},
			"infinities become 0"},
		{components.InputHeader{Tick: 50, ViewTick: 3, ViewFraction: 0.5, InterpolationDelay: 2},
			components.InputHeader{Tick: 50},
			"without a view the wire carries no view tick, fraction or delay"},
	} {
		s.Record(tt.in, rec(0, 0))
		got, _, ok := s.Get(50)
		require.True(t, ok)
		assert.Equal(t, tt.want, got, tt.why)
	}
}

// Go leaves a struct's padding unspecified: an input sampled by a typed
// copy may carry stack garbage there (wiretest.Input has bytes after Steer).
// The stream stores what the server decodes, padding zeroed, so an input
// equal to the previous one goes on the wire as a one-bit repeat whatever
// its padding held, and the bytes sent do not depend on it.
func TestInputStreamRecordZeroesPadding(t *testing.T) {
	schema := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	dirty := newInputStream(t, schema, control.InputStreamOptions{Capacity: 16})
	clean := newInputStream(t, schema, control.InputStreamOptions{Capacity: 16})
	size, pad := unsafe.Sizeof(wiretest.Input{}), unsafe.Offsetof(wiretest.Input{}.Steer)+1
	require.Less(t, pad, size, "wiretest.Input has padding")
	// The clean record is built field by field in zeroed memory: a typed
	// copy of a whole wiretest.Input could bring padding garbage in itself.
	want := make([]byte, size)
	in := (*wiretest.Input)(unsafe.Pointer(unsafe.SliceData(want)))
	in.X, in.Steer = 0.25, 1
	for tick := gw.Tick(1); tick <= 3; tick++ {
		r := append([]byte(nil), want...)
		for i := pad; i < size; i++ {
			r[i] = byte(tick) * 0x11 // different garbage every tick
		}
		stored, _ := dirty.Record(hd(tick), r)
		assert.Equal(t, want, stored, "tick %d: the padding is zeroed", tick)
		clean.Record(hd(tick), want)
	}
	var db, cb protocol.InputBatch
	dirty.Batch(&db)
	clean.Batch(&cb)
	require.Len(t, db.Heads, 3)
	wire := protocol.AppendInputs(nil, schema, &db)
	assert.Equal(t, protocol.AppendInputs(nil, schema, &cb), wire, "equal inputs repeat on the wire")
	var dec protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(wire, schema, &dec))
	assert.Equal(t, db.Data, dec.Data, "the client's records are the server's, byte for byte")
}

func TestInputStreamGetFailsForOverwrittenTicks(t *testing.T) {
	s := newInputStream(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputStreamOptions{Capacity: 16})
	for tick := gw.Tick(0); tick <= 40; tick++ {
		record(s, tick, int8(tick%4))
	}
	for tick := gw.Tick(0); tick <= 24; tick++ {
		_, _, ok := s.Get(tick)
		assert.False(t, ok, "tick %d was overwritten", tick)
	}
	for tick := gw.Tick(25); tick <= 40; tick++ {
		h, r, ok := s.Get(tick)
		require.True(t, ok, "tick %d", tick)
		assert.Equal(t, tick, h.Tick)
		assert.Equal(t, int8(tick%4), wiretest.InputOf(t, r).Steer)
	}
	_, _, ok := s.Get(41)
	assert.False(t, ok, "not recorded yet (its slot holds tick 25)")
}

func TestInputStreamKeepsExactlyCapacityTicks(t *testing.T) {
	// 20 ticks kept, in a ring of 32 slots: the older 12 slots still hold
	// inputs, which Get does not hand out.
	s := newInputStream(t, wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{}), control.InputStreamOptions{Capacity: 20, Redundancy: 32})
	for tick := gw.Tick(1); tick <= 31; tick++ {
		record(s, tick, 0)
	}
	for tick := gw.Tick(1); tick <= 31; tick++ {
		_, _, ok := s.Get(tick)
		assert.Equal(t, tick >= 12, ok, "tick %d", tick)
	}
	var b protocol.InputBatch
	s.Batch(&b)
	assert.Equal(t, tickRange(12, 31), batchTicks(&b))
}

func TestInputStreamBatch(t *testing.T) {
	schema := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	s := newInputStream(t, schema, control.InputStreamOptions{Redundancy: 4})
	var b protocol.InputBatch
	s.Batch(&b)
	assert.Empty(t, b.Heads, "nothing recorded")
	assert.Empty(t, b.Data)

	record(s, 1, 1)
	s.Batch(&b)
	assert.Equal(t, []gw.Tick{1}, batchTicks(&b), "redundancy wants 4, the ring has one")
	assert.Equal(t, wiretest.Input{Steer: 1}, wiretest.InputOf(t, b.Data))

	// Tick 0 exists too.
	s0 := newInputStream(t, schema, control.InputStreamOptions{Redundancy: 4})
	record(s0, 0, 0)
	record(s0, 1, 0)
	s0.Batch(&b)
	assert.Equal(t, []gw.Tick{0, 1}, batchTicks(&b))

	for tick := gw.Tick(2); tick <= 100; tick++ {
		record(s, tick, int8(tick%4))
	}
	s.Batch(&b)
	assert.Equal(t, tickRange(69, 100), batchTicks(&b), "100 unconfirmed: the newest 32")
	require.Len(t, b.Data, 32*schema.InputSize())
	for i, h := range b.Heads {
		assert.Equal(t, int8(h.Tick%4), wiretest.InputOf(t, b.Data[i*schema.InputSize():(i+1)*schema.InputSize()]).Steer, "record %d", i)
	}

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

func TestInputStreamBatchWrapsAcrossTickZero(t *testing.T) {
	schema := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	s := newInputStream(t, schema, control.InputStreamOptions{Redundancy: 4})
	for tick := gw.Tick(math.MaxUint32 - 10); tick != 5; tick++ {
		record(s, tick, int8(tick%4))
	}
	s.Confirm(math.MaxUint32 - 2)
	var b protocol.InputBatch
	s.Batch(&b)
	assert.Equal(t, tickRange(math.MaxUint32-1, 4), batchTicks(&b), "the unconfirmed inputs across the wrap")
	p := protocol.AppendInputs(nil, schema, &b)
	var got protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(p, schema, &got))
	assert.Equal(t, b.Heads, got.Heads)
	wiretest.RequireSameInputs(t, schema, b.Data, got.Data)
}

func TestInputStreamBatchStopsAtGaps(t *testing.T) {
	// After a clock jump the client skips ticks: a batch never spans the
	// gap, as AppendInputs needs consecutive ticks.
	schema := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	s := newInputStream(t, schema, control.InputStreamOptions{Redundancy: 8})
	for tick := gw.Tick(10); tick <= 20; tick++ {
		record(s, tick, 0)
	}
	for tick := gw.Tick(26); tick <= 28; tick++ {
		record(s, tick, 0)
	}
	var b protocol.InputBatch
	s.Batch(&b)
	assert.Equal(t, tickRange(26, 28), batchTicks(&b))
	assert.Len(t, b.Data, 3*schema.InputSize())
	assert.NotPanics(t, func() { protocol.AppendInputs(nil, schema, &b) })

	// The ring is smaller than a batch: only what it still holds.
	small := newInputStream(t, schema, control.InputStreamOptions{Capacity: 16, Redundancy: 32})
	for tick := gw.Tick(1); tick <= 50; tick++ {
		record(small, tick, 0)
	}
	small.Batch(&b)
	assert.Equal(t, tickRange(35, 50), batchTicks(&b))
}

func TestInputStreamBatchRandomized(t *testing.T) {
	schema := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{})
	size := schema.InputSize()
	rng := rand.New(rand.NewPCG(61, 62))
	for run := range 50 {
		redundancy := 1 + rng.IntN(codec.MaxInputsPerBatch)
		capacity := 16 + rng.IntN(100)
		s := newInputStream(t, schema, control.InputStreamOptions{Capacity: capacity, Redundancy: redundancy})
		var b protocol.InputBatch
		var pkt []byte
		var decoded protocol.InputBatch
		tick := gw.Tick(rng.IntN(3))
		var confirmed gw.Tick
		hasConfirmed := false
		first := tick
		for range 500 {
			raw := wiretest.RandomInput(rng)
			h := components.InputHeader{Tick: tick}
			if rng.IntN(2) == 0 {
				h.HasView, h.ViewTick = true, tick.Add(-rng.IntN(1<<20))
				h.ViewFraction, h.InterpolationDelay = wiretest.WildFloat(rng), wiretest.WildFloat(rng)*100
			}
			stored, _ := s.Record(h, wiretest.RecOf(&raw))
			stored = append([]byte(nil), stored...)
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
			unconfirmed := codec.MaxInputsPerBatch // none confirmed: a full batch
			if hasConfirmed {
				unconfirmed = max(0, int(tick.Sub(confirmed)))
			}
			// The ring holds the last capacity ticks.
			available := min(int(tick.Sub(first))+1, capacity)
			want := min(codec.MaxInputsPerBatch, max(unconfirmed, redundancy), available)
			require.Len(t, b.Heads, want, "run %d tick %d confirmed %d", run, tick, confirmed)
			require.Len(t, b.Data, want*size)
			require.Equal(t, stored, b.Data[(want-1)*size:], "tick %d: the batch ends with what was recorded", tick)
			for i, bh := range b.Heads {
				rh, r, ok := s.Get(bh.Tick)
				require.True(t, ok && bh.Tick == tick.Add(-(want-1-i)) && rh == bh && string(r) == string(b.Data[i*size:(i+1)*size]),
					"tick %d: batch input %d is %+v % x; ring holds %+v % x, %v", tick, i, bh, b.Data[i*size:(i+1)*size], rh, r, ok)

			}
			// Every batch the stream builds encodes, and the server decodes
			// exactly what the client predicted with.
			pkt = protocol.AppendInputs(pkt[:0], schema, &b)
			require.NoError(t, protocol.DecodeInputs(pkt, schema, &decoded))
			require.Equal(t, b.Heads, decoded.Heads, "tick %d", tick)
			wiretest.RequireSameInputs(t, schema, b.Data, decoded.Data, "tick %d", tick)
			tick++
		}
	}
}

func TestInputStreamWithoutAnInputType(t *testing.T) {
	schema := wiretest.NewHeaderOnlySchema(t)
	s := newInputStream(t, schema, control.InputStreamOptions{})
	stored, refuse := s.Record(components.InputHeader{Tick: 3, HasView: true, ViewTick: 1, ViewFraction: 0.5}, nil)
	assert.Empty(t, stored)
	assert.Empty(t, refuse)
	var b protocol.InputBatch
	s.Batch(&b)
	assert.Equal(t, []components.InputHeader{{Tick: 3, HasView: true, ViewTick: 1, ViewFraction: 0.5}}, b.Heads)
	assert.Empty(t, b.Data)
}

func TestInputStreamAllocatesNothing(t *testing.T) {
	schema := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	s := newInputStream(t, schema, control.InputStreamOptions{})
	b := protocol.InputBatch{Heads: make([]components.InputHeader, 0, codec.MaxInputsPerBatch),
		Data: make([]byte, 0, codec.MaxInputsPerBatch*schema.InputSize())}
	tick := gw.Tick(1)
	var in wiretest.Input
	allocs := testing.AllocsPerRun(500, func() {
		in = wiretest.Input{X: 0.7, Jump: 1, Steer: 2}
		s.Record(components.InputHeader{Tick: tick, HasView: true, ViewTick: tick - 1, ViewFraction: 0.3}, wiretest.RecOf(&in))
		if tick > 10 {
			s.Confirm(tick - 10)
		}
		s.Batch(&b)
		tick++
	})
	assert.Zero(t, allocs)
	assert.Len(t, b.Heads, 10)
}

func TestQuantizedInputIsNeverClampedByTheServer(t *testing.T) {
	// The server's Validate clamps (and counts) what the client's own
	// Validate already clamped: an honest client's quantized input is
	// never touched, or its prediction would differ from the server's
	// simulation.
	s := wiretest.NewInputSchema(t, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	rng := rand.New(rand.NewPCG(25, 26))
	stream := newInputStream(t, s, control.InputStreamOptions{})
	buf := newInputBuffer(t, s, control.InputBufferOptions{})
	var batch, got protocol.InputBatch
	var pkt []byte
	clamped := 0
	for tick := gw.Tick(1); tick <= 100_000; tick++ {
		raw := wiretest.RandomInput(rng)
		stored, refuse := stream.Record(components.InputHeader{Tick: tick}, wiretest.RecOf(&raw))
		predicted := wiretest.InputOf(t, stored)
		if predicted.X == 0.5 || predicted.X == -0.5 {
			clamped++
		}
		stream.Confirm(tick - 1)
		stream.Batch(&batch)
		pkt = protocol.AppendInputs(pkt[:0], s, &batch)
		require.NoError(t, protocol.DecodeInputs(pkt, s, &got))
		last := len(got.Heads) - 1
		res := buf.Add(got.Heads[last], got.Data[last*s.InputSize():], tick-1)
		applied, rec, real := buf.Take(tick)
		require.Equal(t, tick, applied.Tick)
		if refuse != "" {
			require.Equal(t, control.AddRefused, res, "the server refuses what the client was told it would")
			require.False(t, real)
			continue
		}
		require.Equal(t, control.AddAccepted, res)
		require.True(t, real)
		require.Equal(t, wiretest.InputBits(predicted), wiretest.InputBits(wiretest.InputOf(t, rec)), "the server applies exactly what the client predicted with")
		require.Zero(t, buf.Stats().Clamped, "quantized %+v was clamped", predicted)
	}
	assert.Greater(t, clamped, 10000, "the client clamped often")
	assert.Positive(t, buf.Stats().Refused)
	assert.Equal(t, buf.Stats().Refused, buf.Stats().RefusedBy["steer"])
}
