package protocol_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// randomGhosts returns n quantized ghosts of random types with distinct
// IDs; the ghosts owned by conn come first, and IDs are not ascending.
func randomGhosts(t testing.TB, ts *wiretest.Schema, rng *rand.Rand, n int, tick gw.Tick, conn components.ConnID) []wiretest.Ghost {
	var rt codec.Coder
	ids := rng.Perm(4 * n)
	ghosts := make([]wiretest.Ghost, n)
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
		g.Pos = wiretest.Pos{X: float32(rng.NormFloat64() * 200), Y: float32(rng.NormFloat64() * 200), Z: float32(rng.NormFloat64() * 10)}
		g.Vel = wiretest.Vel{X: float32(rng.NormFloat64() * 10), Y: float32(rng.NormFloat64() * 10)}
		g.Health = wiretest.Health{HP: uint8(rng.Uint32()), Armor: uint16(rng.IntN(1001)), Alive: rng.IntN(2) == 0}
		g.Team = wiretest.Team{ID: uint8(rng.IntN(3))}
		g.Quantize(ts, &rt)
	}
	return ghosts
}

func encodeSnapshot(t testing.TB, ts *wiretest.Schema, w *protocol.SnapshotWriter, h protocol.SnapshotHeader, ghosts []wiretest.Ghost) []byte {
	t.Helper()
	w.Begin(h.Tick)
	for i := range ghosts {
		require.True(t, w.AddGhost(ghosts[i].Ghost, true, ghosts[i].Values(ts)), "ghost %d fits", i)
	}
	require.Equal(t, len(ghosts), w.Count())
	return w.Finish(&h)
}

func TestSnapshotRoundTrip(t *testing.T) {
	ts := wiretest.NewSchema(t)
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s protocol.Snapshot
	rng := rand.New(rand.NewPCG(31, 32))

	ghosts := []wiretest.Ghost{
		// The client's own ghosts first, then the rest: IDs go down and up.
		{Ghost: components.Ghost{ID: 40, Type: uint16(ts.Player), Owner: 2, Spawned: 900}, Pos: wiretest.Pos{X: 1.25, Y: -3.5, Z: 0.01}, Vel: wiretest.Vel{X: 4, Y: -4}, Health: wiretest.Health{HP: 100, Armor: 1000, Alive: true}, Team: wiretest.Team{ID: 1}},
		{Ghost: components.Ghost{ID: 7, Type: uint16(ts.Rocket), Owner: 2, Spawned: 1000}, Pos: wiretest.Pos{X: -500, Y: 500, Z: 0}, Vel: wiretest.Vel{X: -50, Y: 50}},
		{Ghost: components.Ghost{ID: 19, Type: uint16(ts.Player), Owner: 3, Spawned: 1}, Pos: wiretest.Pos{X: 499.99, Y: 0, Z: -0.5}, Health: wiretest.Health{HP: 1}, Team: wiretest.Team{ID: 2}},
		{Ghost: components.Ghost{ID: 3, Type: uint16(ts.Marker), Owner: 0, Spawned: 0}},
		{Ghost: components.Ghost{ID: math.MaxUint32, Type: uint16(ts.Pickup), Owner: math.MaxUint16, Spawned: 999}, Pos: wiretest.Pos{X: 7, Y: 8, Z: 9}, Team: wiretest.Team{ID: 0}},
		{Ghost: components.Ghost{ID: 1, Type: uint16(ts.Rocket), Owner: 1, Spawned: 1000}, Vel: wiretest.Vel{X: 0.01, Y: -0.01}},
	}
	var rt codec.Coder
	for i := range ghosts {
		ghosts[i].Quantize(ts, &rt)
	}
	headers := []protocol.SnapshotHeader{
		{Tick: 1000, Confirmed: 995, HasConfirmed: true, Lead: 2.3, EchoTime: 123456, Hold: 17},
		{Tick: 1000, Lead: -1.7, EchoTime: 0, Hold: 0},
		{Tick: 1000, Confirmed: 1003, HasConfirmed: true, Lead: 0, EchoTime: math.MaxUint32, Hold: math.MaxUint16},
		{Tick: 1000, Confirmed: 1, HasConfirmed: true, Lead: 4096},
		{Tick: 1000, Confirmed: 0, HasConfirmed: true, Lead: 1},
		{Tick: 1000, Confirmed: 1000, HasConfirmed: true, Lead: -4096},
	}
	for _, h := range headers {
		p := encodeSnapshot(t, ts, w, h, ghosts)
		assert.LessOrEqual(t, len(p), protocol.MaxDatagram)
		typ, err := protocol.PeekType(p)
		require.NoError(t, err)
		require.Equal(t, protocol.MsgSnapshot, typ)

		require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s))
		assert.Equal(t, h.Tick, s.Tick)
		assert.Equal(t, h.Confirmed, s.Confirmed)
		assert.Equal(t, h.HasConfirmed, s.HasConfirmed)
		assert.Equal(t, h.EchoTime, s.EchoTime)
		assert.Equal(t, h.Hold, s.Hold)
		assert.InDelta(t, h.Lead, s.Lead, 1.0/512, "lead to the nearest 1/256 tick")
		assert.Equal(t, s.Lead, float32(math.Round(float64(h.Lead)*256))/256)
		require.Len(t, s.Ghosts, len(ghosts))
		for i := range ghosts {
			wiretest.RequireGhostState(t, ts, &ghosts[i], &s, i)
		}
	}

	// Many random snapshots, each decoded into the same reused Snapshot.
	for i := range 300 {
		tick := gw.Tick(1 + rng.IntN(100000))
		if i%10 == 0 {
			tick = gw.Tick(math.MaxUint32).Add(-rng.IntN(100))
		}
		ghosts := randomGhosts(t, ts, rng, rng.IntN(40), tick, 2)
		h := protocol.SnapshotHeader{Tick: tick, Confirmed: tick.Add(-rng.IntN(64)), HasConfirmed: true, Lead: float32(rng.NormFloat64() * 5),
			EchoTime: rng.Uint32(), Hold: uint16(rng.Uint32())}
		p := encodeSnapshot(t, ts, w, h, ghosts)
		require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s), "snapshot %d", i)
		assert.Equal(t, h.Confirmed, s.Confirmed, "snapshot %d", i)
		assert.True(t, s.HasConfirmed, "snapshot %d", i)
		require.Len(t, s.Ghosts, len(ghosts))
		for gi := range ghosts {
			wiretest.RequireGhostState(t, ts, &ghosts[gi], &s, gi)
		}
	}
}

func TestSnapshotValuesAreAligned(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(33, 34))
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s protocol.Snapshot
	for range 20 {
		ghosts := randomGhosts(t, ts, rng, 1+rng.IntN(60), 5000, 1)
		p := encodeSnapshot(t, ts, w, protocol.SnapshotHeader{Tick: 5000}, ghosts)
		require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s))
		for gi, g := range s.Ghosts {
			gt, _ := ts.GhostType(codec.GhostTypeID(g.Type))
			for ci, c := range gt.Components {
				align := ts.ComponentType(c).Align()
				assert.Zero(t, uintptr(s.Value(gi, ci))%uintptr(align), "ghost %d component %d", gi, ci)
			}
		}
	}
}

func TestSnapshotValuePanicsOutOfRange(t *testing.T) {
	ts := wiretest.NewSchema(t)
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	g := wiretest.Ghost{Ghost: components.Ghost{ID: 5, Type: uint16(ts.Rocket)}}
	p := encodeSnapshot(t, ts, w, protocol.SnapshotHeader{Tick: 9}, []wiretest.Ghost{g})
	var s protocol.Snapshot
	require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s))
	assert.NotPanics(t, func() { s.Value(0, 1) })
	assert.Panics(t, func() { s.Value(0, 2) }, "a rocket has two components")
	assert.Panics(t, func() { s.Value(1, 0) }, "there is one ghost")
}

func TestSnapshotHeaderEdgeCases(t *testing.T) {
	ts := wiretest.NewSchema(t)
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s protocol.Snapshot
	roundTrip := func(h protocol.SnapshotHeader) protocol.SnapshotHeader {
		t.Helper()
		p := encodeSnapshot(t, ts, w, h, nil)
		require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s), "%+v", h)
		assert.Empty(t, s.Ghosts)
		return s.SnapshotHeader
	}
	// Ticks near the end of the uint32 range, and just after the wrap,
	// keep their confirmed tick.
	for _, tick := range []gw.Tick{math.MaxUint32, math.MaxUint32 - 1<<19, math.MaxUint32 - 1<<20 + 5, 0, 5} {
		for _, d := range []int{10, -3} {
			h := protocol.SnapshotHeader{Tick: tick, Confirmed: tick.Add(-d), HasConfirmed: true}
			assert.Equal(t, h, roundTrip(h), "tick %d confirmed %d", tick, h.Confirmed)
		}
	}
	// Tick 0 is a tick like any other, and no confirmed tick is none.
	assert.Equal(t, protocol.SnapshotHeader{Tick: 7, Confirmed: 0, HasConfirmed: true}, roundTrip(protocol.SnapshotHeader{Tick: 7, Confirmed: 0, HasConfirmed: true}))
	assert.Equal(t, protocol.SnapshotHeader{Tick: 7}, roundTrip(protocol.SnapshotHeader{Tick: 7, Confirmed: 5}))
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
		got := roundTrip(protocol.SnapshotHeader{Tick: tt.tick, Confirmed: tt.confirmed, HasConfirmed: true})
		assert.Equal(t, tt.sent, got.HasConfirmed, "tick %d confirmed %d", tt.tick, tt.confirmed)
		if tt.sent {
			assert.Equal(t, tt.confirmed, got.Confirmed, "tick %d", tt.tick)
		} else {
			assert.Zero(t, got.Confirmed, "tick %d", tt.tick)
		}
	}

	// Leads beyond ±4096 ticks are clamped; a NaN lead (a bug upstream)
	// must not make the packet undecodable.
	assert.Equal(t, float32(4096), roundTrip(protocol.SnapshotHeader{Tick: 1, Lead: 1e9}).Lead)
	assert.Equal(t, float32(-4096), roundTrip(protocol.SnapshotHeader{Tick: 1, Lead: float32(math.Inf(-1))}).Lead)
	assert.Equal(t, float32(0), roundTrip(protocol.SnapshotHeader{Tick: 1, Lead: float32(math.NaN())}).Lead)
	assert.Equal(t, float32(-1.0/256), roundTrip(protocol.SnapshotHeader{Tick: 1, Lead: -0.004}).Lead)
}

func TestSnapshotWriterBudget(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(35, 36))
	ghosts := randomGhosts(t, ts, rng, 400, 100, 1)
	var s protocol.Snapshot
	for _, maxBytes := range []int{64, 100, 300, 1199, protocol.MaxDatagram} {
		w, err := protocol.NewSnapshotWriter(ts.Schema, maxBytes)
		require.NoError(t, err)
		w.Begin(100)
		n := 0
		room := w.Room()
		assert.Positive(t, room, "an empty snapshot of %d bytes has room", maxBytes)
		for i := range ghosts {
			if !w.AddGhost(ghosts[i].Ghost, true, ghosts[i].Values(ts)) {
				break
			}
			assert.Less(t, w.Room(), room, "a record kept takes room")
			room = w.Room()
			n++
		}
		require.Less(t, n, len(ghosts), "400 ghosts never fit in %d bytes", maxBytes)
		assert.Equal(t, n, w.Count())
		assert.Equal(t, room, w.Room(), "a record left out takes no room")
		// Once one ghost was left out, no later one gets in, even a small one.
		marker := wiretest.Ghost{Ghost: components.Ghost{ID: 9999, Type: uint16(ts.Marker)}}
		assert.False(t, w.AddGhost(marker.Ghost, true, nil))
		assert.Equal(t, n, w.Count())

		h := protocol.SnapshotHeader{Tick: 100, Confirmed: 90, HasConfirmed: true, Lead: -4000, EchoTime: math.MaxUint32, Hold: math.MaxUint16}
		p := w.Finish(&h)
		assert.True(t, w.Full())
		assert.LessOrEqual(t, len(p), maxBytes, "budget %d", maxBytes)
		require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s))
		require.Len(t, s.Ghosts, n)
		for i := range n {
			wiretest.RequireGhostState(t, ts, &ghosts[i], &s, i)
		}
		if maxBytes == protocol.MaxDatagram {
			assert.Greater(t, n, 30)
			assert.Greater(t, len(p), protocol.MaxDatagram-100, "the budget is used")
		}

		// The writer starts afresh after Begin.
		w.Begin(101)
		require.True(t, w.AddGhost(ghosts[0].Ghost, true, ghosts[0].Values(ts)))
		h = protocol.SnapshotHeader{Tick: 101}
		p = w.Finish(&h)
		assert.False(t, w.Full())
		require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s))
		assert.Len(t, s.Ghosts, 1)
	}
}

func TestSnapshotWriterErrorsAndPanics(t *testing.T) {
	ts := wiretest.NewSchema(t)
	for _, n := range []int{-1, 1, 63, protocol.MaxDatagram + 1} {
		_, err := protocol.NewSnapshotWriter(ts.Schema, n)
		require.Error(t, err, "size %d", n)
		assert.Contains(t, err.Error(), "size "+strconv.Itoa(n))
	}
	w, err := protocol.NewSnapshotWriter(ts.Schema, 64)
	require.NoError(t, err)
	w.Begin(1)
	g := wiretest.Ghost{Ghost: components.Ghost{ID: 1, Type: uint16(ts.Rocket)}}
	assert.Panics(t, func() { w.AddGhost(g.Ghost, true, g.Values(ts)[:1]) }, "too few values")
	assert.Panics(t, func() { w.AddGhost(components.Ghost{ID: 2, Type: 99}, true, nil) }, "unknown type")
}

func TestSnapshotEncodeDecodeAllocatesNothing(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(37, 38))
	ghosts := randomGhosts(t, ts, rng, 64, 7000, 1)
	values := make([][]unsafe.Pointer, len(ghosts))
	for i := range ghosts {
		values[i] = ghosts[i].Values(ts)
	}
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s protocol.Snapshot
	run := func() {
		w.Begin(7000)
		for i := range ghosts {
			if !w.AddGhost(ghosts[i].Ghost, true, values[i]) {
				break
			}
		}
		h := protocol.SnapshotHeader{Tick: 7000, Confirmed: 6990, HasConfirmed: true, Lead: 1.5}
		if err := protocol.DecodeSnapshot(w.Finish(&h), ts.Schema, &s); err != nil {
			panic(err)
		}
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(50, run))
	assert.NotEmpty(t, s.Ghosts)
}

// rawSnapshot writes a snapshot field by field, so tests can put values in
// it that SnapshotWriter never writes.
type rawSnapshot struct{ w bitstream.Writer }

type rawHeader struct {
	tick      uint32
	confirmed *int64 // tick − confirmed, or none
	lead      int64  // 1/256 ticks
	baseline  uint64
	despawns  []uint64
	count     uint64
	pad       uint64 // the bits up to the byte boundary before the ghosts, 0 from a writer
}

func newRawSnapshot(h rawHeader) *rawSnapshot {
	r := &rawSnapshot{}
	w := &r.w
	w.WriteBits(protocol.ProtocolVersion, 8)
	w.WriteBits(uint64(protocol.MsgSnapshot), 8)
	w.WriteBits(uint64(h.tick), 32)
	w.WriteBits(0, 2) // part
	w.WriteBool(h.confirmed != nil)
	if h.confirmed != nil {
		w.WriteVarint(*h.confirmed)
	}
	w.WriteVarint(h.lead)
	w.WriteBits(11, 32) // echo
	w.WriteBits(22, 16) // hold
	w.WriteUvarint(h.baseline)
	w.WriteUvarint(uint64(len(h.despawns)))
	for _, id := range h.despawns {
		w.WriteBits(id, 32)
	}
	w.WriteUvarint(h.count)
	w.WriteBits(h.pad, -w.BitLen()&7)
	return r
}

// ghost writes a ghost's ID and type, its identity, the "no baseline" bit
// and, unless g is nil, each value with the type's codec.
func (r *rawSnapshot) ghost(ts *wiretest.Schema, idDelta int64, typ uint64, owner, spawned uint32, g *wiretest.Ghost) *rawSnapshot {
	return r.head(idDelta, typ, owner, spawned).values(ts, g)
}

// rawTypeBits is the width of a type in the test schema's record heads:
// its 4 types take 2 bits.
const rawTypeBits = 2

// head writes a ghost's ID, type and identity, and nothing after them.
func (r *rawSnapshot) head(idDelta int64, typ uint64, owner, spawned uint32) *rawSnapshot {
	r.w.WriteVarint(idDelta)
	r.w.WriteBits(typ, rawTypeBits)
	r.w.WriteBool(true)
	r.w.WriteBits(uint64(owner), 32)
	r.w.WriteBits(uint64(spawned), 32)
	return r
}

// anon writes a ghost without its identity, as sent once the client
// acknowledged it.
func (r *rawSnapshot) anon(ts *wiretest.Schema, idDelta int64, typ uint64, g *wiretest.Ghost) *rawSnapshot {
	r.w.WriteVarint(idDelta)
	r.w.WriteBits(typ, rawTypeBits)
	r.w.WriteBool(false)
	return r.values(ts, g)
}

// values writes the "no baseline" and "not at rest" bits and each value
// of g (none when g is nil).
func (r *rawSnapshot) values(ts *wiretest.Schema, g *wiretest.Ghost) *rawSnapshot {
	r.w.WriteBits(0, 2)
	if g != nil {
		gt, _ := ts.GhostType(codec.GhostTypeID(g.Type))
		for _, c := range gt.Components {
			writeValue(ts, &r.w, c, g)
		}
	}
	return r
}

func (r *rawSnapshot) bytes() []byte { return r.w.Bytes() }

// writeValue writes g's value of component c as the test components'
// Serialize methods describe it.
func writeValue(ts *wiretest.Schema, w *bitstream.Writer, c codec.ComponentID, g *wiretest.Ghost) {
	code := func(q codec.Quantizer, v float32) { w.WriteBits(uint64(q.Encode(v)), q.Bits()) }
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
	ts := wiretest.NewSchema(t)
	i64 := func(v int64) *int64 { return &v }
	rocket := &wiretest.Ghost{Ghost: components.Ghost{Type: uint16(ts.Rocket)}, Pos: wiretest.Pos{X: 1, Y: 2, Z: 3}}
	marker := &wiretest.Ghost{Ghost: components.Ghost{Type: uint16(ts.Marker)}}
	valid := newRawSnapshot(rawHeader{tick: 100, confirmed: i64(3), lead: 256, count: 2}).
		ghost(ts, 5, uint64(ts.Rocket), 1, 90, rocket).anon(ts, -2, uint64(ts.Marker), marker).bytes()
	var s protocol.Snapshot
	require.NoError(t, protocol.DecodeSnapshot(valid, ts.Schema, &s), "the hand-built packet is valid")
	require.Len(t, s.Ghosts, 2)
	assert.Equal(t, components.Ghost{ID: 5, Type: uint16(ts.Rocket), Owner: 1, Spawned: 90}, s.Ghosts[0].Ghost)
	assert.True(t, s.Ghosts[0].Identity)
	assert.Equal(t, components.Ghost{ID: 3, Type: uint16(ts.Marker)}, s.Ghosts[1].Ghost, "no identity: owner and spawn tick unknown")
	assert.False(t, s.Ghosts[1].Identity)
	assert.Equal(t, protocol.SnapshotHeader{Tick: 100, Confirmed: 97, HasConfirmed: true, Lead: 1, EchoTime: 11, Hold: 22}, s.SnapshotHeader)
	assert.Empty(t, s.Despawned)

	despawning := newRawSnapshot(rawHeader{tick: 100, despawns: []uint64{4, 9, math.MaxUint32}}).bytes()
	require.NoError(t, protocol.DecodeSnapshot(despawning, ts.Schema, &s))
	assert.Equal(t, []components.GhostID{4, 9, math.MaxUint32}, s.Despawned)
	assert.Empty(t, s.Ghosts)

	// Ticks wrap: what would lie before tick 0 lies at the end of the range.
	wrapped := newRawSnapshot(rawHeader{tick: 100, confirmed: i64(100), count: 1}).ghost(ts, 1, uint64(ts.Marker), 0, math.MaxUint32, marker).bytes()
	require.NoError(t, protocol.DecodeSnapshot(wrapped, ts.Schema, &s), "spawned before tick 0, confirmed tick 0")
	assert.Equal(t, gw.Tick(0), s.Confirmed)
	assert.True(t, s.HasConfirmed)
	assert.Equal(t, gw.Tick(math.MaxUint32), s.Ghosts[0].Spawned)
	ahead := newRawSnapshot(rawHeader{tick: math.MaxUint32, confirmed: i64(-1)}).bytes()
	require.NoError(t, protocol.DecodeSnapshot(ahead, ts.Schema, &s), "confirmed one tick after the wrap")
	assert.Equal(t, gw.Tick(0), s.Confirmed)
	assert.True(t, s.HasConfirmed)

	badHealth := &wiretest.Ghost{Ghost: components.Ghost{Type: uint16(ts.Player)}, Health: wiretest.Health{Armor: 1000}}
	badHealthPkt := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Player), 0, 0, badHealth).bytes()
	// Patch the armor code from 1000 to 1023: it sits after the "no
	// baseline" and "not at rest" bits, the player's position (3×17 bits), velocity (2×14
	// bits) and HP (8 bits).
	armorBit := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Player), 0, 0, nil).w.BitLen() + 51 + 28 + 8
	for b := range 10 {
		badHealthPkt[(armorBit+b)/8] |= 1 << ((armorBit + b) % 8)
	}

	short := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1, uint64(ts.Player), 0, 0, nil) // a position follows, but the packet ends

	noDefault := newRawSnapshot(rawHeader{tick: 100, count: 1}).head(1, uint64(ts.Rocket), 0, 0)
	noDefault.w.WriteBool(true) // delta-encoded
	noDefault.w.WriteBool(true) // against the snapshot's default baseline, which it lacks
	noDefault.w.WriteBool(false)
	noDefault.w.WriteBool(false)

	farBase := newRawSnapshot(rawHeader{tick: 100, count: 1}).head(1, uint64(ts.Rocket), 0, 0)
	farBase.w.WriteBool(true)
	farBase.w.WriteBool(false)
	farBase.w.WriteUvarint(protocol.MaxBaseDistance + 1)

	zeroBase := newRawSnapshot(rawHeader{tick: 100, count: 1}).head(1, uint64(ts.Rocket), 0, 0)
	zeroBase.w.WriteBool(true)
	zeroBase.w.WriteBool(false)
	zeroBase.w.WriteUvarint(0)

	tests := map[string]struct {
		p    []byte
		want error
		text string
	}{
		"default baseline far":   {newRawSnapshot(rawHeader{tick: 100, baseline: protocol.MaxBaseDistance + 1}).bytes(), bitstream.ErrOutOfRange, "default baseline 65536"},
		"no default baseline":    {noDefault.bytes(), bitstream.ErrMalformed, "default baseline of a snapshot without one"},
		"ghost baseline far":     {farBase.bytes(), bitstream.ErrOutOfRange, "baseline 65536 ticks back"},
		"ghost baseline zero":    {zeroBase.bytes(), bitstream.ErrOutOfRange, "baseline 0 ticks back"},
		"more ghosts than fit":   {newRawSnapshot(rawHeader{tick: 100, count: 20}).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrOutOfRange, "20 ghosts"},
		"too many ghosts":        {newRawSnapshot(rawHeader{tick: 100, count: protocol.MaxGhostsPerSnapshot + 1}).bytes(), bitstream.ErrOutOfRange, "1025"},
		"huge ghost count":       {newRawSnapshot(rawHeader{tick: 100, count: math.MaxUint64}).bytes(), bitstream.ErrOutOfRange, "ghosts"},
		"duplicate ghost ID":     {newRawSnapshot(rawHeader{tick: 100, count: 3}).ghost(ts, 8, uint64(ts.Marker), 0, 0, nil).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).ghost(ts, -1, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrMalformed, "ghost 8 appears twice"},
		"same ID twice in a row": {newRawSnapshot(rawHeader{tick: 100, count: 2}).ghost(ts, 8, uint64(ts.Marker), 0, 0, nil).ghost(ts, 0, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrMalformed, "twice"},
		"ghost ID 0":             {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 0, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrOutOfRange, "ghost ID 0"},
		"negative ghost ID":      {newRawSnapshot(rawHeader{tick: 100, count: 2}).ghost(ts, 3, uint64(ts.Marker), 0, 0, nil).ghost(ts, -5, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrOutOfRange, "ghost ID -2"},
		"ghost ID beyond uint32": {newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(ts, 1<<32, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrOutOfRange, "4294967296"},
		"ghost ID overflow":      {newRawSnapshot(rawHeader{tick: 100, count: 2}).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).ghost(ts, math.MaxInt64, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrOutOfRange, "ghost ID"},
		"too many despawns":      {newRawSnapshot(rawHeader{tick: 100, despawns: make([]uint64, protocol.MaxDespawnsPerSnapshot+1)}).bytes(), bitstream.ErrOutOfRange, "257 despawns"},
		"more despawns than fit": {newRawSnapshot(rawHeader{tick: 100, despawns: []uint64{1, 2, 3}}).bytes()[:20], bitstream.ErrOutOfRange, "3 despawns"},
		"despawn of ghost 0":     {newRawSnapshot(rawHeader{tick: 100, despawns: []uint64{0}}).bytes(), bitstream.ErrMalformed, "ghost 0"},
		"despawns descending":    {newRawSnapshot(rawHeader{tick: 100, despawns: []uint64{9, 4}}).bytes(), bitstream.ErrMalformed, "ghost 4"},
		"despawn twice":          {newRawSnapshot(rawHeader{tick: 100, despawns: []uint64{9, 9}}).bytes(), bitstream.ErrMalformed, "ghost 9"},
		"confirmed far behind":   {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(1<<20 + 1)}).bytes(), bitstream.ErrOutOfRange, "confirmed"},
		"confirmed max int64":    {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(math.MaxInt64)}).bytes(), bitstream.ErrOutOfRange, "confirmed"},
		"confirmed min int64":    {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(math.MinInt64)}).bytes(), bitstream.ErrOutOfRange, "confirmed"},
		"confirmed far ahead":    {newRawSnapshot(rawHeader{tick: 100, confirmed: i64(-(1 << 20) - 1)}).bytes(), bitstream.ErrOutOfRange, "confirmed"},
		"lead too large":         {newRawSnapshot(rawHeader{tick: 100, lead: 1<<20 + 1}).bytes(), bitstream.ErrOutOfRange, "lead"},
		"lead too small":         {newRawSnapshot(rawHeader{tick: 100, lead: -1<<20 - 1}).bytes(), bitstream.ErrOutOfRange, "lead"},
		"codec refuses value":    {badHealthPkt, bitstream.ErrOutOfRange, "field Armor: netsync: integer 1023 outside 0..1000"},
		"short in a component":   {short.bytes(), bitstream.ErrShortBuffer, "ghost 1 component"},
		"padding not zero":       {newRawSnapshot(rawHeader{tick: 100, count: 1, pad: 1}).ghost(ts, 1, uint64(ts.Marker), 0, 0, nil).bytes(), bitstream.ErrMalformed, "padding before the ghosts is 0x1"},
		"trailing garbage":       {append(append([]byte(nil), valid...), 0), bitstream.ErrMalformed, "bits after"},
		"wrong message type":     {protocol.AppendHello(nil, &protocol.Hello{}), bitstream.ErrMalformed, "hello"},
		"wrong version":          {append([]byte{protocol.ProtocolVersion + 1}, valid[1:]...), bitstream.ErrOutOfRange, "version"},
		"unknown message type":   {append([]byte{protocol.ProtocolVersion, 0}, valid[2:]...), bitstream.ErrOutOfRange, "type 0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var s protocol.Snapshot
			err := protocol.DecodeSnapshot(tt.p, ts.Schema, &s)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.want), "%v is not %v", err, tt.want)
			assert.Contains(t, err.Error(), tt.text)
		})
	}
}

func TestDecodeSnapshotRefusesTruncatedPackets(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(39, 40))
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s protocol.Snapshot
	for _, h := range []protocol.SnapshotHeader{
		{Tick: 0, Confirmed: 5, HasConfirmed: true, Lead: 3},
		{Tick: 100000, Confirmed: 99990, HasConfirmed: true, Lead: -2.5},
		{Tick: math.MaxUint32, Lead: 4000},
	} {
		for _, n := range []int{0, 1, 5, 40} {
			ghosts := randomGhosts(t, ts, rng, n, h.Tick, 1)
			p := append([]byte(nil), encodeSnapshot(t, ts, w, h, ghosts)...)
			empty := append([]byte(nil), encodeSnapshot(t, ts, w, h, nil)...)
			require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s))
			for cut := range len(p) {
				err := protocol.DecodeSnapshot(p[:cut], ts.Schema, &s)
				require.Error(t, err, "cut to %d of %d bytes", cut, len(p))
				if cut < len(empty)-1 {
					// Inside the header: the data ended.
					require.ErrorIs(t, err, bitstream.ErrShortBuffer, "cut to %d of %d bytes", cut, len(p))
				} else {
					// In the ghosts: either a read ran short or the count
					// announces more ghosts than the bytes left can hold.
					require.True(t, errors.Is(err, bitstream.ErrShortBuffer) || errors.Is(err, bitstream.ErrOutOfRange),
						"cut to %d of %d bytes: %v", cut, len(p), err)
				}
			}
		}
	}
}

func TestDecodeSnapshotNeverPanicsOnMutations(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(41, 42))
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var s protocol.Snapshot
	for range 300 {
		ghosts := randomGhosts(t, ts, rng, rng.IntN(30), 5000, 1)
		p := append([]byte(nil), encodeSnapshot(t, ts, w, protocol.SnapshotHeader{Tick: 5000, Confirmed: 4999, HasConfirmed: true}, ghosts)...)
		for range 100 {
			q := append([]byte(nil), p...)
			for range 1 + rng.IntN(4) {
				q[rng.IntN(len(q))] ^= 1 << rng.IntN(8)
			}
			require.NotPanics(t, func() { _ = protocol.DecodeSnapshot(q, ts.Schema, &s) }, "% x", q)
		}
	}
}

// Despawn records: at most MaxDespawnsPerSnapshot and what fits the budget,
// written ascending before the ghosts, which share the budget with them.
func TestSnapshotWriterDespawns(t *testing.T) {
	ts := wiretest.NewSchema(t)
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	w.Begin(50)
	n := 0
	for id := components.GhostID(2*protocol.MaxDespawnsPerSnapshot + 1); id > 0; id -= 2 {
		if !w.Despawn(id) {
			break
		}
		n++
	}
	assert.Equal(t, protocol.MaxDespawnsPerSnapshot, n, "the cap")
	var s protocol.Snapshot
	require.NoError(t, protocol.DecodeSnapshot(w.Finish(&protocol.SnapshotHeader{Tick: 50}), ts.Schema, &s))
	require.Len(t, s.Despawned, n)
	assert.True(t, slices.IsSorted(s.Despawned), "ascending")
	assert.Equal(t, components.GhostID(2*protocol.MaxDespawnsPerSnapshot+1), s.Despawned[n-1])

	small, err := protocol.NewSnapshotWriter(ts.Schema, 64)
	require.NoError(t, err)
	small.Begin(51)
	n = 0
	for small.Despawn(components.GhostID(n + 1)) {
		n++
	}
	assert.Equal(t, (64-40)/4, n, "the budget: 4 bytes per record")
	g := wiretest.Ghost{Ghost: components.Ghost{ID: 900, Type: uint16(ts.Marker)}}
	assert.False(t, small.AddGhost(g.Ghost, false, nil), "no room left for a ghost")
	require.NoError(t, protocol.DecodeSnapshot(small.Finish(&protocol.SnapshotHeader{Tick: 51}), ts.Schema, &s))
	assert.Len(t, s.Despawned, n)
	assert.Empty(t, s.Ghosts)

	small.Begin(52)
	require.True(t, small.AddGhost(g.Ghost, false, nil))
	assert.Panics(t, func() { small.Despawn(3) }, "a despawn after a ghost")
	small.Begin(53)
	assert.Panics(t, func() { small.Despawn(0) }, "ghost ID 0")
}

// A record's type takes the bits the schema's types need; a code beyond
// the last type (3 types in 2 bits leave one) is refused.
func TestDecodeSnapshotRefusesATypeBeyondTheSchema(t *testing.T) {
	var b codec.SchemaBuilder
	for _, name := range []string{"a", "b", "c"} {
		b.GhostType(name)
	}
	schema, err := b.Build()
	require.NoError(t, err)
	for typ, want := range map[uint64]string{2: "", 3: "type 3 outside 0..2"} {
		p := newRawSnapshot(rawHeader{tick: 100, count: 1}).ghost(nil, 1, typ, 0, 0, nil).bytes()
		var s protocol.Snapshot
		err := protocol.DecodeSnapshot(p, schema, &s)
		if want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, bitstream.ErrOutOfRange)
		require.ErrorContains(t, err, want)
	}
}
