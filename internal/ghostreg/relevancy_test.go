package ghostreg_test

import (
	"testing"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// Relevancy: a ghost that leaves a client's radius is despawned there and
// returns with its identity and current state; a ghost never in the
// radius is never on the wire to that client, not even its ID. The
// client's own ghost is in scope wherever it is.
func TestViewRelevancyRadius(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	var crates []ecs.Entity
	for i := range 20 {
		crates = append(crates, p.spawn(t, p.s.crate, 0, Pos{float32(i * 4), 0}, HP{int32(i)}))
	}
	mine := p.spawn(t, p.s.player, me, Pos{-90, 0}, HP{1})
	center := float32(0)
	v := viewOf(p.srv, me)
	v.SetRelevant(func(e ecs.Entity) bool {
		d := getPos(p.sw, e).X - center
		return d >= -9 && d <= 9
	})
	onWire := map[components.GhostID]bool{}
	tick := gw.Tick(1)
	step := func(n int) {
		for range n {
			p.sw.SetTick(tick)
			p.srv.Quantize()
			snap, _ := writeSnapshot(t, p.s, p.srv, 0, tick, me)
			for _, g := range snap.Ghosts {
				onWire[g.ID] = true
			}
			for _, id := range snap.Despawned {
				onWire[id] = true
			}
			p.apply(snap)
			tick++
		}
	}
	id := func(e ecs.Entity) components.GhostID { return getGhost(p.sw, e).ID }
	// in reports which ghosts the client has, checking each one's values.
	in := func() []components.GhostID {
		var ids []components.GhostID
		p.cl.Each(func(gid components.GhostID, ce ecs.Entity, _ bool) {
			se, ok := p.srv.Entity(gid)
			require.True(t, ok)
			p.checkValues(t, gid, se, ce)
			ids = append(ids, gid)
		})
		return ids
	}
	step(3)
	assert.Equal(t, []components.GhostID{id(crates[0]), id(crates[1]), id(crates[2]), id(mine)}, in(), "in scope at X=0: crates at 0, 4, 8, and the own player far away")

	// The scope moves to X=40: within one relevancy round (8 snapshots)
	// and the acknowledgement, the first crates are despawned there and
	// the crates around 40 arrive. Crate 0 changes while out of scope.
	center = 40
	getHP(p.sw, crates[0]).V = 77
	step(10)
	assert.Equal(t, []components.GhostID{id(crates[8]), id(crates[9]), id(crates[10]), id(crates[11]), id(crates[12]), id(mine)}, in(), "in scope at X=40")
	assert.Equal(t, uint64(3), v.Stats().ScopeExits, "three crates left the scope")

	// Back at X=0: crate 0 returns with its current state.
	center = 0
	step(10)
	assert.Equal(t, []components.GhostID{id(crates[0]), id(crates[1]), id(crates[2]), id(mine)}, in(), "in scope at X=0 again")
	ce, ok := p.cl.Entity(id(crates[0]))
	require.True(t, ok)
	assert.Equal(t, HP{77}, *getHP(p.cw, ce), "crate 0 came back with the state it got while away")

	for i, e := range crates {
		if i >= 3 && (i < 8 || i > 12) {
			assert.Falsef(t, onWire[id(e)], "crate %d was never in scope, yet its ID was on the wire", i)
		}
	}
}

// A client that never acknowledges a snapshot still converges: without an
// acknowledged baseline every record is a full state with its identity
// (counted), and the client's state equals the server's quantized state.
func TestViewClientThatNeverAcknowledgesConverges(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	var es []ecs.Entity
	for i := range 10 {
		es = append(es, p.spawn(t, p.s.crate, 0, Pos{float32(i), 0}, HP{int32(i)}))
	}
	v := viewOf(p.srv, me)
	sw, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	for tick := gw.Tick(1); tick <= 30; tick++ {
		if tick <= 20 { // moving, then at rest
			for i, e := range es {
				getPos(p.sw, e).Y = float32(tick) * 0.37 * float32(i)
			}
		}
		p.srv.Quantize()
		sw.Begin(tick)
		p.srv.WriteSnapshot(sw, v, tick)
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), p.s.Schema, &snap))
		require.Len(t, snap.Ghosts, len(es), "tick %d: nothing acknowledged, every ghost in every snapshot", tick)
		for _, g := range snap.Ghosts {
			require.False(t, g.HasBase, "tick %d: no baseline without an acknowledgement", tick)
			require.True(t, g.Identity, "tick %d: identity until acknowledged", tick)
		}
		p.apply(&snap)
	}
	for _, e := range es {
		gid := getGhost(p.sw, e).ID
		ce, ok := p.cl.Entity(gid)
		require.True(t, ok)
		p.checkValues(t, gid, e, ce)
	}
	assert.Equal(t, uint64(29*len(es)), v.Stats().FullStates, "every record after the first of each ghost counted as full")
	assert.Zero(t, p.cl.Stats().BaselineMissing)
}

// A delta record whose baseline the client does not hold is dropped and
// counted, never applied over a guess.
func TestClientCompleteRefusesAMissingBaseline(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	e := p.spawn(t, p.s.crate, 0, Pos{1, 2}, HP{3})
	p.srv.Quantize()
	first, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	p.apply(first)
	getPos(p.sw, e).X = 5
	p.srv.Quantize()
	writeSnapshot(t, p.s, p.srv, 0, 2, me) // lost, though acknowledged: a server that breaks the protocol
	getHP(p.sw, e).V = 4
	p.srv.Quantize()
	third, _ := writeSnapshot(t, p.s, p.srv, 0, 3, me)
	require.Len(t, third.Ghosts, 1)
	require.True(t, third.Ghosts[0].HasBase)
	require.Equal(t, gw.Tick(2), third.Ghosts[0].Base)
	p.apply(third)
	assert.Equal(t, uint64(1), p.cl.Stats().BaselineMissing)
	ce, ok := p.cl.Entity(getGhost(p.sw, e).ID)
	require.True(t, ok)
	assert.Equal(t, Pos{1, 2}, *getPos(p.cw, ce), "the state of the last record applied, not a guess")
	assert.Equal(t, HP{3}, *getHP(p.cw, ce))
}

// A client that could not complete a delta asks for full states: Resync
// sends every ghost in scope again with its identity and every
// component, and the client's state is the server's again. A second
// request within a second is refused and counted.
func TestViewResyncRecoversAMissingBaseline(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	var es []ecs.Entity
	for i := range 4 {
		es = append(es, p.spawn(t, p.s.crate, 0, Pos{float32(i), 0}, HP{int32(i)}))
	}
	p.srv.Quantize()
	first, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	p.apply(first)
	for _, e := range es {
		getHP(p.sw, e).V += 10
	}
	p.srv.Quantize()
	writeSnapshot(t, p.s, p.srv, 0, 2, me) // lost, yet acknowledged: the protocol broken
	for _, e := range es {
		getPos(p.sw, e).Y = 3
	}
	p.srv.Quantize()
	third, _ := writeSnapshot(t, p.s, p.srv, 0, 3, me)
	p.apply(third)
	require.Equal(t, uint64(len(es)), p.cl.Stats().BaselineMissing, "every record's baseline missing")

	v := viewOf(p.srv, me)
	require.True(t, v.Resync(4))
	p.srv.Quantize()
	fourth, _ := writeSnapshot(t, p.s, p.srv, 0, 4, me)
	require.Len(t, fourth.Ghosts, len(es), "every ghost in scope again")
	for _, g := range fourth.Ghosts {
		assert.True(t, g.Identity, "ghost %d with its identity", g.ID)
		assert.False(t, g.HasBase, "ghost %d in full", g.ID)
	}
	p.apply(fourth)
	for _, e := range es {
		gid := getGhost(p.sw, e).ID
		ce, ok := p.cl.Entity(gid)
		require.True(t, ok)
		p.checkValues(t, gid, e, ce)
	}
	assert.False(t, v.Resync(30), "within a second of the last")
	assert.True(t, v.Resync(64))
	assert.Equal(t, uint64(2), v.Stats().Resyncs)
	assert.Equal(t, uint64(1), v.Stats().ResyncsRefused)
}

// A ghost that leaves the connection's scope before it was ever sent and
// enters it again before the next snapshot is in that snapshot once: a
// snapshot naming a ghost twice would be refused whole by the client.
func TestViewScopeOutAndBackBetweenSnapshotsListsAGhostOnce(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	crate := p.spawn(t, p.s.crate, 0, Pos{1, 0}, HP{1})
	v := viewOf(p.srv, me) // the crate is pending, not sent yet
	v.SetRelevant(func(ecs.Entity) bool { return false })
	v.SetRelevant(func(ecs.Entity) bool { return true })
	p.sw.SetTick(1)
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me) // decoding refuses a ghost named twice
	require.Len(t, snap.Ghosts, 1)
	assert.Equal(t, getGhost(p.sw, crate).ID, snap.Ghosts[0].ID)
}

// A record whose values, coded relative to the client's state at its
// baseline, decode outside their range is dropped, never clamped, and
// counted; the client holds the state of the last record applied.
func TestClientCompleteRefusesARelativeValueOutOfRange(t *testing.T) {
	p := newPair(t, 1)
	encode := func(hp HP, pos Pos) *protocol.EncodedGhost {
		var w bitstream.Writer
		var st codec.Stream
		eg := &protocol.EncodedGhost{Ghost: components.Ghost{ID: 7, Type: uint16(p.s.crate)}}
		for _, v := range []struct {
			c codec.ComponentID
			p unsafe.Pointer
		}{{p.s.hp, unsafe.Pointer(&hp)}, {p.s.pos, unsafe.Pointer(&pos)}} {
			start := w.BitLen()
			protocol.EncodeComponent(p.s.Schema, &st, &w, v.c, v.p)
			eg.Bits = append(eg.Bits, int32(start), int32(w.BitLen()-start))
			w.WriteBits(0, -w.BitLen()&7)
		}
		eg.Src = w.Bytes()
		return eg
	}
	sw, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	send := func(tick gw.Tick, eg *protocol.EncodedGhost) {
		sw.Begin(tick)
		require.True(t, sw.AddEncoded(eg))
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), p.s.Schema, &snap))
		p.apply(&snap)
	}
	first := encode(HP{5}, Pos{99.5, 0})
	first.Identity = true
	send(1, first)
	// The server believes the client holds X = 0 at tick 1 and sends one
	// unit up from there: from the client's 99.5, past the range's 100.
	second := encode(HP{5}, Pos{1, 0})
	second.HasBase, second.Base, second.Changed = true, 1, 0b10
	second.BaseSrc, second.BaseFrom = encode(HP{5}, Pos{0, 0}).Src, 1
	send(2, second)
	assert.Equal(t, uint64(1), p.cl.Stats().ValueRefused)
	assert.Zero(t, p.cl.Stats().BaselineMissing)
	ce, ok := p.cl.Entity(7)
	require.True(t, ok)
	assert.Equal(t, Pos{99.5, 0}, *getPos(p.cw, ce), "the state of the last record applied, not a clamp")
}
