package protocol_test

import (
	"math/rand/v2"
	"slices"
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

// encodeGhost encodes g's components byte-aligned, as a server does once
// per tick, into an EncodedGhost.
func encodeGhost(ts *wiretest.Schema, g *wiretest.Ghost) *protocol.EncodedGhost {
	gt, _ := ts.GhostType(codec.GhostTypeID(g.Type))
	var w bitstream.Writer
	var st codec.Stream
	eg := &protocol.EncodedGhost{Ghost: g.Ghost}
	for i, c := range gt.Components {
		start := w.BitLen()
		protocol.EncodeComponent(ts.Schema, &st, &w, c, g.Values(ts)[i])
		eg.Bits = append(eg.Bits, int32(start), int32(w.BitLen()-start))
		if pad := -w.BitLen() & 7; pad > 0 {
			w.WriteBits(0, pad)
		}
	}
	eg.Src = w.Bytes()
	return eg
}

// Delta records carry only their changed components and name their
// baseline: the snapshot's default in one bit, any other by its distance;
// full records carry every component. Each decodes to what was written.
func TestSnapshotDeltaRoundTrip(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(9, 9))
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	for _, tick := range []gw.Tick{100, 0, 1<<32 - 1} { // the default baseline across the wrap, too
		ghosts := randomGhosts(t, ts, rng, 40, tick, 1)
		w.Begin(tick)
		def := tick.Add(-3)
		w.DefaultBase(def)
		type want struct {
			hasBase bool
			base    gw.Tick
			present uint32
			rest    bool
		}
		var wants []want
		for i := range ghosts {
			eg := encodeGhost(ts, &ghosts[i])
			gt, _ := ts.GhostType(codec.GhostTypeID(eg.Type))
			all := uint32(1)<<len(gt.Components) - 1
			switch i % 4 {
			case 0: // full, said to rest or not
				eg.Rest = i%8 == 0
				wants = append(wants, want{present: all, rest: eg.Rest})
			case 1: // against the default baseline
				eg.HasBase, eg.Base, eg.Changed = true, def, rng.Uint32()&all
				wants = append(wants, want{true, def, eg.Changed, eg.Changed == 0})
			case 2: // against an older one
				eg.HasBase, eg.Base, eg.Changed = true, tick.Add(-1-rng.IntN(protocol.MaxBaseDistance)), rng.Uint32()&all
				wants = append(wants, want{true, eg.Base, eg.Changed, eg.Changed == 0})
			case 3: // nothing changed
				eg.HasBase, eg.Base = true, tick.Add(-1)
				wants = append(wants, want{true, eg.Base, 0, true})
			}
			require.True(t, w.AddEncoded(eg), "ghost %d fits", i)
		}
		var snap protocol.Snapshot
		require.NoError(t, protocol.DecodeSnapshot(w.Finish(&protocol.SnapshotHeader{Tick: tick}), ts.Schema, &snap))
		require.Len(t, snap.Ghosts, len(ghosts))
		for gi, gs := range snap.Ghosts {
			wt := wants[gi]
			assert.Equalf(t, wt.hasBase, gs.HasBase, "tick %d ghost %d: baseline", tick, gi)
			assert.Equalf(t, wt.base, gs.Base, "tick %d ghost %d: baseline tick", tick, gi)
			assert.Equalf(t, wt.present, gs.Present, "tick %d ghost %d: components present", tick, gi)
			assert.Equalf(t, wt.rest, gs.Rest, "tick %d ghost %d: at rest", tick, gi)
			gt, _ := ts.GhostType(codec.GhostTypeID(gs.Type))
			for ci, c := range gt.Components {
				if gs.Present&(1<<ci) == 0 {
					continue
				}
				size := ts.ComponentType(c).Size()
				assert.Equalf(t, unsafe.Slice((*byte)(ghosts[gi].Values(ts)[ci]), size), unsafe.Slice((*byte)(snap.Value(gi, ci)), size),
					"tick %d ghost %d component %d", tick, gi, ci)
			}
		}
	}
}

// A record at rest costs a few bytes; the same ghost in full costs its
// values.
func TestSnapshotDeltaAtRestIsSmall(t *testing.T) {
	ts := wiretest.NewSchema(t)
	g := wiretest.Ghost{}
	g.ID, g.Type = 5, uint16(ts.Player)
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	size := func(delta bool) int {
		w.Begin(100)
		w.DefaultBase(99)
		eg := encodeGhost(ts, &g)
		eg.HasBase, eg.Base = delta, 99
		require.True(t, w.AddEncoded(eg))
		return len(w.Finish(&protocol.SnapshotHeader{Tick: 100}))
	}
	empty := func() int { w.Begin(100); return len(w.Finish(&protocol.SnapshotHeader{Tick: 100})) }()
	rest, full := size(true)-empty, size(false)-empty
	assert.LessOrEqual(t, rest, 3, "a player at rest: ID, type, flags and 4 unchanged bits")
	assert.Greater(t, full, 3*rest, "a player in full")
}

// A record body encoded once and added to several snapshots of the tick
// (after other records, so with other ID deltas) gives the bytes
// AddEncoded writes for the same records: full ones, deltas against the
// default baseline or another with any changed components, with and
// without identity, in snapshots with a default baseline and without.
func TestRecordBodyWritesWhatAddEncodedWrites(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(31, 32))
	direct, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	spliced, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	const tick = gw.Tick(1<<32 - 2)
	def := tick.Add(-2)
	ghosts := randomGhosts(t, ts, rng, 30, tick, 1)
	egs := make([]*protocol.EncodedGhost, len(ghosts))
	bodies := make([]protocol.RecordBody, len(ghosts))
	for i := range ghosts {
		eg := encodeGhost(ts, &ghosts[i])
		gt, _ := ts.GhostType(codec.GhostTypeID(eg.Type))
		if i%3 != 0 {
			eg.HasBase, eg.Base, eg.Changed = true, def, rng.Uint32()&(1<<len(gt.Components)-1)
		} else {
			eg.Rest = i%2 == 0
		}
		eg.Identity = i%5 == 0
		egs[i] = eg
	}
	for round := range 4 { // later ticks, a different subset each time: other ID deltas before each record
		tick, def := tick+gw.Tick(round), def+gw.Tick(round)
		for i, eg := range egs {
			if eg.HasBase {
				eg.Base = def.Add(-(i % 4 / 3) * (1 + i%200)) // every fourth further back: its distance in the record
			}
		}
		direct.Begin(tick)
		spliced.Begin(tick)
		if round < 3 { // the last round without a default baseline: every distance in the record
			direct.DefaultBase(def)
			spliced.DefaultBase(def)
		}
		n := 0
		for i, eg := range egs {
			if round > 0 && rng.IntN(2) == 0 {
				continue
			}
			if !bodies[i].For(eg) {
				require.Zero(t, round, "ghost %d: a body is encoded once", i)
				bodies[i].Encode(ts.Schema, eg)
			}
			require.True(t, direct.AddEncoded(eg))
			require.True(t, spliced.AddBody(eg, &bodies[i]))
			n++
		}
		h := protocol.SnapshotHeader{Tick: tick}
		want := append([]byte(nil), direct.Finish(&h)...)
		require.Equal(t, want, spliced.Finish(&h), "round %d, %d records", round, n)
	}

	other := *egs[1]
	other.Changed ^= 1
	moving := *egs[0]
	moving.Rest = !moving.Rest
	assert.False(t, bodies[0].For(&moving), "a full record said to rest or not")
	def = egs[1].Base
	at := def + 2
	assert.False(t, bodies[1].For(&other), "other changed components")
	assert.Panics(t, func() { spliced.Begin(at); spliced.DefaultBase(def); spliced.AddBody(&other, &bodies[1]) }, "a body with other components")
	assert.Panics(t, func() { spliced.Begin(at); spliced.DefaultBase(def); spliced.AddBody(egs[2], &bodies[1]) }, "another ghost's body")
	bodies[1].Reset()
	assert.False(t, bodies[1].For(egs[1]), "after Reset")
	assert.Panics(t, func() { spliced.Begin(at); spliced.DefaultBase(def); spliced.AddBody(egs[1], &bodies[1]) }, "a body forgotten")
}

func TestSnapshotWriterPanicsOnBadBaselines(t *testing.T) {
	ts := wiretest.NewSchema(t)
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	g := wiretest.Ghost{}
	g.ID, g.Type = 5, uint16(ts.Marker)
	w.Begin(100)
	assert.Panics(t, func() { w.DefaultBase(100) }, "the snapshot's own tick")
	assert.Panics(t, func() { w.DefaultBase(gw.Tick(100).Add(-protocol.MaxBaseDistance - 1)) }, "too old")
	eg := encodeGhost(ts, &g)
	eg.HasBase, eg.Base = true, 101
	assert.Panics(t, func() { w.AddEncoded(eg) }, "a baseline after the snapshot")
	eg.Bits = []int32{0}
	assert.Panics(t, func() { w.AddEncoded(eg) }, "bit ranges not matching the type")
	w.Begin(100)
	eg = encodeGhost(ts, &g)
	require.True(t, w.AddEncoded(eg))
	assert.Panics(t, func() { w.DefaultBase(99) }, "after a ghost")
}

// A snapshot's part number and a budget below the writer's maximum: the
// part comes back, and a budgeted snapshot holds fewer ghosts within its
// bytes. A part beyond MaxSnapshotParts is a bug.
func TestSnapshotPartsAndBudget(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(3, 4))
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	ghosts := randomGhosts(t, ts, rng, 200, 50, 1)
	fill := func() int {
		w.Begin(50)
		n := 0
		for i := range ghosts {
			if !w.AddGhost(ghosts[i].Ghost, true, ghosts[i].Values(ts)) {
				break
			}
			n++
		}
		return n
	}
	full := fill()
	for part := range uint8(protocol.MaxSnapshotParts) {
		fill()
		var snap protocol.Snapshot
		require.NoError(t, protocol.DecodeSnapshot(w.Finish(&protocol.SnapshotHeader{Tick: 50, Part: part}), ts.Schema, &snap))
		assert.Equal(t, part, snap.Part)
	}
	require.NoError(t, w.Budget(300))
	small := fill()
	p := w.Finish(&protocol.SnapshotHeader{Tick: 50})
	assert.LessOrEqual(t, len(p), 300)
	assert.Less(t, small, full/2, "a 300-byte budget holds fewer ghosts than 1,200 bytes")
	require.ErrorContains(t, w.Budget(63), "snapshot budget 63 outside 64..1200")
	require.ErrorContains(t, w.Budget(1201), "1201")
	assert.Panics(t, func() { w.Finish(&protocol.SnapshotHeader{Tick: 50, Part: protocol.MaxSnapshotParts}) })
}

// Rewind drops the records added after a Mark: the snapshot reads as if
// they had never been added, and writing goes on from there.
func TestSnapshotWriterRewind(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(5, 6))
	ghosts := randomGhosts(t, ts, rng, 30, 70, 1)
	w, err := protocol.NewSnapshotWriter(ts.Schema, 300)
	require.NoError(t, err)
	var want, got protocol.Snapshot
	w.Begin(70)
	require.True(t, w.Despawn(9))
	for i := range 3 {
		require.True(t, w.AddGhost(ghosts[i].Ghost, true, ghosts[i].Values(ts)))
	}
	require.True(t, w.AddGhost(ghosts[5].Ghost, true, ghosts[5].Values(ts)))
	require.NoError(t, protocol.DecodeSnapshot(w.Finish(&protocol.SnapshotHeader{Tick: 70}), ts.Schema, &want))

	w.Begin(70)
	require.True(t, w.Despawn(9))
	for i := range 3 {
		require.True(t, w.AddGhost(ghosts[i].Ghost, true, ghosts[i].Values(ts)))
	}
	m := w.Mark()
	n := 3
	for ; n < len(ghosts) && w.AddGhost(ghosts[n].Ghost, true, ghosts[n].Values(ts)); n++ {
	}
	require.True(t, w.Full(), "test setup: the writer filled up")
	w.Rewind(m)
	assert.False(t, w.Full())
	assert.Equal(t, 3, w.Count())
	require.True(t, w.AddGhost(ghosts[5].Ghost, true, ghosts[5].Values(ts)))
	require.NoError(t, protocol.DecodeSnapshot(w.Finish(&protocol.SnapshotHeader{Tick: 70}), ts.Schema, &got))
	assert.Equal(t, want.Ghosts, got.Ghosts)
	assert.Equal(t, want.Despawned, got.Despawned)
}

// baseState lays g's values out as a snapshot holds a ghost: what a
// receiver passes to Snapshot.Resolve.
func baseState(ts *wiretest.Schema, g *wiretest.Ghost) []byte {
	gt, _ := ts.GhostType(codec.GhostTypeID(g.Type))
	var out []byte
	for i, c := range gt.Components {
		size := ts.ComponentSize(c)
		out = append(out, unsafe.Slice((*byte)(g.Values(ts)[i]), size)...)
		out = append(out, make([]byte, (size+7)&^7-size)...)
	}
	return out
}

// Records coded relative to their baselines decode, once resolved
// against the receiver's state there, to exactly the values sent, in
// fewer bits than the same records coded plain when the values moved a
// little; records with a baseline but coded plain still decode as before.
func TestSnapshotRelativeRoundTrip(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(21, 22))
	var rt codec.Coder
	tick := gw.Tick(1000)
	base := randomGhosts(t, ts, rng, 40, tick, 1)
	cur := slices.Clone(base)
	for i := range cur {
		g := &cur[i]
		g.Pos.X += float32(rng.IntN(21)-10) * 0.01
		g.Pos.Y += float32(rng.IntN(3)-1) * 0.01
		g.Vel.X += 0.05
		if i%5 == 0 {
			g.Health.Armor = uint16(rng.IntN(1001))
		}
		g.Quantize(ts, &rt)
	}
	sizes := map[bool]int{}
	for _, relative := range []bool{false, true} {
		w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
		require.NoError(t, err)
		w.Begin(tick)
		w.DefaultBase(tick - 3)
		for i := range cur {
			eg := encodeGhost(ts, &cur[i])
			eg.HasBase, eg.Base, eg.Changed = true, tick-3, 1<<8-1
			if relative {
				eg.BaseSrc, eg.BaseFrom = encodeGhost(ts, &base[i]).Src, tick-3
			}
			require.True(t, w.AddEncoded(eg), "ghost %d fits", i)
		}
		p := w.Finish(&protocol.SnapshotHeader{Tick: tick})
		sizes[relative] = len(p)
		var s protocol.Snapshot
		require.NoError(t, protocol.DecodeSnapshot(p, ts.Schema, &s))
		require.Len(t, s.Ghosts, len(cur))
		for gi := range s.Ghosts {
			g := &s.Ghosts[gi]
			gt, _ := ts.GhostType(codec.GhostTypeID(g.Type))
			if len(gt.Components) == 0 {
				require.False(t, g.Relative, "nothing changed in a ghost with no components")
				continue
			}
			require.Equal(t, relative, g.Relative, "ghost %d", gi)
			if relative {
				require.NoError(t, s.Resolve(gi, baseState(ts, &base[gi])), "base %+v cur %+v type %d", base[gi].Pos, cur[gi].Pos, cur[gi].Type)
			}
			for ci, v := range cur[gi].Values(ts) {
				size := ts.ComponentSize(gt.Components[ci])
				require.Equal(t, unsafe.Slice((*byte)(v), size), unsafe.Slice((*byte)(s.Value(gi, ci)), size), "ghost %d component %d", gi, ci)
			}
		}
	}
	require.Less(t, sizes[true]*10, sizes[false]*7, "relative %d bytes against plain %d", sizes[true], sizes[false])
	t.Logf("40 ghosts moved a little: %d bytes relative, %d plain", sizes[true], sizes[false])
}

// A relative value the receiver's baseline takes out of range is an
// error naming the ghost and field, and the ghost's record is dropped.
func TestSnapshotRelativeOutOfRangeIsAnError(t *testing.T) {
	ts := wiretest.NewSchema(t)
	tick := gw.Tick(50)
	g := wiretest.Ghost{Ghost: components.Ghost{ID: 3, Type: uint16(ts.Rocket)}, Pos: wiretest.Pos{X: 499.99}}
	near := g
	near.Pos.X = 499.9
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	w.Begin(tick)
	eg := encodeGhost(ts, &g)
	eg.HasBase, eg.Base, eg.Changed, eg.BaseSrc = true, tick-1, 1, encodeGhost(ts, &near).Src
	require.True(t, w.AddEncoded(eg))
	var s protocol.Snapshot
	require.NoError(t, protocol.DecodeSnapshot(w.Finish(&protocol.SnapshotHeader{Tick: tick}), ts.Schema, &s))
	// Against a receiver's baseline at the top of the range, the same
	// step up leaves it.
	top := near
	top.Pos.X = 500
	err = s.Resolve(0, baseState(ts, &top))
	require.ErrorIs(t, err, bitstream.ErrOutOfRange)
	require.ErrorContains(t, err, "ghost 3 component wiretest.Pos: field X")
}
