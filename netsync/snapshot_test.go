package netsync_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// randomGhosts returns n quantized ghosts of random types with distinct
// IDs; the ghosts owned by conn come first, and IDs are not ascending.
func randomGhosts(t testing.TB, ts *testSchema, rng *rand.Rand, n int, tick gw.Tick, conn components.ConnID) []testGhost {
	var rt netsync.Coder
	ids := rng.Perm(4 * n)
	ghosts := make([]testGhost, n)
	for i := range ghosts {
		g := &ghosts[i]
		g.ID = components.GhostID(ids[i] + 1)
		g.Type = uint16(rng.IntN(ts.NumGhostTypes()))
		if i < n/4 {
			g.Owner = conn
		} else {
			g.Owner = components.ConnID(rng.IntN(4)) // 0 is the server
			if g.Owner == conn {
				g.Owner = 0
			}
		}
		g.Spawned = tick.Add(-rng.IntN(1001)) // wraps below tick 0
		g.Pos = tPos{float32(rng.NormFloat64() * 200), float32(rng.NormFloat64() * 200), float32(rng.NormFloat64() * 10)}
		g.Vel = tVel{float32(rng.NormFloat64() * 10), float32(rng.NormFloat64() * 10)}
		g.Health = tHealth{HP: uint8(rng.Uint32()), Armor: uint16(rng.IntN(1001)), Alive: rng.IntN(2) == 0}
		g.Team = tTeam{uint8(rng.IntN(3))}
		g.quantize(ts, &rt)
	}
	return ghosts
}

func encodeSnapshot(t testing.TB, ts *testSchema, w *netsync.SnapshotWriter, h netsync.SnapshotHeader, ghosts []testGhost) []byte {
	t.Helper()
	w.Begin(h.Tick)
	for i := range ghosts {
		require.True(t, w.AddGhost(ghosts[i].Ghost, ghosts[i].values(ts)), "ghost %d fits", i)
	}
	require.Equal(t, len(ghosts), w.Count())
	return w.Finish(&h)
}

func TestSnapshotRoundTrip(t *testing.T) {
	ts := newTestSchema(t)
	w, err := netsync.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s netsync.Snapshot
	rng := rand.New(rand.NewPCG(31, 32))

	ghosts := []testGhost{
		// The client's own ghosts first, then the rest: IDs go down and up.
		{Ghost: components.Ghost{ID: 40, Type: uint16(ts.Player), Owner: 2, Spawned: 900}, Pos: tPos{1.25, -3.5, 0.01}, Vel: tVel{4, -4}, Health: tHealth{100, 1000, true}, Team: tTeam{1}},
		{Ghost: components.Ghost{ID: 7, Type: uint16(ts.Rocket), Owner: 2, Spawned: 1000}, Pos: tPos{-500, 500, 0}, Vel: tVel{-50, 50}},
		{Ghost: components.Ghost{ID: 19, Type: uint16(ts.Player), Owner: 3, Spawned: 1}, Pos: tPos{499.99, 0, -0.5}, Health: tHealth{HP: 1}, Team: tTeam{2}},
		{Ghost: components.Ghost{ID: 3, Type: uint16(ts.Marker), Owner: 0, Spawned: 0}},
		{Ghost: components.Ghost{ID: math.MaxUint32, Type: uint16(ts.Pickup), Owner: math.MaxUint16, Spawned: 999}, Pos: tPos{7, 8, 9}, Team: tTeam{0}},
		{Ghost: components.Ghost{ID: 1, Type: uint16(ts.Rocket), Owner: 1, Spawned: 1000}, Vel: tVel{0.01, -0.01}},
	}
	var rt netsync.Coder
	for i := range ghosts {
		ghosts[i].quantize(ts, &rt)
	}
	headers := []netsync.SnapshotHeader{
		{Tick: 1000, Confirmed: 995, HasConfirmed: true, Lead: 2.3, EchoTime: 123456, Hold: 17, Complete: true},
		{Tick: 1000, Lead: -1.7, EchoTime: 0, Hold: 0, Complete: false},
		{Tick: 1000, Confirmed: 1003, HasConfirmed: true, Lead: 0, EchoTime: math.MaxUint32, Hold: math.MaxUint16, Complete: true},
		{Tick: 1000, Confirmed: 1, HasConfirmed: true, Lead: 4096, Complete: true},
		{Tick: 1000, Confirmed: 0, HasConfirmed: true, Lead: 1, Complete: true},
		{Tick: 1000, Confirmed: 1000, HasConfirmed: true, Lead: -4096, Complete: true},
	}
	for _, h := range headers {
		p := encodeSnapshot(t, ts, w, h, ghosts)
		assert.LessOrEqual(t, len(p), netsync.MaxDatagram)
		typ, err := netsync.PeekType(p)
		require.NoError(t, err)
		require.Equal(t, netsync.MsgSnapshot, typ)

		require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s))
		assert.Equal(t, h.Tick, s.Tick)
		assert.Equal(t, h.Confirmed, s.Confirmed)
		assert.Equal(t, h.HasConfirmed, s.HasConfirmed)
		assert.Equal(t, h.EchoTime, s.EchoTime)
		assert.Equal(t, h.Hold, s.Hold)
		assert.Equal(t, h.Complete, s.Complete)
		assert.InDelta(t, h.Lead, s.Lead, 1.0/512, "lead to the nearest 1/256 tick")
		assert.Equal(t, s.Lead, float32(math.Round(float64(h.Lead)*256))/256)
		require.Len(t, s.Ghosts, len(ghosts))
		for i := range ghosts {
			requireGhostState(t, ts, &ghosts[i], &s, i)
		}
	}

	// Many random snapshots, each decoded into the same reused Snapshot.
	for i := range 300 {
		tick := gw.Tick(1 + rng.IntN(100000))
		if i%10 == 0 {
			tick = gw.Tick(math.MaxUint32).Add(-rng.IntN(100))
		}
		ghosts := randomGhosts(t, ts, rng, rng.IntN(40), tick, 2)
		h := netsync.SnapshotHeader{Tick: tick, Confirmed: tick.Add(-rng.IntN(64)), HasConfirmed: true, Lead: float32(rng.NormFloat64() * 5),
			EchoTime: rng.Uint32(), Hold: uint16(rng.Uint32()), Complete: rng.IntN(2) == 0}
		p := encodeSnapshot(t, ts, w, h, ghosts)
		require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s), "snapshot %d", i)
		assert.Equal(t, h.Confirmed, s.Confirmed, "snapshot %d", i)
		assert.True(t, s.HasConfirmed, "snapshot %d", i)
		assert.Equal(t, h.Complete, s.Complete)
		require.Len(t, s.Ghosts, len(ghosts))
		for gi := range ghosts {
			requireGhostState(t, ts, &ghosts[gi], &s, gi)
		}
	}
}

func TestSnapshotValuesAreAligned(t *testing.T) {
	ts := newTestSchema(t)
	rng := rand.New(rand.NewPCG(33, 34))
	w, err := netsync.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s netsync.Snapshot
	for range 20 {
		ghosts := randomGhosts(t, ts, rng, 1+rng.IntN(60), 5000, 1)
		p := encodeSnapshot(t, ts, w, netsync.SnapshotHeader{Tick: 5000}, ghosts)
		require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s))
		for gi, g := range s.Ghosts {
			gt, _ := ts.GhostType(netsync.GhostTypeID(g.Type))
			for ci, c := range gt.Components {
				align := ts.ComponentType(c).Align()
				assert.Zero(t, uintptr(s.Value(gi, ci))%uintptr(align), "ghost %d component %d", gi, ci)
			}
		}
	}
}

func TestSnapshotValuePanicsOutOfRange(t *testing.T) {
	ts := newTestSchema(t)
	w, err := netsync.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	g := testGhost{Ghost: components.Ghost{ID: 5, Type: uint16(ts.Rocket)}}
	p := encodeSnapshot(t, ts, w, netsync.SnapshotHeader{Tick: 9}, []testGhost{g})
	var s netsync.Snapshot
	require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s))
	assert.NotPanics(t, func() { s.Value(0, 1) })
	assert.Panics(t, func() { s.Value(0, 2) }, "a rocket has two components")
	assert.Panics(t, func() { s.Value(1, 0) }, "there is one ghost")
}

func TestSnapshotHeaderEdgeCases(t *testing.T) {
	ts := newTestSchema(t)
	w, err := netsync.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s netsync.Snapshot
	roundTrip := func(h netsync.SnapshotHeader) netsync.SnapshotHeader {
		t.Helper()
		p := encodeSnapshot(t, ts, w, h, nil)
		require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s), "%+v", h)
		assert.Empty(t, s.Ghosts)
		return s.SnapshotHeader
	}
	// Ticks near the end of the uint32 range, and just after the wrap,
	// keep their confirmed tick.
	for _, tick := range []gw.Tick{math.MaxUint32, math.MaxUint32 - 1<<19, math.MaxUint32 - 1<<20 + 5, 0, 5} {
		for _, d := range []int{10, -3} {
			h := netsync.SnapshotHeader{Tick: tick, Confirmed: tick.Add(-d), HasConfirmed: true, Complete: true}
			assert.Equal(t, h, roundTrip(h), "tick %d confirmed %d", tick, h.Confirmed)
		}
	}
	// Tick 0 is a tick like any other, and no confirmed tick is none.
	assert.Equal(t, netsync.SnapshotHeader{Tick: 7, Confirmed: 0, HasConfirmed: true}, roundTrip(netsync.SnapshotHeader{Tick: 7, Confirmed: 0, HasConfirmed: true}))
	assert.Equal(t, netsync.SnapshotHeader{Tick: 7}, roundTrip(netsync.SnapshotHeader{Tick: 7, Confirmed: 5}))
	// A confirmed tick up to 2^20 either side of the snapshot's tick is
	// sent; beyond it is nonsense and sent as none.
	for _, tt := range []struct {
		tick, confirmed gw.Tick
		sent            bool
	}{
		{7, 1<<20 + 7, true},
		{7, 1<<20 + 8, false},
		{1 << 21, 1 << 20, true},
		{1 << 21, 1<<20 - 1, false},
		{0, 5, true},
		{5, math.MaxUint32 - 1<<20 + 6, true},
		{5, math.MaxUint32 - 1<<20 + 5, false},
	} {
		got := roundTrip(netsync.SnapshotHeader{Tick: tt.tick, Confirmed: tt.confirmed, HasConfirmed: true})
		assert.Equal(t, tt.sent, got.HasConfirmed, "tick %d confirmed %d", tt.tick, tt.confirmed)
		if tt.sent {
			assert.Equal(t, tt.confirmed, got.Confirmed, "tick %d", tt.tick)
		} else {
			assert.Zero(t, got.Confirmed, "tick %d", tt.tick)
		}
	}

	// Leads beyond ±4096 ticks are clamped; a NaN lead (a bug upstream)
	// must not make the packet undecodable.
	assert.Equal(t, float32(4096), roundTrip(netsync.SnapshotHeader{Tick: 1, Lead: 1e9}).Lead)
	assert.Equal(t, float32(-4096), roundTrip(netsync.SnapshotHeader{Tick: 1, Lead: float32(math.Inf(-1))}).Lead)
	assert.Equal(t, float32(0), roundTrip(netsync.SnapshotHeader{Tick: 1, Lead: float32(math.NaN())}).Lead)
	assert.Equal(t, float32(-1.0/256), roundTrip(netsync.SnapshotHeader{Tick: 1, Lead: -0.004}).Lead)
}

func TestSnapshotWriterBudget(t *testing.T) {
	ts := newTestSchema(t)
	rng := rand.New(rand.NewPCG(35, 36))
	ghosts := randomGhosts(t, ts, rng, 400, 100, 1)
	var s netsync.Snapshot
	for _, maxBytes := range []int{64, 100, 300, 1199, netsync.MaxDatagram} {
		w, err := netsync.NewSnapshotWriter(ts.Schema, maxBytes)
		require.NoError(t, err)
		w.Begin(100)
		n := 0
		for i := range ghosts {
			if !w.AddGhost(ghosts[i].Ghost, ghosts[i].values(ts)) {
				break
			}
			n++
		}
		require.Less(t, n, len(ghosts), "400 ghosts never fit in %d bytes", maxBytes)
		assert.Equal(t, n, w.Count())
		// Once one ghost was left out, no later one gets in, even a small one.
		marker := testGhost{Ghost: components.Ghost{ID: 9999, Type: uint16(ts.Marker)}}
		assert.False(t, w.AddGhost(marker.Ghost, nil))
		assert.Equal(t, n, w.Count())

		h := netsync.SnapshotHeader{Tick: 100, Confirmed: 90, HasConfirmed: true, Lead: -4000, EchoTime: math.MaxUint32, Hold: math.MaxUint16, Complete: true}
		p := w.Finish(&h)
		assert.False(t, h.Complete, "Finish clears Complete when a ghost was left out")
		assert.LessOrEqual(t, len(p), maxBytes, "budget %d", maxBytes)
		require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s))
		assert.False(t, s.Complete)
		require.Len(t, s.Ghosts, n)
		for i := range n {
			requireGhostState(t, ts, &ghosts[i], &s, i)
		}
		if maxBytes == netsync.MaxDatagram {
			assert.Greater(t, n, 30)
			assert.Greater(t, len(p), netsync.MaxDatagram-100, "the budget is used")
		}

		// The writer starts afresh after Begin.
		w.Begin(101)
		require.True(t, w.AddGhost(ghosts[0].Ghost, ghosts[0].values(ts)))
		h = netsync.SnapshotHeader{Tick: 101, Complete: true}
		p = w.Finish(&h)
		assert.True(t, h.Complete)
		require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s))
		assert.True(t, s.Complete)
		assert.Len(t, s.Ghosts, 1)
	}
}

func TestSnapshotWriterErrorsAndPanics(t *testing.T) {
	ts := newTestSchema(t)
	for _, n := range []int{-1, 1, 63, netsync.MaxDatagram + 1} {
		_, err := netsync.NewSnapshotWriter(ts.Schema, n)
		require.Error(t, err, "size %d", n)
		assert.Contains(t, err.Error(), "size "+strconv.Itoa(n))
	}
	w, err := netsync.NewSnapshotWriter(ts.Schema, 64)
	require.NoError(t, err)
	w.Begin(1)
	g := testGhost{Ghost: components.Ghost{ID: 1, Type: uint16(ts.Rocket)}}
	assert.Panics(t, func() { w.AddGhost(g.Ghost, g.values(ts)[:1]) }, "too few values")
	assert.Panics(t, func() { w.AddGhost(components.Ghost{ID: 2, Type: 99}, nil) }, "unknown type")
}

func TestSnapshotEncodeDecodeAllocatesNothing(t *testing.T) {
	ts := newTestSchema(t)
	rng := rand.New(rand.NewPCG(37, 38))
	ghosts := randomGhosts(t, ts, rng, 64, 7000, 1)
	values := make([][]unsafe.Pointer, len(ghosts))
	for i := range ghosts {
		values[i] = ghosts[i].values(ts)
	}
	w, err := netsync.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s netsync.Snapshot
	run := func() {
		w.Begin(7000)
		for i := range ghosts {
			if !w.AddGhost(ghosts[i].Ghost, values[i]) {
				break
			}
		}
		h := netsync.SnapshotHeader{Tick: 7000, Confirmed: 6990, HasConfirmed: true, Lead: 1.5, Complete: true}
		if err := netsync.DecodeSnapshot(w.Finish(&h), ts.Schema, &s); err != nil {
			panic(err)
		}
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(50, run))
	assert.NotEmpty(t, s.Ghosts)
}

// rawSnapshot writes a snapshot field by field, so tests can put values in
// it that SnapshotWriter never writes.
type rawSnapshot struct{ w netsync.BitWriter }

type rawHeader struct {
	tick      uint32
	confirmed *int64 // tick − confirmed, or none
	lead      int64  // 1/256 ticks
	baseline  uint64
	count     uint64
}

func newRawSnapshot(h rawHeader) *rawSnapshot {
	r := &rawSnapshot{}
	w := &r.w
	w.WriteBits(netsync.ProtocolVersion, 8)
	w.WriteBits(uint64(netsync.MsgSnapshot), 8)
	w.WriteBits(uint64(h.tick), 32)
	w.WriteBool(h.confirmed != nil)
	if h.confirmed != nil {
		w.WriteVarint(*h.confirmed)
	}
	w.WriteVarint(h.lead)
	w.WriteBits(11, 32) // echo
	w.WriteBits(22, 16) // hold
	w.WriteBool(true)   // complete
	w.WriteUvarint(h.baseline)
	w.WriteUvarint(h.count)
	return r
}

// ghost writes a ghost's identity then, for each value, the "changed" bit
// and the value with the type's codec.
func (r *rawSnapshot) ghost(ts *testSchema, idDelta int64, typ, owner, age uint64, g *testGhost) *rawSnapshot {
	r.w.WriteVarint(idDelta)
	r.w.WriteUvarint(typ)
	r.w.WriteUvarint(owner)
	r.w.WriteUvarint(age)
	if g != nil {
		gt, _ := ts.GhostType(netsync.GhostTypeID(g.Type))
		for _, c := range gt.Components {
			r.w.WriteBool(true)
			writeValue(ts, &r.w, c, g)
		}
	}
	return r
}

func (r *rawSnapshot) bytes() []byte { return r.w.Bytes() }

// writeValue writes g's value of component c as the test components'
// Serialize methods describe it.
func writeValue(ts *testSchema, w *netsync.BitWriter, c netsync.ComponentID, g *testGhost) {
	code := func(q netsync.Quantizer, v float32) { w.WriteBits(uint64(q.Encode(v)), q.Bits()) }
	switch c {
	case ts.Pos:
		code(ts.PosQ, g.Pos.X)
		code(ts.PosQ, g.Pos.Y)
		code(ts.PosQ, g.Pos.Z)
	case ts.Vel:
		code(ts.VelQ, g.Vel.X)
		code(ts.VelQ, g.Vel.Y)
	case ts.Health:
		w.WriteBits(uint64(g.Health.HP), 8)
		w.WriteBits(uint64(min(g.Health.Armor, 1000)), 10)
		w.WriteBool(g.Health.Alive)
	case ts.Team:
		w.WriteBits(uint64(min(g.Team.ID, 2)), 2)
	}
}

func TestDecodeSnapshotRefusesHostilePackets(t *testing.T) {
	ts := newTestSchema(t)
	i64 := func(v int64) *int64 { return &v }
	rocket := &testGhost{Ghost: components.Ghost{Type: uint16(ts.Rocket)}, Pos: tPos{1, 2, 3}}
	marker := &testGhost{Ghost: components.Ghost{Type: uint16(ts.Marker)}}
	valid := newRawSnapshot(rawHeader{tick: 100, confirmed: i64(3), lead: 256, count: 2}).
		ghost(ts, 5, uint64(ts.Rocket), 1, 10, rocket).ghost(ts, -2, uint64(ts.Marker), 0, 0, marker).bytes()
	var s netsync.Snapshot
	require.NoError(t, netsync.DecodeSnapshot(valid, ts.Schema, &s), "the hand-built packet is valid")
	require.Len(t, s.Ghosts, 2)
	assert.Equal(t, components.Ghost{ID: 5, Type: uint16(ts.Rocket), Owner: 1, Spawned: 90}, s.Ghosts[0].Ghost)
	assert.Equal(t, components.Ghost{ID: 3, Type: uint16(ts.Marker), Spawned: 100}, s.Ghosts[1].Ghost)
	assert.Equal(t, netsync.SnapshotHeader{Tick: 100, Confirmed: 97, HasConfirmed: true, Lead: 1, EchoTime: 11, Hold: 22, Complete: true}, s.SnapshotHeader)

	// Ticks wrap: what would lie before tick 0 lies at the end of the range.
	wrapped := newRawSnapshot(rawHeader{tick: 100, confirmed: i64(100), count: 1}).ghost(ts, 1, uint64(ts.Marker), 0, 101, marker).bytes()
	require.NoError(t, netsync.DecodeSnapshot(wrapped, ts.Schema, &s), "spawned before tick 0, confirmed tick 0")
	assert.Equal(t, gw.Tick(0), s.Confirmed)
	assert.True(t, s.HasConfirmed)
	assert.Equal(t, gw.Tick(math.MaxUint32), s.Ghosts[0].Spawned)
	ahead := newRawSnapshot(rawHeader{tick: math.MaxUint32, confirmed: i64(-1)}).bytes()
	require.NoError(t, netsync.DecodeSnapshot(ahead, ts.Schema, &s), "confirmed one tick after the wrap")
	assert.Equal(t, gw.Tick(0), s.Confirmed)
	assert.True(t, s.HasConfirmed)

	badHealth := &testGhost{Ghost: components.Ghost{Type: uint16(ts.Player)}, Health: tHealth{Armor: 1000}}
	badHealthPkt := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Player), 0, 0, badHealth).bytes()
	// Patch the armor code from 1000 to 1023: it sits after the player's
	// position (3×17 bits), velocity (2×14 bits), HP (8 bits) and two
	// "changed" bits.
	armorBit := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Player), 0, 0, nil).w.BitLen() + 3 + 51 + 28 + 8
	for b := range 10 {
		badHealthPkt[(armorBit+b)/8] |= 1 << ((armorBit + b) % 8)
	}

	short := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Player), 0, 0, nil)
	short.w.WriteBool(true) // a position follows, but the packet ends

	unchanged := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Rocket), 0, 0, nil)
	unchanged.w.WriteBool(false)
	unchanged.w.WriteBool(false)

	tests := map[string]struct {
		p    []byte
		want error
		text string
	}{
		"nonzero baseline":       {newRawSnapshot(rawHeader{tick: 100, baseline: 4}).bytes(), netsync.ErrUnsupported, "tick 96"},
		"ghost type beyond":      {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, 4, 0, 0, nil).bytes(), netsync.ErrOutOfRange, "type 4"},
		"huge ghost type":        {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, math.MaxUint64, 0, 0, nil).bytes(), netsync.ErrOutOfRange, "type"},
		"more ghosts than fit":   {newRawSnapshot(rawHeader{tick: 100, count: 3}).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).bytes(), netsync.ErrOutOfRange, "3 ghosts"},
		"too many ghosts":        {newRawSnapshot(rawHeader{tick: 100, count: netsync.MaxGhostsPerSnapshot + 1}).bytes(), netsync.ErrOutOfRange, "1025"},
		"huge ghost count":       {newRawSnapshot(rawHeader{tick: 100, count: math.MaxUint64}).bytes(), netsync.ErrOutOfRange, "ghosts"},
		"duplicate ghost ID":     {newRawSnapshot(rawHeader{tick: 100, count: 3}).ghost(ts, 8, uint64(ts.Marker), 0, 0, nil).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).ghost(ts, -1, uint64(ts.Marker), 0, 0, nil).bytes(), netsync.ErrMalformed, "ghost 8 appears twice"},
		"same ID twice in a row": {newRawSnapshot(rawHeader{tick: 100, count: 2}).ghost(ts, 8, uint64(ts.Marker), 0, 0, nil).ghost(ts, 0, uint64(ts.Marker), 0, 0, nil).bytes(), netsync.ErrMalformed, "twice"},
		"ghost ID 0":             {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 0, uint64(ts.Marker), 0, 0, nil).bytes(), netsync.ErrOutOfRange, "ghost ID 0"},
		"negative ghost ID":      {newRawSnapshot(rawHeader{tick: 100, count: 2}).ghost(ts, 3, uint64(ts.Marker), 0, 0, nil).ghost(ts, -5, uint64(ts.Marker), 0, 0, nil).bytes(), netsync.ErrOutOfRange, "ghost ID -2"},
		"ghost ID beyond uint32": {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1<<32, uint64(ts.Marker), 0, 0, nil).bytes(), netsync.ErrOutOfRange, "4294967296"},
		"ghost ID overflow":      {newRawSnapshot(rawHeader{tick: 100, count: 2}).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).ghost(ts, math.MaxInt64, uint64(ts.Marker), 0, 0, nil).bytes(), netsync.ErrOutOfRange, "ghost ID"},
		"owner beyond uint32":    {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Marker), 1<<32, 0, nil).bytes(), netsync.ErrOutOfRange, "owner 4294967296"},
		"spawned 2^31 ticks ago": {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Marker), 0, 1<<31, nil).bytes(), netsync.ErrOutOfRange, "2147483648 ticks"},
		"spawned max uint64 ago": {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Marker), 0, math.MaxUint64, nil).bytes(), netsync.ErrOutOfRange, "ticks before tick 100"},
		"confirmed far behind":   {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(1<<20 + 1)}).bytes(), netsync.ErrOutOfRange, "confirmed"},
		"confirmed max int64":    {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(math.MaxInt64)}).bytes(), netsync.ErrOutOfRange, "confirmed"},
		"confirmed min int64":    {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(math.MinInt64)}).bytes(), netsync.ErrOutOfRange, "confirmed"},
		"confirmed far ahead":    {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(-(1 << 20) - 1)}).bytes(), netsync.ErrOutOfRange, "confirmed"},
		"lead too large":         {newRawSnapshot(rawHeader{tick: 100, lead: 1<<20 + 1}).bytes(), netsync.ErrOutOfRange, "lead"},
		"lead too small":         {newRawSnapshot(rawHeader{tick: 100, lead: -1<<20 - 1}).bytes(), netsync.ErrOutOfRange, "lead"},
		"component unchanged":    {unchanged.bytes(), netsync.ErrMalformed, "unchanged without a baseline"},
		"codec refuses value":    {badHealthPkt, netsync.ErrOutOfRange, "field Armor: netsync: integer 1023 outside 0..1000"},
		"short in a component":   {short.bytes(), netsync.ErrShortBuffer, "ghost 1 component"},
		"trailing garbage":       {append(append([]byte(nil), valid...), 0), netsync.ErrMalformed, "bits after"},
		"wrong message type":     {netsync.AppendHello(nil, &netsync.Hello{}), netsync.ErrMalformed, "hello"},
		"wrong version":          {append([]byte{netsync.ProtocolVersion + 1}, valid[1:]...), netsync.ErrOutOfRange, "version"},
		"unknown message type":   {append([]byte{netsync.ProtocolVersion, 0}, valid[2:]...), netsync.ErrOutOfRange, "type 0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s netsync.Snapshot
			err := netsync.DecodeSnapshot(tt.p, ts.Schema, &s)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.want), "%v is not %v", err, tt.want)
			assert.Contains(t, err.Error(), tt.text)
		})
	}
}

func TestDecodeSnapshotRefusesTruncatedPackets(t *testing.T) {
	ts := newTestSchema(t)
	rng := rand.New(rand.NewPCG(39, 40))
	w, err := netsync.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s netsync.Snapshot
	for _, h := range []netsync.SnapshotHeader{
		{Tick: 0, Confirmed: 5, HasConfirmed: true, Lead: 3},
		{Tick: 100000, Confirmed: 99990, HasConfirmed: true, Lead: -2.5, Complete: true},
		{Tick: math.MaxUint32, Lead: 4000},
	} {
		for _, n := range []int{0, 1, 5, 40} {
			ghosts := randomGhosts(t, ts, rng, n, h.Tick, 1)
			p := append([]byte(nil), encodeSnapshot(t, ts, w, h, ghosts)...)
			empty := append([]byte(nil), encodeSnapshot(t, ts, w, h, nil)...)
			require.NoError(t, netsync.DecodeSnapshot(p, ts.Schema, &s))
			for cut := range len(p) {
				err := netsync.DecodeSnapshot(p[:cut], ts.Schema, &s)
				require.Error(t, err, "cut to %d of %d bytes", cut, len(p))
				if cut < len(empty)-1 {
					// Inside the header: the data ended.
					require.ErrorIs(t, err, netsync.ErrShortBuffer, "cut to %d of %d bytes", cut, len(p))
				} else {
					// In the ghosts: either a read ran short or the count
					// announces more ghosts than the bytes left can hold.
					require.True(t, errors.Is(err, netsync.ErrShortBuffer) || errors.Is(err, netsync.ErrOutOfRange),
						"cut to %d of %d bytes: %v", cut, len(p), err)
				}
			}
		}
	}
}

func TestDecodeSnapshotNeverPanicsOnMutations(t *testing.T) {
	ts := newTestSchema(t)
	rng := rand.New(rand.NewPCG(41, 42))
	w, err := netsync.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s netsync.Snapshot
	for range 300 {
		ghosts := randomGhosts(t, ts, rng, rng.IntN(30), 5000, 1)
		p := append([]byte(nil), encodeSnapshot(t, ts, w, netsync.SnapshotHeader{Tick: 5000, Confirmed: 4999, HasConfirmed: true}, ghosts)...)
		for range 100 {
			q := append([]byte(nil), p...)
			for range 1 + rng.IntN(4) {
				q[rng.IntN(len(q))] ^= 1 << rng.IntN(8)
			}
			require.NotPanics(t, func() { _ = netsync.DecodeSnapshot(q, ts.Schema, &s) }, "% x", q)
		}
	}
}
