package ghosts_test

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
	"github.com/ghostwire/ghostwire/ghosts"
	"github.com/ghostwire/ghostwire/netsync"
)

// pair is a server world and a client world sharing one schema, the client
// registering other components first so arche IDs differ.
type pair struct {
	s      *testSchema
	sw, cw *gw.World
	sb, cb *ghosts.Binding
	srv    *ghosts.ServerRegister
	cl     *ghosts.ClientRegister
}

func newPair(tb testing.TB, me components.ConnID) *pair {
	tb.Helper()
	s := newTestSchema(tb)
	p := &pair{s: s}
	p.sw, p.sb = newServerWorld(tb, s)
	p.cw, p.cb = newClientWorld(tb, s)
	p.srv = ghosts.NewServerRegister(p.sb)
	p.cl = ghosts.NewClientRegister(p.cb)
	p.cl.SetConn(me)
	return p
}

// spawn creates a server ghost.
func (p *pair) spawn(tb testing.TB, typ netsync.GhostTypeID, owner components.ConnID, pos Pos, hp HP) ecs.Entity {
	tb.Helper()
	e := newEntity(p.sw, pos, hp)
	if _, err := p.srv.Spawn(e, typ, owner); err != nil {
		tb.Fatal(err)
	}
	return e
}

// checkValues fails unless client entity ce holds, bit for bit, the
// replicated values of server entity se.
func (p *pair) checkValues(tb testing.TB, id components.GhostID, se, ce ecs.Entity) {
	tb.Helper()
	if sp, cp := getPos(p.sw, se), getPos(p.cw, ce); bitsOf(sp) != bitsOf(cp) {
		tb.Errorf("ghost %d: client Pos %v, server %v", id, *cp, *sp)
	}
	if sh, ch := getHP(p.sw, se), getHP(p.cw, ce); *sh != *ch {
		tb.Errorf("ghost %d: client HP %v, server %v", id, *ch, *sh)
	}
}

// apply spawns the snapshot's new ghosts, writes the known ones and
// sweeps: what a client does with every snapshot.
func (p *pair) apply(snap *netsync.Snapshot) {
	for gi, g := range snap.Ghosts {
		if e, ok := p.cl.Entity(g.ID); ok {
			p.cl.Write(e, snap, gi)
		} else {
			p.cl.Spawn(snap, gi)
		}
	}
	p.cl.Sweep(snap)
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
		if w != p.cw {
			t.Errorf("OnSpawn got another world")
		}
		if got := getGhost(w, e); got != g {
			t.Errorf("OnSpawn: entity holds %+v, hook got %+v", got, g)
		}
		// Replicated values are set before the hook runs.
		se, _ := p.srv.Entity(g.ID)
		p.checkValues(t, g.ID, se, e)
		spawned = append(spawned, g)
	}
	p.cl.OnDespawn = func(*gw.World, ecs.Entity, components.Ghost) { t.Error("OnDespawn called while spawning") }

	for gi := range snap.Ghosts {
		e := p.cl.Spawn(snap, gi)
		g := snap.Ghosts[gi]
		if got, ok := p.cl.Entity(g.ID); !ok || got != e {
			t.Errorf("Lookup(%d) = %v, %v; want %v, true", g.ID, got, ok, e)
		}
	}
	if len(spawned) != len(owners) {
		t.Fatalf("OnSpawn called %d times, want %d", len(spawned), len(owners))
	}
	for i, g := range spawned {
		if g != snap.Ghosts[i].Ghost {
			t.Errorf("OnSpawn #%d got %+v, want %+v", i, g, snap.Ghosts[i].Ghost)
		}
	}

	for i, se := range ses {
		sg := getGhost(p.sw, se)
		ce, ok := p.cl.Entity(sg.ID)
		if !ok {
			t.Fatalf("ghost %d not on the client", sg.ID)
		}
		if cg := getGhost(p.cw, ce); cg != sg {
			t.Errorf("ghost %d: client identity %+v, server %+v", sg.ID, cg, sg)
		}
		if sg.Spawned != 3 {
			t.Errorf("ghost %d: Spawned %d, want 3", sg.ID, sg.Spawned)
		}
		p.checkValues(t, sg.ID, se, ce)
		owned := owners[i] == me
		if got := p.cl.Owned(&sg); got != owned {
			t.Errorf("ghost %d (owner %d): Owned = %v, want %v", sg.ID, owners[i], got, owned)
		}
		if has[components.Predicted](p.cw, ce) != owned || has[components.InputHeader](p.cw, ce) != owned || has[Ctl](p.cw, ce) != owned {
			t.Errorf("ghost %d (owner %d): Predicted %v, InputHeader %v, input %v; want all %v",
				sg.ID, owners[i], has[components.Predicted](p.cw, ce), has[components.InputHeader](p.cw, ce), has[Ctl](p.cw, ce), owned)
		}
		if has[components.Interpolated](p.cw, ce) == owned {
			t.Errorf("ghost %d (owner %d): Interpolated %v, want %v", sg.ID, owners[i], !owned, !owned)
		}
		// Exactly the replicated components plus identity and mode (and
		// for a predicted ghost its input: header and the game's type).
		want := 4
		if owned {
			want = 6
		}
		if n := len(p.cw.Arche().Ids(ce)); n != want {
			t.Errorf("ghost %d: %d components, want %d", sg.ID, n, want)
		}
	}
	if _, ok := p.cl.Entity(99); ok {
		t.Error("Lookup of an unknown ghost found one")
	}
	if st := p.cl.Stats(); st.Spawned != uint64(len(owners)) || st.Live != len(owners) || st.Despawned != 0 {
		t.Errorf("Stats = %+v, want Spawned %d, Live %d", st, len(owners), len(owners))
	}
}

// altType alternates the two ghost types.
func altType(s *testSchema, i int) netsync.GhostTypeID {
	if i%2 == 0 {
		return s.player
	}
	return s.crate
}

func TestClientWithoutConnPredictsNothing(t *testing.T) {
	p := newPair(t, 0)
	if p.cl.Conn() != 0 {
		t.Fatalf("Conn = %d, want 0", p.cl.Conn())
	}
	p.spawn(t, p.s.player, 0, Pos{}, HP{}) // server-owned: owner 0
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, 0)
	e := p.cl.Spawn(snap, 0)
	if !has[components.Interpolated](p.cw, e) || has[components.Predicted](p.cw, e) {
		t.Error("a client without a connection ID predicts a server-owned ghost")
	}
	p.cl.SetConn(5)
	if p.cl.Conn() != 5 {
		t.Errorf("Conn = %d after SetConn(5)", p.cl.Conn())
	}
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
	ce, _ := p.cl.Entity(1)
	if getPos(p.cw, ce).X == -7.3 {
		t.Error("the client holds an unquantized value") // test sanity: -7.3 is not on the 1/64 grid
	}
	// Write leaves identity and mode alone.
	if g := getGhost(p.cw, ce); g.ID != 1 || g.Owner != me {
		t.Errorf("Write changed the identity: %+v", g)
	}
	if n := testing.AllocsPerRun(100, func() { p.cl.Write(ce, snap, 0) }); n != 0 {
		t.Errorf("Client.Write: %v allocs per call, want 0", n)
	}
}

func TestClientSweep(t *testing.T) {
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
	if got := p.cl.Stats().Live; got != 30 {
		t.Fatalf("Live = %d, want 30", got)
	}

	var despawned []components.Ghost
	p.cl.OnDespawn = func(w *gw.World, e ecs.Entity, g components.Ghost) {
		if !w.Arche().Alive(e) {
			t.Errorf("OnDespawn(%d): entity already dead", g.ID)
		}
		if got := getGhost(w, e); got != g {
			t.Errorf("OnDespawn: entity holds %+v, hook got %+v", got, g)
		}
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

	// An incomplete snapshot (small budget) proves nothing.
	small, left := writeSnapshot(t, p.s, p.srv, 128, 2, me)
	if left == 0 || small.Complete {
		t.Fatalf("test setup: small snapshot left %d out, complete %v", left, small.Complete)
	}
	p.apply(small)
	if len(despawned) != 0 || p.cl.Stats().Live != 30 {
		t.Errorf("an incomplete snapshot despawned %v (Live %d)", despawned, p.cl.Stats().Live)
	}
	for id := range gone {
		if _, ok := p.cl.Entity(id); !ok {
			t.Errorf("incomplete snapshot: ghost %d despawned", id)
		}
	}

	// A complete one does.
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 3, me)
	if !snap.Complete {
		t.Fatal("test setup: full snapshot incomplete")
	}
	p.apply(snap)
	if len(despawned) != len(gone) {
		t.Errorf("OnDespawn called for %v, want %d ghosts", despawned, len(gone))
	}
	for _, g := range despawned {
		e, ok := gone[g.ID]
		if !ok {
			t.Errorf("OnDespawn for ghost %d, which is still on the server", g.ID)
			continue
		}
		if p.cw.Arche().Alive(e) {
			t.Errorf("ghost %d: entity still alive after Sweep", g.ID)
		}
		if _, ok := p.cl.Entity(g.ID); ok {
			t.Errorf("ghost %d: Lookup still finds it after Sweep", g.ID)
		}
	}
	if st := p.cl.Stats(); st.Live != 25 || st.Despawned != 5 || st.Spawned != 30 {
		t.Errorf("Stats = %+v, want Live 25, Despawned 5, Spawned 30", st)
	}
	for id := components.GhostID(1); id <= 30; id++ {
		_, want := p.srv.Entity(id)
		if _, ok := p.cl.Entity(id); ok != want {
			t.Errorf("ghost %d: on client %v, on server %v", id, ok, want)
		}
	}

	// The game killed a ghost's entity itself: Sweep forgets it without
	// calling the hook on a dead entity.
	ce, _ := p.cl.Entity(2)
	p.cw.Arche().RemoveEntity(ce)
	despawned = nil
	p.srv.Despawn(se[1])
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 4, me)
	p.apply(snap)
	if len(despawned) != 0 {
		t.Errorf("OnDespawn called for a dead entity: %v", despawned)
	}
	if _, ok := p.cl.Entity(2); ok || p.cl.Stats().Live != 24 {
		t.Errorf("ghost 2 kept after its entity died and the server despawned it (Live %d)", p.cl.Stats().Live)
	}
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
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	if snap.Ghosts[0].Owner != me {
		t.Fatal("test setup: the snapshot does not start with an owned ghost")
	}
	p.apply(snap)
	var ids []components.GhostID
	p.cl.Each(func(id components.GhostID, e ecs.Entity, predicted bool) {
		ids = append(ids, id)
		if predicted != owned[id] {
			t.Errorf("Each: ghost %d predicted %v, want %v", id, predicted, owned[id])
		}
		if got, _ := p.cl.Entity(id); got != e {
			t.Errorf("Each: ghost %d entity %v, Lookup says %v", id, e, got)
		}
		if has[components.Predicted](p.cw, e) != predicted {
			t.Errorf("Each: ghost %d predicted %v but the entity disagrees", id, predicted)
		}
	})
	if len(ids) != len(owned) || !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("Each visited %v: want %d distinct ghosts in ascending ID order", ids, len(owned))
	}
}

func TestClientCompare(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	h, err := gw.EnableHistory[components.Predicted](p.cw, gw.HistoryOptions{Capacity: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < p.s.NumComponents(); i++ {
		if err := h.RegisterType(p.s.ComponentType(netsync.ComponentID(i))); err != nil {
			t.Fatal(err)
		}
	}
	mine := p.spawn(t, p.s.player, me, Pos{10.5, -3.25}, HP{50})
	crate := p.spawn(t, p.s.crate, me, Pos{1, 1}, HP{7})
	p.spawn(t, p.s.player, 2, Pos{0, 0}, HP{1}) // someone else's: not predicted here
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 5, me)
	p.apply(snap)
	h.Record(5)

	gi := func(snap *netsync.Snapshot, id components.GhostID) int {
		for i, g := range snap.Ghosts {
			if g.ID == id {
				return i
			}
		}
		t.Fatalf("ghost %d not in snapshot", id)
		return -1
	}
	ce := func(id components.GhostID) ecs.Entity {
		e, ok := p.cl.Entity(id)
		if !ok {
			t.Fatalf("ghost %d not on client", id)
		}
		return e
	}

	for _, id := range []components.GhostID{1, 2} {
		if _, eq, rec := p.cl.Compare(h, 5, ce(id), snap, gi(snap, id)); !eq || !rec {
			t.Errorf("ghost %d: Compare with the values recorded = %v, %v; want true, true", id, eq, rec)
		}
	}

	// A prediction within the wire's resolution encodes the same.
	getPos(p.cw, ce(1)).X += 1.0 / 256
	h.Record(6)
	if _, eq, rec := p.cl.Compare(h, 6, ce(1), snap, gi(snap, 1)); !eq || !rec {
		t.Errorf("prediction off by a quarter step: Compare = %v, %v; want true, true", eq, rec)
	}

	// The server disagrees about one component of each ghost.
	getPos(p.sw, mine).Y += 0.5
	getHP(p.sw, crate).V--
	p.srv.Quantize()
	snap2, _ := writeSnapshot(t, p.s, p.srv, 0, 5, me)
	for _, id := range []components.GhostID{1, 2} {
		if _, eq, rec := p.cl.Compare(h, 5, ce(id), snap2, gi(snap2, id)); eq || !rec {
			t.Errorf("ghost %d: Compare with a differing value = %v, %v; want false, true", id, eq, rec)
		}
	}
	// The difference names the component, the field and both values.
	diff, _, _ := p.cl.Compare(h, 5, ce(1), snap2, gi(snap2, 1))
	want := fmt.Sprintf("ghosts_test.Pos.Y: %v then %v", getPos(p.sw, mine).Y-0.5, getPos(p.sw, mine).Y)
	if diff.String() != want {
		t.Errorf("Compare's difference = %q, want %q", diff, want)
	}
	// The history's values, not the live ones, are compared.
	*getPos(p.cw, ce(1)) = *getPos(p.sw, mine)
	if _, eq, _ := p.cl.Compare(h, 5, ce(1), snap2, gi(snap2, 1)); eq {
		t.Error("Compare read the live value instead of the one recorded at the tick")
	}

	// Not recorded: a tick never recorded, and an interpolated ghost.
	if _, _, rec := p.cl.Compare(h, 4, ce(1), snap, gi(snap, 1)); rec {
		t.Error("Compare at an unrecorded tick reports recorded")
	}
	if _, _, rec := p.cl.Compare(h, 5, ce(3), snap, gi(snap, 3)); rec {
		t.Error("Compare of an interpolated (unrecorded) ghost reports recorded")
	}
	// A ghost spawned after the tick.
	p.spawn(t, p.s.player, me, Pos{2, 2}, HP{2})
	p.srv.Quantize()
	snap3, _ := writeSnapshot(t, p.s, p.srv, 0, 7, me)
	p.apply(snap3)
	if _, _, rec := p.cl.Compare(h, 5, ce(4), snap3, gi(snap3, 4)); rec {
		t.Error("Compare of a ghost spawned after the tick reports recorded")
	}
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
	sw, err := netsync.NewSnapshotWriter(p.s.Schema, 0)
	if err != nil {
		t.Fatal(err)
	}
	var snap netsync.Snapshot // reused, as a client does
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
				if !p.srv.Despawn(e) {
					t.Fatalf("tick %d: Despawn of a live ghost = false", tick)
				}
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
		if left := p.srv.WriteSnapshot(sw, me); left != 0 {
			t.Fatalf("tick %d: %d ghosts left out; the test needs complete snapshots", tick, left)
		}
		h := netsync.SnapshotHeader{Tick: tick, Complete: true}
		if err := netsync.DecodeSnapshot(sw.Finish(&h), p.s.Schema, &snap); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		if !snap.Complete {
			t.Fatalf("tick %d: snapshot incomplete", tick)
		}
		p.apply(&snap)

		if got, want := p.cl.Stats().Live, p.srv.Len(); got != want || want != len(live) {
			t.Fatalf("tick %d: client has %d ghosts, server %d, live entities %d", tick, got, want, len(live))
		}
		seen := 0
		p.cl.Each(func(id components.GhostID, ce ecs.Entity, predicted bool) {
			se, ok := p.srv.Entity(id)
			if !ok {
				t.Errorf("tick %d: client has ghost %d, the server does not", tick, id)
				return
			}
			seen++
			p.checkValues(t, id, se, ce)
			sg, cg := getGhost(p.sw, se), getGhost(p.cw, ce)
			if sg != cg {
				t.Errorf("tick %d: ghost %d identity: client %+v, server %+v", tick, id, cg, sg)
			}
			if predicted != (sg.Owner == me) {
				t.Errorf("tick %d: ghost %d (owner %d) predicted = %v", tick, id, sg.Owner, predicted)
			}
		})
		if seen != len(live) {
			t.Fatalf("tick %d: %d client ghosts match the server's %d", tick, seen, len(live))
		}
		if t.Failed() {
			t.FailNow()
		}
		lost = int(p.srv.Lost())
	}
	if lost != kills {
		t.Errorf("Lost = %d, want %d entities destroyed without Despawn", lost, kills)
	}
	if st := p.cl.Stats(); st.Spawned != uint64(startLen+spawns) || st.Despawned != uint64(despawns+kills) {
		t.Errorf("client Stats %+v, want Spawned %d, Despawned %d", st, startLen+spawns, despawns+kills)
	}
	if spawns < 50 || despawns < 20 || kills < 20 {
		t.Errorf("test setup: only %d spawns, %d despawns, %d kills in %d ticks", spawns, despawns, kills, ticks)
	}
}

func TestLookupForgetsAGhostTheGameDestroyed(t *testing.T) {
	const me = 1
	p := newPair(t, me)
	p.spawn(t, p.s.player, me, Pos{1, 2}, HP{3})
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 1, me)
	e := p.cl.Spawn(snap, 0)
	p.cw.Arche().RemoveEntity(e)
	if _, ok := p.cl.Entity(1); ok {
		t.Fatal("a destroyed entity must never be handed out")
	}
	p.apply(snap) // the next snapshot spawns it again
	got, ok := p.cl.Entity(1)
	if !ok || !p.cw.Arche().Alive(got) {
		t.Fatalf("the ghost is not back: %v %v", got, ok)
	}
}

// newModePair is a pair whose schema has a ghost type per prediction mode.
func newModePair(tb testing.TB, me components.ConnID) (p *pair, types [3]netsync.GhostTypeID) {
	tb.Helper()
	var b netsync.SchemaBuilder
	pos := netsync.Component[Pos](&b)
	hp := netsync.Component[HP](&b)
	for i, m := range []netsync.PredictionMode{netsync.PredictOwner, netsync.PredictAll, netsync.PredictNone} {
		types[i] = b.GhostType(m.String(), pos, hp)
		b.Predict(types[i], m)
	}
	netsync.Input[Ctl](&b, netsync.InputRules[Ctl]{})
	s, err := b.Build()
	require.NoError(tb, err)
	ts := &testSchema{Schema: s, pos: pos, hp: hp, player: types[0], crate: types[1]}
	p = &pair{s: ts}
	p.sw, p.sb = newServerWorld(tb, ts)
	p.cw, p.cb = newClientWorld(tb, ts)
	p.srv = ghosts.NewServerRegister(p.sb)
	p.cl = ghosts.NewClientRegister(p.cb)
	p.cl.SetConn(me)
	return p, types
}

// A ghost is predicted when its type says every client predicts it, or
// only its owner and this client owns it; only an owned predicted ghost
// gets the input. Sweep despawns a predicted ghost at once, owned or not,
// and hands an interpolated one, owned or not, to the interpolator.
func TestClientPredictsByTheGhostTypesMode(t *testing.T) {
	const me = 2
	p, types := newModePair(t, me)
	ip, err := ghosts.NewInterpolator(p.cl, 4)
	require.NoError(t, err)
	type want struct{ predicted, input bool }
	cases := []struct {
		mode  netsync.PredictionMode
		owner components.ConnID
		want  want
	}{
		{netsync.PredictOwner, me, want{true, true}},
		{netsync.PredictOwner, 1, want{false, false}},
		{netsync.PredictOwner, 0, want{false, false}},
		{netsync.PredictAll, me, want{true, true}},
		{netsync.PredictAll, 1, want{true, false}},
		{netsync.PredictAll, 0, want{true, false}},
		{netsync.PredictNone, me, want{false, false}},
		{netsync.PredictNone, 0, want{false, false}},
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
	require.True(t, snap.Complete)
	p.cl.Sweep(snap)
	for i, c := range cases {
		id := components.GhostID(i + 1)
		_, live := p.cl.Entity(id)
		assert.Equal(t, !c.want.predicted, live, "mode %v, owner %d: a predicted ghost goes at once, an interpolated one at its render tick", c.mode, c.owner)
	}
	ip.Update(2, 1)
	assert.Zero(t, p.cl.Stats().Live, "the interpolated ones go when the render tick reaches the snapshot")
}
