package ghostreg_test

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

type viewKey struct {
	srv  *ghostreg.ServerRegister
	conn components.ConnID
}

// views holds one View per register and connection, for writeSnapshot.
var views = map[viewKey]*ghostreg.View{}

// viewOf returns conn's view of srv, made on first use.
func viewOf(srv *ghostreg.ServerRegister, conn components.ConnID) *ghostreg.View {
	k := viewKey{srv, conn}
	if views[k] == nil {
		views[k] = srv.NewView(conn)
	}
	return views[k]
}

// writeSnapshot encodes srv's snapshot of tick for conn with a writer of
// maxBytes (MaxDatagram when 0) and decodes and completes it, as a
// client would, which acknowledges it at once.
func writeSnapshot(tb testing.TB, s *testSchema, srv *ghostreg.ServerRegister, maxBytes int, tick gw.Tick, conn components.ConnID) (snap *protocol.Snapshot, deferred int) {
	tb.Helper()
	sw, err := protocol.NewSnapshotWriter(s.Schema, maxBytes)
	require.NoError(tb, err)
	sw.Begin(tick)
	v := viewOf(srv, conn)
	deferred = srv.WriteSnapshot(sw, v, tick)
	h := protocol.SnapshotHeader{Tick: tick}
	p := sw.Finish(&h)
	snap = new(protocol.Snapshot)
	require.NoError(tb, protocol.DecodeSnapshot(p, s.Schema, snap), "DecodeSnapshot")
	receiverOf(srv, conn).Complete(snap)
	v.Ack(tick, 1)
	return snap, deferred
}

// receivers keeps, per view, the ghost states its client would hold, so
// writeSnapshot decodes records coded relative to them as a client does.
var receivers = map[viewKey]*ghostreg.ClientRegister{}

func receiverOf(srv *ghostreg.ServerRegister, conn components.ConnID) *ghostreg.ClientRegister {
	k := viewKey{srv, conn}
	if receivers[k] == nil {
		receivers[k] = ghostreg.NewClientRegister(srv.Binding())
	}
	return receivers[k]
}

func snapshotIDs(snap *protocol.Snapshot) []components.GhostID {
	var ids []components.GhostID
	for _, g := range snap.Ghosts {
		ids = append(ids, g.ID)
	}
	return ids
}

// spawn makes e a ghost of type typ owned by owner, requiring success.
func spawn(tb testing.TB, srv *ghostreg.ServerRegister, e ecs.Entity, typ codec.GhostTypeID, owner components.ConnID) components.GhostID {
	tb.Helper()
	id, err := srv.Spawn(e, typ, owner)
	require.NoError(tb, err)
	return id
}

func TestServerSpawn(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)

	tests := []struct {
		tick  gw.Tick
		typ   codec.GhostTypeID
		owner components.ConnID
	}{
		{0, s.player, 0},
		{7, s.crate, 3},
		{7, s.player, 1},
		{42, s.crate, 0},
	}
	for i, tt := range tests {
		w.SetTick(tt.tick)
		e := newEntity(w, Pos{float32(i), 1}, HP{V: int32(i)})
		id, err := srv.Spawn(e, tt.typ, tt.owner)
		require.NoErrorf(t, err, "Spawn #%d", i)
		assert.Equalf(t, components.GhostID(i+1), id, "Spawn #%d: ID", i)
		want := components.Ghost{ID: id, Type: uint16(tt.typ), Owner: tt.owner, Spawned: tt.tick}
		assert.Equalf(t, want, getGhost(w, e), "Spawn #%d: Ghost", i)
		assert.Truef(t, has[components.Predicted](w, e), "Spawn #%d: no Predicted marker", i)
		assert.Equalf(t, tt.owner != 0, has[components.InputHeader](w, e), "Spawn #%d (owner %d): has InputHeader", i, tt.owner)
		assert.Equalf(t, tt.owner != 0, has[Ctl](w, e), "Spawn #%d (owner %d): has the input type", i, tt.owner)
		assert.Falsef(t, has[components.Interpolated](w, e), "Spawn #%d: a server ghost is Interpolated", i)
		got, ok := srv.Entity(id)
		assert.Truef(t, ok, "Entity(%d)", id)
		assert.Equalf(t, e, got, "Entity(%d)", id)
		assert.Equalf(t, float32(i), getPos(w, e).X, "Spawn #%d changed the replicated value", i)
	}
	assert.Equal(t, len(tests), srv.Len())
	_, ok := srv.Entity(0)
	assert.False(t, ok, "Entity(0) found a ghost")
	_, ok = srv.Entity(components.GhostID(len(tests) + 1))
	assert.False(t, ok, "Entity of an ID never assigned found a ghost")
}

func TestServerSpawnKeepsExistingMarkers(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	a := w.Arche()
	head := components.InputHeader{Tick: 9, HasView: true, ViewTick: 5}
	in := Ctl{Turn: 0.5}
	e := a.NewEntityWith(
		ecs.Component{ID: ecs.ComponentID[Pos](a), Comp: &Pos{1, 2}},
		ecs.Component{ID: ecs.ComponentID[HP](a), Comp: &HP{3}},
		ecs.Component{ID: b.Predicted, Comp: &components.Predicted{}},
		ecs.Component{ID: b.Header, Comp: &head},
		ecs.Component{ID: b.Input, Comp: &in},
	)
	_, err := srv.Spawn(e, s.player, 2)
	require.NoError(t, err, "Spawn of an entity already Predicted with an input")
	assert.Equal(t, head, *(*components.InputHeader)(a.Get(e, b.Header)), "Spawn overwrote the existing InputHeader")
	assert.Equal(t, in, *(*Ctl)(a.Get(e, b.Input)), "Spawn overwrote the existing input")
}

func TestServerSpawnErrors(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	a := w.Arche()

	dead := newEntity(w, Pos{}, HP{})
	a.RemoveEntity(dead)

	ghost := newEntity(w, Pos{}, HP{})
	require.Equal(t, components.GhostID(1), spawn(t, srv, ghost, s.player, 0))

	onlyPos := a.NewEntityWith(ecs.Component{ID: ecs.ComponentID[Pos](a), Comp: &Pos{}})
	onlyHP := a.NewEntityWith(ecs.Component{ID: ecs.ComponentID[HP](a), Comp: &HP{}})
	ok := newEntity(w, Pos{}, HP{})

	tests := []struct {
		name string
		e    ecs.Entity
		typ  codec.GhostTypeID
		want []string // substrings of the error
	}{
		{"dead entity", dead, s.player, []string{"dead"}},
		{"already a ghost", ghost, s.crate, []string{"already a ghost"}},
		{"player lacks HP", onlyPos, s.player, []string{"ghostreg_test.HP", `"player"`}},
		{"crate lacks Pos", onlyHP, s.crate, []string{"ghostreg_test.Pos", `"crate"`}},
		{"unknown ghost type", ok, 7, []string{"7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := srv.Spawn(tt.e, tt.typ, 1)
			require.Error(t, err)
			assert.Zero(t, id, "Spawn returned an ID with its error")
			for _, sub := range tt.want {
				assert.ErrorContains(t, err, sub)
			}
			if a.Alive(tt.e) && tt.e != ghost {
				assert.False(t, a.Has(tt.e, b.Ghost), "a failed Spawn left a Ghost component")
			}
		})
	}
	assert.Equal(t, 1, srv.Len(), "Len after failed spawns")
	// Failed spawns consume no ID.
	id, err := srv.Spawn(ok, s.player, 0)
	assert.NoError(t, err)
	assert.Equal(t, components.GhostID(2), id, "Spawn after failures")
}

func TestServerDespawn(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	var es []ecs.Entity
	for i := 0; i < 3; i++ {
		e := newEntity(w, Pos{}, HP{})
		spawn(t, srv, e, s.player, 1)
		es = append(es, e)
	}
	require.True(t, srv.Despawn(es[1]), "Despawn of a ghost")
	assert.False(t, srv.Despawn(es[1]), "second Despawn of the same entity")
	assert.False(t, srv.Despawn(newEntity(w, Pos{}, HP{})), "Despawn of an entity that never was a ghost")
	assert.True(t, w.Arche().Alive(es[1]), "Despawn killed the entity")
	assert.False(t, has[components.Ghost](w, es[1]), "Despawn left the Ghost component")
	assert.Equal(t, 2, srv.Len())
	_, ok := srv.Entity(2)
	assert.False(t, ok, "Entity(2) found the despawned ghost")
	for _, id := range []components.GhostID{1, 3} {
		_, ok := srv.Entity(id)
		assert.Truef(t, ok, "Entity(%d) lost after despawning another ghost", id)
	}
	snap, _ := writeSnapshot(t, s, srv, 0, 1, 1)
	assert.Equal(t, []components.GhostID{1, 3}, snapshotIDs(snap), "snapshot after Despawn")
	assert.Zero(t, srv.Lost(), "Lost after a Despawn")

	// Despawning a dead entity still forgets it, without counting it lost.
	w.Arche().RemoveEntity(es[2])
	assert.True(t, srv.Despawn(es[2]), "Despawn of a dead ghost")
	srv.Quantize()
	assert.Equal(t, 1, srv.Len())
	assert.Zero(t, srv.Lost())

	// A despawned entity can become a ghost again, under a new ID.
	id, err := srv.Spawn(es[1], s.crate, 0)
	assert.NoError(t, err, "respawn")
	assert.Equal(t, components.GhostID(4), id, "respawn")
}

func TestServerDropsDeadGhosts(t *testing.T) {
	for _, drop := range []struct {
		name string
		run  func(t *testing.T, s *testSchema, srv *ghostreg.ServerRegister)
	}{
		{"WriteSnapshot", func(t *testing.T, s *testSchema, srv *ghostreg.ServerRegister) {
			snap, _ := writeSnapshot(t, s, srv, 0, 1, 0)
			var want []components.GhostID
			for id := components.GhostID(1); id <= 4; id++ {
				if _, ok := srv.Entity(id); ok {
					want = append(want, id)
				}
			}
			assert.Equal(t, want, snapshotIDs(snap), "the snapshot holds the remaining ghosts")
		}},
		{"Quantize", func(t *testing.T, s *testSchema, srv *ghostreg.ServerRegister) { srv.Quantize() }},
	} {
		t.Run(drop.name, func(t *testing.T) {
			s := newTestSchema(t)
			w, b := newServerWorld(t, s)
			srv := ghostreg.NewServerRegister(b)
			var es []ecs.Entity
			for i := 0; i < 4; i++ {
				e := newEntity(w, Pos{}, HP{})
				spawn(t, srv, e, s.player, 0)
				es = append(es, e)
			}
			w.Arche().RemoveEntity(es[1])
			w.Arche().RemoveEntity(es[3])
			// A recycled entity slot must not revive the dead ghost.
			newEntity(w, Pos{}, HP{})
			drop.run(t, s, srv)
			assert.Equal(t, 2, srv.Len())
			assert.Equal(t, uint64(2), srv.Lost())
			for _, id := range []components.GhostID{2, 4} {
				_, ok := srv.Entity(id)
				assert.Falsef(t, ok, "Entity(%d) of a dead ghost still found", id)
			}
			e, ok := srv.Entity(3)
			assert.True(t, ok, "Entity(3)")
			assert.Equal(t, es[2], e, "Entity(3)")
			// Counted once, not again at the next prune.
			srv.Quantize()
			assert.Equal(t, uint64(2), srv.Lost(), "Lost after another Quantize")

			// A live entity whose Ghost component the game removed is no
			// ghost any more: dropped too, instead of read as one.
			w.Arche().Remove(es[0], b.Ghost)
			drop.run(t, s, srv)
			_, ok = srv.Entity(1)
			assert.False(t, ok, "ghost 1 without its Ghost component is still found")
			assert.Equal(t, 1, srv.Len())
		})
	}
}

func TestServerOwned(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	owners := []components.ConnID{2, 0, 1, 2, 2, 1}
	var es []ecs.Entity
	for _, o := range owners {
		e := newEntity(w, Pos{}, HP{})
		spawn(t, srv, e, s.player, o)
		es = append(es, e)
	}
	srv.Despawn(es[3])
	prefix := []ecs.Entity{es[1]}
	assert.Equal(t, []ecs.Entity{es[1], es[0], es[4]}, srv.Owned(prefix[:1:1], 2), "Owned(conn 2): appended, in ID order")
	assert.Equal(t, []ecs.Entity{es[2], es[5]}, srv.Owned(nil, 1), "Owned(conn 1)")
	assert.Empty(t, srv.Owned(nil, 9), "Owned(conn 9)")
}

func TestServerWriteSnapshotOrder(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	owners := []components.ConnID{0, 2, 1, 2, 0, 3, 2}
	w.SetTick(5)
	for i, o := range owners {
		typ := s.player
		if i%2 == 1 {
			typ = s.crate
		}
		e := newEntity(w, Pos{float32(i) + 0.5, -float32(i)}, HP{V: int32(100 * i)})
		spawn(t, srv, e, typ, o)
	}
	srv.Quantize()
	// When every ghost fits, order does not matter and the records go by
	// ID, which keeps the ID deltas short; when not, the connection's own
	// ghosts go first, then the rest by priority (here all equal: by ID).
	for _, tt := range []struct {
		conn     components.ConnID
		maxBytes int
		want     []components.GhostID
	}{
		{2, 0, []components.GhostID{1, 2, 3, 4, 5, 6, 7}},
		{1, 0, []components.GhostID{1, 2, 3, 4, 5, 6, 7}},
		{3, 120, []components.GhostID{6, 1, 2}},
		{4, 120, []components.GhostID{1, 2, 3}},
		{5, 0, []components.GhostID{1, 2, 3, 4, 5, 6, 7}},
	} {
		snap, left := writeSnapshot(t, s, srv, tt.maxBytes, 20, tt.conn)
		ids := snapshotIDs(snap)
		assert.Equalf(t, 7-len(ids), left, "conn %d: left out", tt.conn)
		assert.Equalf(t, tt.maxBytes > 0, left > 0, "conn %d: test setup: only the small snapshot leaves ghosts out", tt.conn)
		require.GreaterOrEqualf(t, len(ids), len(tt.want), "conn %d", tt.conn)
		assert.Equalf(t, tt.want, ids[:len(tt.want)], "conn %d: snapshot order", tt.conn)
		for gi, g := range snap.Ghosts {
			e, _ := srv.Entity(g.ID)
			assert.Equalf(t, getGhost(w, e), g.Ghost, "conn %d: ghost %d identity", tt.conn, g.ID)
			ids, _ := b.ComponentIDs(codec.GhostTypeID(g.Type))
			for ci, id := range ids {
				// Bitwise: the server quantized, so the wire loses nothing.
				size := componentSize(w.Arche(), id)
				assert.Equalf(t, bytesAt(w.Arche().Get(e, id), size), bytesAt(snap.Value(gi, ci), size),
					"conn %d: ghost %d component %d: server then wire", tt.conn, g.ID, ci)
			}
		}
	}
}

func TestServerWriteSnapshotBudget(t *testing.T) {
	for _, maxBytes := range []int{96, 160} {
		s := newTestSchema(t)
		w, b := newServerWorld(t, s)
		srv := ghostreg.NewServerRegister(b)
		const n = 40
		const conn = 4
		for i := 0; i < n; i++ {
			owner := components.ConnID(0)
			if i == n-1 || i == n-3 {
				owner = conn // the highest IDs: they still come first
			}
			e := newEntity(w, Pos{float32(i), 99}, HP{V: int32(-70000 * i)})
			spawn(t, srv, e, s.player, owner)
		}
		srv.Quantize()
		snap, left := writeSnapshot(t, s, srv, maxBytes, 1, conn)
		require.NotZerof(t, left, "maxBytes %d: all %d ghosts fit; the test needs an overflow", maxBytes, n)
		assert.Equalf(t, n, len(snap.Ghosts)+left, "maxBytes %d: %d sent + %d left out", maxBytes, len(snap.Ghosts), left)
		want := []components.GhostID{n - 2, n}
		for id := components.GhostID(1); len(want) < len(snap.Ghosts); id++ {
			want = append(want, id)
		}
		got := snapshotIDs(snap)
		assert.GreaterOrEqualf(t, len(got), 2, "maxBytes %d: the owned ghosts fit", maxBytes)
		assert.Equalf(t, want, got, "maxBytes %d: owned first, then spawns of equal priority by ID", maxBytes)
		// Everything sent is intact.
		for gi, g := range snap.Ghosts {
			e, _ := srv.Entity(g.ID)
			assert.Equalf(t, *getPos(w, e), *(*Pos)(snap.Value(gi, 0)), "maxBytes %d: ghost %d Pos, server then decoded", maxBytes, g.ID)
			assert.Equalf(t, *getHP(w, e), *(*HP)(snap.Value(gi, 1)), "maxBytes %d: ghost %d HP, server then decoded", maxBytes, g.ID)
		}
	}
}

// Steady state, the per-tick server work allocates nothing: quantizing,
// and writing snapshots whether everything fits or ghosts are left out.
func TestServerSteadyStateAllocs(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	var es []ecs.Entity
	for i := 0; i < 64; i++ {
		e := newEntity(w, Pos{float32(i), 1}, HP{V: int32(i)})
		spawn(t, srv, e, altType(s, i), components.ConnID(i%3))
		es = append(es, e)
	}
	for _, maxBytes := range []int{0, 64, 200} {
		sw, err := protocol.NewSnapshotWriter(s.Schema, maxBytes)
		require.NoError(t, err)
		v := srv.NewView(2)
		t9 := gw.Tick(9)
		tick := func() {
			for i, e := range es[:32] { // half the ghosts move: encoded again, sent as deltas
				getPos(w, e).X = float32(i) + float32(t9%16)/4
			}
			srv.Quantize()
			sw.Begin(t9)
			srv.WriteSnapshot(sw, v, t9)
			sw.Finish(&protocol.SnapshotHeader{Tick: t9})
			v.Ack(t9, 1)
			t9++
		}
		for range 260 { // every slot of the view's ring of sent snapshots used once
			tick()
		}
		assert.Zerof(t, testing.AllocsPerRun(50, tick), "maxBytes %d: allocs per Quantize+WriteSnapshot+Finish", maxBytes)
	}
}

// A ghost whose entity the game destroyed without Despawn is dropped at the
// next snapshot or quantize; until then Owned and Entity must not hand the
// dead entity out: the server writes inputs onto every owned entity (arche
// panics on a dead one) and the game removes them on disconnect.
func TestServerOwnedSkipsDestroyedEntities(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	var es []ecs.Entity
	for i := 0; i < 3; i++ {
		e := newEntity(w, Pos{}, HP{})
		spawn(t, srv, e, s.player, 1)
		es = append(es, e)
	}
	a := w.Arche()
	a.RemoveEntity(es[1])
	got := srv.Owned(nil, 1)
	assert.Equal(t, []ecs.Entity{es[0], es[2]}, got, "Owned(conn 1) holds the live entities")
	for _, e := range got {
		assert.Truef(t, a.Alive(e), "Owned returned dead entity %v", e)
	}
	_, ok := srv.Entity(2)
	assert.False(t, ok, "Entity(2) found the destroyed ghost")
	e, ok := srv.Entity(3)
	assert.True(t, ok, "Entity(3)")
	assert.Equal(t, es[2], e, "Entity(3)")
	// Dropped and counted once, as before.
	srv.Quantize()
	assert.Equal(t, 2, srv.Len())
	assert.Equal(t, uint64(1), srv.Lost())
}

func TestSpawnBeyondTheIndexesIsRefused(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	first := newEntity(w, Pos{}, HP{})
	spawn(t, srv, first, s.crate, 0)
	ghostreg.FillSlots(srv)
	e := newEntity(w, Pos{}, HP{})
	_, err := srv.Spawn(e, s.crate, 0)
	require.Error(t, err)
	assert.ErrorContains(t, err, "268435456 ghosts hold every index, at most 268435456")
	assert.Equal(t, 1, srv.Len())
	require.True(t, srv.Despawn(first))
	spawn(t, srv, e, s.crate, 0) // the dead ghost's index
	assert.Equal(t, 1, srv.Len())
}
