package ghostreg_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// pair is a server world and a client world sharing one schema, the client
// registering other components first so arche IDs differ.
type pair struct {
	s      *testSchema
	sw, cw *gw.World
	sb, cb *ghostreg.Binding
	srv    *ghostreg.ServerRegister
	cl     *ghostreg.ClientRegister
}

func newPair(tb testing.TB, me components.ConnID) *pair {
	tb.Helper()
	s := newTestSchema(tb)
	p := &pair{s: s}
	p.sw, p.sb = newServerWorld(tb, s)
	p.cw, p.cb = newClientWorld(tb, s)
	p.srv = ghostreg.NewServerRegister(p.sb)
	p.cl = ghostreg.NewClientRegister(p.cb)
	p.cl.SetConn(me)
	return p
}

// spawn creates a server ghost.
func (p *pair) spawn(tb testing.TB, typ codec.GhostTypeID, owner components.ConnID, pos Pos, hp HP) ecs.Entity {
	tb.Helper()
	e := newEntity(p.sw, pos, hp)
	spawn(tb, p.srv, e, typ, owner)
	return e
}

// checkValues fails unless client entity ce holds, bit for bit, the
// replicated values of server entity se.
func (p *pair) checkValues(tb testing.TB, id components.GhostID, se, ce ecs.Entity) {
	tb.Helper()
	sp, cp := getPos(p.sw, se), getPos(p.cw, ce)
	assert.Equalf(tb, bitsOf(sp), bitsOf(cp), "ghost %d: client Pos %v, server %v", id, *cp, *sp)
	assert.Equalf(tb, *getHP(p.sw, se), *getHP(p.cw, ce), "ghost %d: HP, server then client", id)
}

// apply resolves the snapshot's records, spawns its new ghosts, writes
// the known ones and despawns: what a client does with every snapshot.
func (p *pair) apply(snap *protocol.Snapshot) {
	p.cl.Complete(snap)
	p.cl.Resolve(snap)
	for gi, g := range snap.Ghosts {
		if e, ok := p.cl.Entity(g.ID); ok {
			p.cl.Write(e, snap, gi)
		} else {
			p.cl.Spawn(snap, gi)
		}
	}
	p.cl.Despawn(snap)
}

// lookup returns the client's entity of ghost id, requiring it.
func (p *pair) lookup(tb testing.TB, id components.GhostID) ecs.Entity {
	tb.Helper()
	e, ok := p.cl.Entity(id)
	require.Truef(tb, ok, "ghost %d not on the client", id)
	return e
}

func TestClientSpawn(t *testing.T) {
	const me = 2
	p := newPair(t, me)
	p.sw.SetTick(3)
	var ses []ecs.Entity
	owners := []components.ConnID{0, me, 1, me, 3}
	for i, o := range owners {
		typ := altType(p.s, i)
		ses = append(ses, p.spawn(t, typ, o, Pos{float32(i) * 1.25, -3.5}, HP{V: int32(1000*i - 7)}))
	}
	p.sw.SetTick(10)
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 10, me)

	var spawned []components.Ghost
	p.cl.OnSpawn = func(w *gw.World, e ecs.Entity, g components.Ghost) {
		assert.Same(t, p.cw, w, "OnSpawn got another world")
		assert.Equal(t, getGhost(w, e), g, "OnSpawn: the entity's Ghost, then the hook's")
		// Replicated values are set before the hook runs.
		se, _ := p.srv.Entity(g.ID)
		p.checkValues(t, g.ID, se, e)
		spawned = append(spawned, g)
	}
	p.cl.OnDespawn = func(*gw.World, ecs.Entity, components.Ghost) { assert.Fail(t, "OnDespawn called while spawning") }

	for gi := range snap.Ghosts {
		e := p.cl.Spawn(snap, gi)
		assert.Equalf(t, e, p.lookup(t, snap.Ghosts[gi].ID), "Lookup(%d)", snap.Ghosts[gi].ID)
	}
	require.Len(t, spawned, len(owners), "OnSpawn calls")
	for i, g := range spawned {
		assert.Equalf(t, snap.Ghosts[i].Ghost, g, "OnSpawn #%d", i)
	}

	for i, se := range ses {
		sg := getGhost(p.sw, se)
		ce := p.lookup(t, sg.ID)
		assert.Equalf(t, sg, getGhost(p.cw, ce), "ghost %d: identity, server then client", sg.ID)
		assert.Equalf(t, gw.Tick(3), sg.Spawned, "ghost %d: Spawned", sg.ID)
		p.checkValues(t, sg.ID, se, ce)
		owned := owners[i] == me
		assert.Equalf(t, owned, p.cl.Owned(&sg), "ghost %d (owner %d): Owned", sg.ID, owners[i])
		assert.Equalf(t, owned, has[components.Predicted](p.cw, ce), "ghost %d (owner %d): Predicted", sg.ID, owners[i])
		assert.Equalf(t, owned, has[components.InputHeader](p.cw, ce), "ghost %d (owner %d): InputHeader", sg.ID, owners[i])
		assert.Equalf(t, owned, has[Ctl](p.cw, ce), "ghost %d (owner %d): the input type", sg.ID, owners[i])
		assert.Equalf(t, !owned, has[components.Interpolated](p.cw, ce), "ghost %d (owner %d): Interpolated", sg.ID, owners[i])
		// Exactly the replicated components plus identity and mode (and
		// for a predicted ghost its input: header and the game's type).
		want := 4
		if owned {
			want = 6
		}
		assert.Lenf(t, p.cw.Arche().Ids(ce), want, "ghost %d: components", sg.ID)
	}
	_, ok := p.cl.Entity(99)
	assert.False(t, ok, "Lookup of an unknown ghost found one")
	st := p.cl.Stats()
	assert.Equal(t, uint64(len(owners)), st.Spawned)
	assert.Equal(t, len(owners), st.Live)
	assert.Zero(t, st.Despawned)
}

// altType alternates the two ghost types.
func altType(s *testSchema, i int) codec.GhostTypeID {
	if i%2 == 0 {
		return s.player
	}
	return s.crate
}

func TestClientWithoutConnPredictsNothing(t *testing.T) {
	p := newPair(t, 0)
	require.Zero(t, p.cl.Conn())
	p.spawn(t, p.s.player, 0, Pos{}, HP{}) // server-owned: owner 0
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, 0)
	e := p.cl.Spawn(snap, 0)
	assert.True(t, has[components.Interpolated](p.cw, e), "a client without a connection ID interpolates a server-owned ghost")
	assert.False(t, has[components.Predicted](p.cw, e), "a client without a connection ID predicts a server-owned ghost")
	p.cl.SetConn(5)
	assert.Equal(t, components.ConnID(5), p.cl.Conn(), "Conn after SetConn(5)")
}

func TestClientWrite(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	se := []ecs.Entity{
		p.spawn(t, p.s.player, me, Pos{1, 2}, HP{3}),
		p.spawn(t, p.s.crate, 0, Pos{4, 5}, HP{6}),
	}
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	for gi := range snap.Ghosts {
		p.cl.Spawn(snap, gi)
	}
	*getPos(p.sw, se[0]) = Pos{-7.3, 8.9}
	*getHP(p.sw, se[0]) = HP{-2_000_000_000}
	*getPos(p.sw, se[1]) = Pos{0.01, -99}
	*getHP(p.sw, se[1]) = HP{2_000_000_000}
	p.srv.Quantize()
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 2, me)
	for gi, g := range snap.Ghosts {
		ce, _ := p.cl.Entity(g.ID)
		p.cl.Write(ce, snap, gi)
		p.checkValues(t, g.ID, se[g.ID-1], ce)
	}
	ce := p.lookup(t, 1)
	// Test sanity: -7.3 is not on the 1/64 grid.
	assert.NotEqual(t, float32(-7.3), getPos(p.cw, ce).X, "the client holds an unquantized value")
	// Write leaves identity and mode alone.
	g := getGhost(p.cw, ce)
	assert.Equal(t, components.GhostID(1), g.ID, "Write changed the identity")
	assert.Equal(t, components.ConnID(me), g.Owner, "Write changed the identity")
	assert.Zero(t, testing.AllocsPerRun(100, func() { p.cl.Write(ce, snap, 0) }), "Client.Write allocs per call")
}

func TestClientDespawn(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	var se []ecs.Entity
	for i := 0; i < 30; i++ {
		owner := components.ConnID(0)
		if i%5 == 4 {
			owner = me
		}
		se = append(se, p.spawn(t, altType(p.s, i), owner, Pos{float32(i), 0}, HP{int32(i)}))
	}
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	p.apply(snap)
	require.Equal(t, 30, p.cl.Stats().Live)

	var despawned []components.Ghost
	p.cl.OnDespawn = func(w *gw.World, e ecs.Entity, g components.Ghost) {
		assert.Truef(t, w.Arche().Alive(e), "OnDespawn(%d): entity already dead", g.ID)
		assert.Equal(t, getGhost(w, e), g, "OnDespawn: the entity's Ghost, then the hook's")
		despawned = append(despawned, g)
	}
	gone := map[components.GhostID]ecs.Entity{}
	for _, i := range []int{0, 4, 9, 17, 29} { // 4, 9 and 29 are owned
		id := getGhost(p.sw, se[i]).ID
		gone[id], _ = p.cl.Entity(id)
		if i%2 == 0 {
			p.srv.Despawn(se[i])
		} else {
			p.sw.Arche().RemoveEntity(se[i])
		}
	}

	// A snapshot lost on the way: nothing happens on the client, and the
	// server, without an acknowledgement, sends the despawns again.
	v := viewOf(p.srv, me)
	sw, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
	require.NoError(t, err)
	sw.Begin(2)
	p.srv.WriteSnapshot(sw, v, 2)
	sw.Finish(&protocol.SnapshotHeader{Tick: 2})
	assert.Equal(t, len(gone), v.PendingDespawns(), "despawns await an acknowledgement")
	assert.Equal(t, 30, p.cl.Stats().Live)

	// A snapshot that holds only some ghosts: absence is not despawn, the
	// despawn records are. (Every ghost moves, so every one is pending.)
	for i, e := range se {
		if p.sw.Arche().Alive(e) && p.sw.Arche().Has(e, p.sb.Ghost) {
			getPos(p.sw, e).Y = float32(i)
		}
	}
	p.srv.Quantize()
	snap, left := writeSnapshot(t, p.s, p.srv, 128, 3, me)
	require.NotZero(t, left, "test setup: the small snapshot must leave ghosts out")
	require.Len(t, snap.Despawned, len(gone), "every despawn resent")
	p.apply(snap)
	assert.Zero(t, v.PendingDespawns(), "acknowledged despawns are not sent again")
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 4, me)
	assert.Empty(t, snap.Despawned)
	p.apply(snap)
	assert.Len(t, despawned, len(gone), "OnDespawn calls")
	for _, g := range despawned {
		e, ok := gone[g.ID]
		if !assert.Truef(t, ok, "OnDespawn for ghost %d, which is still on the server", g.ID) {
			continue
		}
		assert.Falsef(t, p.cw.Arche().Alive(e), "ghost %d: entity still alive after Despawn", g.ID)
		_, ok = p.cl.Entity(g.ID)
		assert.Falsef(t, ok, "ghost %d: Lookup still finds it after Despawn", g.ID)
	}
	st := p.cl.Stats()
	assert.Equal(t, 25, st.Live)
	assert.Equal(t, uint64(5), st.Despawned)
	assert.Equal(t, uint64(30), st.Spawned)
	for id := components.GhostID(1); id <= 30; id++ {
		_, want := p.srv.Entity(id)
		_, ok := p.cl.Entity(id)
		assert.Equalf(t, want, ok, "ghost %d: on the client as on the server", id)
	}

	// The game killed a ghost's entity itself: Despawn forgets it without
	// calling the hook on a dead entity.
	ce := p.lookup(t, 2)
	p.cw.Arche().RemoveEntity(ce)
	despawned = nil
	p.srv.Despawn(se[1])
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 4, me)
	p.apply(snap)
	assert.Empty(t, despawned, "OnDespawn called for a dead entity")
	_, ok := p.cl.Entity(2)
	assert.False(t, ok, "ghost 2 kept after its entity died and the server despawned it")
	assert.Equal(t, 24, p.cl.Stats().Live)
}

func TestClientEachInIDOrder(t *testing.T) {
	const me = 3
	p := newPair(t, me)
	rng := rand.New(rand.NewPCG(1, 2))
	owned := map[components.GhostID]bool{}
	for i := 0; i < 40; i++ {
		owner := components.ConnID(rng.IntN(4))
		e := p.spawn(t, altType(p.s, i), owner, Pos{}, HP{})
		owned[getGhost(p.sw, e).ID] = owner == me
	}
	// Despawn some so IDs have gaps.
	for _, id := range []components.GhostID{5, 6, 23} {
		e, _ := p.srv.Entity(id)
		p.srv.Despawn(e)
		delete(owned, id)
	}
	// A snapshot too small for all: priority order, the owned ghosts first,
	// then one with the rest.
	snap, left := writeSnapshot(t, p.s, p.srv, 300, 1, me)
	require.Positive(t, left, "test setup: not every ghost fits")
	require.Equal(t, components.ConnID(me), snap.Ghosts[0].Owner, "test setup: the snapshot must start with an owned ghost")
	p.apply(snap)
	snap, left = writeSnapshot(t, p.s, p.srv, 0, 2, me)
	require.Zero(t, left)
	p.apply(snap)
	var ids []components.GhostID
	p.cl.Each(func(id components.GhostID, e ecs.Entity, predicted bool) {
		ids = append(ids, id)
		assert.Equalf(t, owned[id], predicted, "Each: ghost %d predicted", id)
		got, _ := p.cl.Entity(id)
		assert.Equalf(t, got, e, "Each: ghost %d entity, Lookup's then Each's", id)
		assert.Equalf(t, predicted, has[components.Predicted](p.cw, e), "Each: ghost %d: the entity's Predicted", id)
	})
	assert.Len(t, ids, len(owned))
	assert.True(t, slices.IsSorted(ids), "Each visits in ascending ID order: %v", ids)
	assert.Len(t, slices.Compact(slices.Clone(ids)), len(ids), "Each visits distinct ghosts: %v", ids)
}

func TestClientCompare(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	h, err := gw.EnableHistory[components.Predicted](p.cw, 16)
	require.NoError(t, err)
	for i := 0; i < p.s.NumComponents(); i++ {
		require.NoError(t, h.RegisterType(p.s.ComponentType(codec.ComponentID(i))))
	}
	mine := p.spawn(t, p.s.player, me, Pos{10.5, -3.25}, HP{50})
	crate := p.spawn(t, p.s.crate, me, Pos{1, 1}, HP{7})
	p.spawn(t, p.s.player, 2, Pos{0, 0}, HP{1}) // someone else's: not predicted here
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 5, me)
	p.apply(snap)
	h.Record(5)

	gi := func(snap *protocol.Snapshot, id components.GhostID) int {
		i := slices.IndexFunc(snap.Ghosts, func(g protocol.GhostState) bool { return g.ID == id })
		require.NotEqualf(t, -1, i, "ghost %d not in snapshot", id)
		return i
	}
	ce := func(id components.GhostID) ecs.Entity { return p.lookup(t, id) }

	for _, id := range []components.GhostID{1, 2} {
		_, eq, rec := p.cl.Compare(h, 5, ce(id), snap, gi(snap, id))
		assert.Truef(t, eq, "ghost %d: Compare with the values recorded: equal", id)
		assert.Truef(t, rec, "ghost %d: Compare with the values recorded: recorded", id)
	}

	// A prediction within the wire's resolution encodes the same.
	getPos(p.cw, ce(1)).X += 1.0 / 256
	h.Record(6)
	_, eq, rec := p.cl.Compare(h, 6, ce(1), snap, gi(snap, 1))
	assert.True(t, eq, "prediction off by a quarter step: equal")
	assert.True(t, rec, "prediction off by a quarter step: recorded")

	// The server disagrees about one component of each ghost.
	getPos(p.sw, mine).Y += 0.5
	getHP(p.sw, crate).V--
	p.srv.Quantize()
	snap2, _ := writeSnapshot(t, p.s, p.srv, 0, 6, me)
	p.cl.Complete(snap2) // the deltas' unchanged components, as a client fills them
	for _, id := range []components.GhostID{1, 2} {
		_, eq, rec := p.cl.Compare(h, 5, ce(id), snap2, gi(snap2, id))
		assert.Falsef(t, eq, "ghost %d: Compare with a differing value: equal", id)
		assert.Truef(t, rec, "ghost %d: Compare with a differing value: recorded", id)
	}
	// The difference names the component, the field and both values.
	diff, _, _ := p.cl.Compare(h, 5, ce(1), snap2, gi(snap2, 1))
	want := fmt.Sprintf("ghostreg_test.Pos.Y: %v then %v", getPos(p.sw, mine).Y-0.5, getPos(p.sw, mine).Y)
	assert.Equal(t, want, diff.String(), "Compare's difference")
	// The history's values, not the live ones, are compared.
	*getPos(p.cw, ce(1)) = *getPos(p.sw, mine)
	_, eq, _ = p.cl.Compare(h, 5, ce(1), snap2, gi(snap2, 1))
	assert.False(t, eq, "Compare read the live value instead of the one recorded at the tick")

	// Not recorded: a tick never recorded, and an interpolated ghost.
	_, _, rec = p.cl.Compare(h, 4, ce(1), snap, gi(snap, 1))
	assert.False(t, rec, "Compare at an unrecorded tick reports recorded")
	_, _, rec = p.cl.Compare(h, 5, ce(3), snap, gi(snap, 3))
	assert.False(t, rec, "Compare of an interpolated (unrecorded) ghost reports recorded")
	// A ghost spawned after the tick.
	p.spawn(t, p.s.player, me, Pos{2, 2}, HP{2})
	p.srv.Quantize()
	snap3, _ := writeSnapshot(t, p.s, p.srv, 0, 7, me)
	p.apply(snap3)
	_, _, rec = p.cl.Compare(h, 5, ce(4), snap3, gi(snap3, 4))
	assert.False(t, rec, "Compare of a ghost spawned after the tick reports recorded")
}

// TestEndToEnd runs a server world whose ghosts move, spawn and die for
// 200 ticks and a client world that applies every tick's snapshot; after
// each tick the client holds exactly the server's ghosts with bit-identical
// values.
func TestEndToEnd(t *testing.T) {
	const (
		me       = 2
		ticks    = 200
		maxLive  = 60
		startLen = 20
	)
	p := newPair(t, me)
	rng := rand.New(rand.NewPCG(7, 11))
	sw, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot // reused, as a client does
	var live []ecs.Entity
	spawn := func() {
		typ := altType(p.s, rng.IntN(2))
		owner := components.ConnID(rng.IntN(4))
		pos := Pos{rng.Float32()*200 - 100, rng.Float32()*200 - 100}
		live = append(live, p.spawn(t, typ, owner, pos, HP{rng.Int32N(1000)}))
	}
	for range startLen {
		spawn()
	}
	var spawns, despawns, kills, lost int
	for tick := gw.Tick(1); tick <= ticks; tick++ {
		p.sw.SetTick(tick)
		// Move.
		for _, e := range live {
			pos, hp := getPos(p.sw, e), getHP(p.sw, e)
			pos.X += rng.Float32()*3 - 1.5
			pos.Y += rng.Float32()*3 - 1.5
			switch rng.IntN(50) {
			case 0:
				pos.X = 1e9 // out of range: clamped by the quantization
			case 1:
				pos.Y = float32(math.NaN())
			}
			hp.V += rng.Int32N(201) - 100
		}
		// Die: by Despawn, or by destroying the entity.
		kept := live[:0]
		for _, e := range live {
			if rng.IntN(25) != 0 {
				kept = append(kept, e)
				continue
			}
			if rng.IntN(2) == 0 {
				require.Truef(t, p.srv.Despawn(e), "tick %d: Despawn of a live ghost", tick)
				p.sw.Arche().RemoveEntity(e)
				despawns++
			} else {
				p.sw.Arche().RemoveEntity(e)
				kills++
			}
		}
		live = kept
		// Spawn.
		for n := rng.IntN(4); n > 0 && len(live) < maxLive; n-- {
			spawn()
			spawns++
		}

		p.srv.Quantize()
		sw.Begin(tick)
		require.Zerof(t, p.srv.WriteSnapshot(sw, viewOf(p.srv, me), tick), "tick %d: ghosts left out; the test needs every ghost in each snapshot", tick)
		h := protocol.SnapshotHeader{Tick: tick}
		require.NoErrorf(t, protocol.DecodeSnapshot(sw.Finish(&h), p.s.Schema, &snap), "tick %d", tick)
		viewOf(p.srv, me).Ack(tick, 1)
		p.apply(&snap)

		require.Equalf(t, len(live), p.srv.Len(), "tick %d: server ghosts", tick)
		require.Equalf(t, len(live), p.cl.Stats().Live, "tick %d: client ghosts", tick)
		seen := 0
		p.cl.Each(func(id components.GhostID, ce ecs.Entity, predicted bool) {
			se, ok := p.srv.Entity(id)
			if !assert.Truef(t, ok, "tick %d: client has ghost %d, the server does not", tick, id) {
				return
			}
			seen++
			p.checkValues(t, id, se, ce)
			sg, cg := getGhost(p.sw, se), getGhost(p.cw, ce)
			assert.Equalf(t, sg, cg, "tick %d: ghost %d identity, server then client", tick, id)
			assert.Equalf(t, sg.Owner == me, predicted, "tick %d: ghost %d (owner %d) predicted", tick, id, sg.Owner)
		})
		require.Equalf(t, len(live), seen, "tick %d: client ghosts that match the server's", tick)
		if t.Failed() {
			t.FailNow()
		}
		lost = int(p.srv.Lost())
	}
	assert.Equal(t, kills, lost, "Lost counts the entities destroyed without Despawn")
	st := p.cl.Stats()
	assert.Equal(t, uint64(startLen+spawns), st.Spawned)
	assert.Equal(t, uint64(despawns+kills), st.Despawned)
	assert.GreaterOrEqual(t, spawns, 50, "test setup: spawns")
	assert.GreaterOrEqual(t, despawns, 20, "test setup: despawns")
	assert.GreaterOrEqual(t, kills, 20, "test setup: kills")
}

func TestLookupForgetsAGhostTheGameDestroyed(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	p.spawn(t, p.s.player, me, Pos{1, 2}, HP{3})
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	e := p.cl.Spawn(snap, 0)
	p.cw.Arche().RemoveEntity(e)
	_, ok := p.cl.Entity(1)
	require.False(t, ok, "a destroyed entity must never be handed out")
	p.apply(snap) // the next snapshot spawns it again
	got := p.lookup(t, 1)
	require.True(t, p.cw.Arche().Alive(got), "the ghost is back")
}

// newModePair is a pair whose schema has a ghost type per prediction mode.
func newModePair(tb testing.TB, me components.ConnID) (p *pair, types [3]codec.GhostTypeID) {
	tb.Helper()
	var b codec.SchemaBuilder
	pos := wiretest.Component[Pos](&b)
	hp := wiretest.Component[HP](&b)
	for i, m := range []codec.PredictionMode{codec.PredictOwner, codec.PredictAll, codec.PredictNone} {
		types[i] = b.GhostType(m.String(), pos, hp)
		b.Predict(types[i], m)
	}
	wiretest.DeclareInput[Ctl](&b, wiretest.InputRulesOf[Ctl]{})
	s, err := b.Build()
	require.NoError(tb, err)
	ts := &testSchema{Schema: s, pos: pos, hp: hp, player: types[0], crate: types[1]}
	p = &pair{s: ts}
	p.sw, p.sb = newServerWorld(tb, ts)
	p.cw, p.cb = newClientWorld(tb, ts)
	p.srv = ghostreg.NewServerRegister(p.sb)
	p.cl = ghostreg.NewClientRegister(p.cb)
	p.cl.SetConn(me)
	return p, types
}

// A ghost is predicted when its type says every client predicts it, or
// only its owner and this client owns it; only an owned predicted ghost
// gets the input. Despawn removes a predicted ghost at once, owned or not,
// and hands an interpolated one, owned or not, to the interpolator.
func TestClientPredictsByTheGhostTypesMode(t *testing.T) {
	const me = 2
	p, types := newModePair(t, me)
	ip, err := ghostreg.NewInterpolator(p.cl, 4)
	require.NoError(t, err)
	type want struct{ predicted, input bool }
	cases := []struct {
		mode  codec.PredictionMode
		owner components.ConnID
		want  want
	}{
		{codec.PredictOwner, me, want{true, true}},
		{codec.PredictOwner, 1, want{false, false}},
		{codec.PredictOwner, 0, want{false, false}},
		{codec.PredictAll, me, want{true, true}},
		{codec.PredictAll, 1, want{true, false}},
		{codec.PredictAll, 0, want{true, false}},
		{codec.PredictNone, me, want{false, false}},
		{codec.PredictNone, 0, want{false, false}},
	}
	var ses []ecs.Entity
	for i, c := range cases {
		ses = append(ses, p.spawn(t, types[c.mode], c.owner, Pos{float32(i), 1}, HP{V: int32(i)}))
	}
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	require.Len(t, snap.Ghosts, len(cases))
	for gi := range snap.Ghosts {
		if p.cl.Predicts(&snap.Ghosts[gi].Ghost) {
			p.cl.Spawn(snap, gi)
		} else {
			ip.Push(snap, gi)
		}
	}
	ip.Update(1, 1)
	for i, c := range cases {
		g := getGhost(p.sw, ses[i])
		name := fmt.Sprintf("mode %v, owner %d", c.mode, c.owner)
		assert.Equal(t, c.want.predicted, p.cl.Predicts(&g), name)
		assert.Equal(t, c.owner == me, p.cl.Owned(&g), name)
		ce, ok := p.cl.Entity(g.ID)
		require.True(t, ok, name)
		p.checkValues(t, g.ID, ses[i], ce)
		assert.Equal(t, c.want.predicted, has[components.Predicted](p.cw, ce), name)
		assert.Equal(t, !c.want.predicted, has[components.Interpolated](p.cw, ce), name)
		assert.Equal(t, c.want.input, has[components.InputHeader](p.cw, ce), name)
		assert.Equal(t, c.want.input, has[Ctl](p.cw, ce), name)
	}

	for _, e := range ses {
		p.srv.Despawn(e)
	}
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 2, me)
	require.Len(t, snap.Despawned, len(cases))
	p.cl.Despawn(snap)
	for i, c := range cases {
		id := components.GhostID(i + 1)
		_, live := p.cl.Entity(id)
		assert.Equal(t, !c.want.predicted, live, "mode %v, owner %d: a predicted ghost goes at once, an interpolated one at its render tick", c.mode, c.owner)
	}
	ip.Update(2, 1)
	assert.Zero(t, p.cl.Stats().Live, "the interpolated ones go when the render tick reaches the snapshot")
}

// Records sent without identity take it from the ghost the client has;
// one of a ghost the client does not know is dropped and counted, and the
// ghost comes back when the server sends its identity again.
func TestClientResolve(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	other := p.spawn(t, p.s.player, 0, Pos{1, 2}, HP{V: 3})
	p.spawn(t, p.s.crate, me, Pos{4, 5}, HP{V: 6})
	// The other player moves every tick, so every snapshot holds it.
	move := func() { getPos(p.sw, other).X++; p.srv.Quantize() }
	p.sw.SetTick(7)
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 7, me)
	require.True(t, snap.Ghosts[0].Identity)
	p.apply(snap)

	move()
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 8, me)
	require.Len(t, snap.Ghosts, 2)
	for _, g := range snap.Ghosts {
		require.False(t, g.Identity, "acknowledged: no identity")
	}
	p.cl.Resolve(snap)
	for _, g := range snap.Ghosts {
		e, _ := p.srv.Entity(g.ID)
		assert.Equal(t, getGhost(p.sw, e), g.Ghost, "owner and spawn tick from the client's ghost")
		assert.True(t, g.Identity)
	}
	assert.Zero(t, p.cl.Stats().Unresolved)

	// The game destroyed ghost 1's entity: its records cannot be resolved.
	p.cw.Arche().RemoveEntity(p.lookup(t, 1))
	move()
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 9, me)
	p.cl.Resolve(snap)
	assert.Equal(t, []components.GhostID{2}, snapshotIDs(snap), "the unknown ghost's record dropped")
	assert.Equal(t, uint64(1), p.cl.Stats().Unresolved)
}
