package ghosts_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/ghosts"
	"github.com/ghostwire/ghostwire/netsync"
)

// writeSnapshot encodes srv's snapshot of tick for conn with a writer of
// maxBytes (MaxDatagram when 0) and decodes it, as a client would.
func writeSnapshot(tb testing.TB, s *testSchema, srv *ghosts.ServerRegister, maxBytes int, tick gw.Tick, conn components.ConnID) (snap *netsync.Snapshot, left int) {
	tb.Helper()
	sw, err := netsync.NewSnapshotWriter(s.Schema, maxBytes)
	if err != nil {
		tb.Fatal(err)
	}
	sw.Begin(tick)
	left = srv.WriteSnapshot(sw, conn)
	h := netsync.SnapshotHeader{Tick: tick, Complete: true}
	p := sw.Finish(&h)
	snap = new(netsync.Snapshot)
	if err := netsync.DecodeSnapshot(p, s.Schema, snap); err != nil {
		tb.Fatalf("DecodeSnapshot: %v", err)
	}
	return snap, left
}

func snapshotIDs(snap *netsync.Snapshot) []components.GhostID {
	var ids []components.GhostID
	for _, g := range snap.Ghosts {
		ids = append(ids, g.ID)
	}
	return ids
}

func TestServerSpawn(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)

	tests := []struct {
		tick  gw.Tick
		typ   netsync.GhostTypeID
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
		if err != nil {
			t.Fatalf("Spawn #%d: %v", i, err)
		}
		if want := components.GhostID(i + 1); id != want {
			t.Errorf("Spawn #%d: ID %d, want %d", i, id, want)
		}
		want := components.Ghost{ID: id, Type: uint16(tt.typ), Owner: tt.owner, Spawned: tt.tick}
		if g := getGhost(w, e); g != want {
			t.Errorf("Spawn #%d: Ghost %+v, want %+v", i, g, want)
		}
		if !has[components.Predicted](w, e) {
			t.Errorf("Spawn #%d: no Predicted marker", i)
		}
		if got, want := has[components.InputHeader](w, e), tt.owner != 0; got != want {
			t.Errorf("Spawn #%d (owner %d): has InputHeader = %v, want %v", i, tt.owner, got, want)
		}
		if got, want := has[Ctl](w, e), tt.owner != 0; got != want {
			t.Errorf("Spawn #%d (owner %d): has the input type = %v, want %v", i, tt.owner, got, want)
		}
		if has[components.Interpolated](w, e) {
			t.Errorf("Spawn #%d: a server ghost is Interpolated", i)
		}
		if got, ok := srv.Entity(id); !ok || got != e {
			t.Errorf("Entity(%d) = %v, %v; want %v, true", id, got, ok, e)
		}
		if got := getPos(w, e).X; got != float32(i) {
			t.Errorf("Spawn #%d changed the replicated value to %v", i, got)
		}
	}
	if srv.Len() != len(tests) {
		t.Errorf("Len = %d, want %d", srv.Len(), len(tests))
	}
	if _, ok := srv.Entity(0); ok {
		t.Error("Entity(0) found a ghost")
	}
	if _, ok := srv.Entity(components.GhostID(len(tests) + 1)); ok {
		t.Error("Entity of an ID never assigned found a ghost")
	}
}

func TestServerSpawnKeepsExistingMarkers(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)
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
	if _, err := srv.Spawn(e, s.player, 2); err != nil {
		t.Fatalf("Spawn of an entity already Predicted with an input: %v", err)
	}
	if got := *(*components.InputHeader)(a.Get(e, b.Header)); got != head {
		t.Errorf("Spawn overwrote the existing InputHeader: %+v, want %+v", got, head)
	}
	if got := *(*Ctl)(a.Get(e, b.Input)); got != in {
		t.Errorf("Spawn overwrote the existing input: %+v, want %+v", got, in)
	}
}

func TestServerSpawnErrors(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)
	a := w.Arche()

	dead := newEntity(w, Pos{}, HP{})
	a.RemoveEntity(dead)

	ghost := newEntity(w, Pos{}, HP{})
	if id, err := srv.Spawn(ghost, s.player, 0); err != nil || id != 1 {
		t.Fatalf("Spawn = %d, %v; want 1, nil", id, err)
	}

	onlyPos := a.NewEntityWith(ecs.Component{ID: ecs.ComponentID[Pos](a), Comp: &Pos{}})
	onlyHP := a.NewEntityWith(ecs.Component{ID: ecs.ComponentID[HP](a), Comp: &HP{}})
	ok := newEntity(w, Pos{}, HP{})

	tests := []struct {
		name string
		e    ecs.Entity
		typ  netsync.GhostTypeID
		want []string // substrings of the error
	}{
		{"dead entity", dead, s.player, []string{"dead"}},
		{"already a ghost", ghost, s.crate, []string{"already a ghost"}},
		{"player lacks HP", onlyPos, s.player, []string{"ghosts_test.HP", `"player"`}},
		{"crate lacks Pos", onlyHP, s.crate, []string{"ghosts_test.Pos", `"crate"`}},
		{"unknown ghost type", ok, 7, []string{"7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := srv.Spawn(tt.e, tt.typ, 1)
			if err == nil {
				t.Fatalf("Spawn = %d, nil; want an error", id)
			}
			if id != 0 {
				t.Errorf("Spawn returned ID %d with its error, want 0", id)
			}
			for _, sub := range tt.want {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("error %q does not mention %s", err, sub)
				}
			}
			if a.Alive(tt.e) && a.Has(tt.e, b.Ghost) && tt.e != ghost {
				t.Errorf("a failed Spawn left a Ghost component")
			}
		})
	}
	if srv.Len() != 1 {
		t.Errorf("Len = %d after failed spawns, want 1", srv.Len())
	}
	// Failed spawns consume no ID.
	if id, err := srv.Spawn(ok, s.player, 0); err != nil || id != 2 {
		t.Errorf("Spawn after failures = %d, %v; want 2, nil", id, err)
	}
}

func TestServerDespawn(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)
	var es []ecs.Entity
	for i := 0; i < 3; i++ {
		e := newEntity(w, Pos{}, HP{})
		if _, err := srv.Spawn(e, s.player, 1); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	if !srv.Despawn(es[1]) {
		t.Fatal("Despawn of a ghost = false")
	}
	if srv.Despawn(es[1]) {
		t.Error("second Despawn of the same entity = true")
	}
	if srv.Despawn(newEntity(w, Pos{}, HP{})) {
		t.Error("Despawn of an entity that never was a ghost = true")
	}
	if !w.Arche().Alive(es[1]) {
		t.Error("Despawn killed the entity")
	}
	if has[components.Ghost](w, es[1]) {
		t.Error("Despawn left the Ghost component")
	}
	if srv.Len() != 2 {
		t.Errorf("Len = %d, want 2", srv.Len())
	}
	if _, ok := srv.Entity(2); ok {
		t.Error("Entity(2) found the despawned ghost")
	}
	for _, id := range []components.GhostID{1, 3} {
		if _, ok := srv.Entity(id); !ok {
			t.Errorf("Entity(%d) lost after despawning another ghost", id)
		}
	}
	snap, _ := writeSnapshot(t, s, srv, 0, 1, 1)
	if got, want := snapshotIDs(snap), []components.GhostID{1, 3}; !slices.Equal(got, want) {
		t.Errorf("snapshot after Despawn holds %v, want %v", got, want)
	}
	if srv.Lost() != 0 {
		t.Errorf("Lost = %d after a Despawn, want 0", srv.Lost())
	}

	// Despawning a dead entity still forgets it, without counting it lost.
	w.Arche().RemoveEntity(es[2])
	if !srv.Despawn(es[2]) {
		t.Error("Despawn of a dead ghost = false")
	}
	srv.Quantize()
	if srv.Len() != 1 || srv.Lost() != 0 {
		t.Errorf("Len, Lost = %d, %d; want 1, 0", srv.Len(), srv.Lost())
	}

	// A despawned entity can become a ghost again, under a new ID.
	if id, err := srv.Spawn(es[1], s.crate, 0); err != nil || id != 4 {
		t.Errorf("respawn = %d, %v; want 4, nil", id, err)
	}
}

func TestServerDropsDeadGhosts(t *testing.T) {
	for _, drop := range []struct {
		name string
		run  func(t *testing.T, s *testSchema, srv *ghosts.ServerRegister)
	}{
		{"WriteSnapshot", func(t *testing.T, s *testSchema, srv *ghosts.ServerRegister) {
			snap, _ := writeSnapshot(t, s, srv, 0, 1, 0)
			var want []components.GhostID
			for id := components.GhostID(1); id <= 4; id++ {
				if _, ok := srv.Entity(id); ok {
					want = append(want, id)
				}
			}
			if got := snapshotIDs(snap); !slices.Equal(got, want) {
				t.Errorf("snapshot holds %v, want the remaining ghosts %v", got, want)
			}
		}},
		{"Quantize", func(t *testing.T, s *testSchema, srv *ghosts.ServerRegister) { srv.Quantize() }},
	} {
		t.Run(drop.name, func(t *testing.T) {
			s := newTestSchema(t)
			w, b := newServerWorld(t, s)
			srv := ghosts.NewServerRegister(b)
			var es []ecs.Entity
			for i := 0; i < 4; i++ {
				e := newEntity(w, Pos{}, HP{})
				if _, err := srv.Spawn(e, s.player, 0); err != nil {
					t.Fatal(err)
				}
				es = append(es, e)
			}
			w.Arche().RemoveEntity(es[1])
			w.Arche().RemoveEntity(es[3])
			// A recycled entity slot must not revive the dead ghost.
			newEntity(w, Pos{}, HP{})
			drop.run(t, s, srv)
			if srv.Len() != 2 {
				t.Errorf("Len = %d, want 2", srv.Len())
			}
			if srv.Lost() != 2 {
				t.Errorf("Lost = %d, want 2", srv.Lost())
			}
			for _, id := range []components.GhostID{2, 4} {
				if _, ok := srv.Entity(id); ok {
					t.Errorf("Entity(%d) of a dead ghost still found", id)
				}
			}
			if e, ok := srv.Entity(3); !ok || e != es[2] {
				t.Errorf("Entity(3) = %v, %v; want %v, true", e, ok, es[2])
			}
			// Counted once, not again at the next prune.
			srv.Quantize()
			if srv.Lost() != 2 {
				t.Errorf("Lost = %d after another Quantize, want 2", srv.Lost())
			}

			// A live entity whose Ghost component the game removed is no
			// ghost any more: dropped too, instead of read as one.
			w.Arche().Remove(es[0], b.Ghost)
			drop.run(t, s, srv)
			if _, ok := srv.Entity(1); ok || srv.Len() != 1 {
				t.Errorf("ghost 1 without its Ghost component: Entity found %v, Len %d; want false, 1", ok, srv.Len())
			}
		})
	}
}

func TestServerOwned(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)
	owners := []components.ConnID{2, 0, 1, 2, 2, 1}
	var es []ecs.Entity
	for _, o := range owners {
		e := newEntity(w, Pos{}, HP{})
		if _, err := srv.Spawn(e, s.player, o); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	srv.Despawn(es[3])
	prefix := []ecs.Entity{es[1]}
	got := srv.Owned(prefix[:1:1], 2)
	if want := []ecs.Entity{es[1], es[0], es[4]}; !slices.Equal(got, want) {
		t.Errorf("Owned(conn 2) = %v, want %v (appended, in ID order)", got, want)
	}
	if got, want := srv.Owned(nil, 1), []ecs.Entity{es[2], es[5]}; !slices.Equal(got, want) {
		t.Errorf("Owned(conn 1) = %v, want %v", got, want)
	}
	if got := srv.Owned(nil, 9); len(got) != 0 {
		t.Errorf("Owned(conn 9) = %v, want none", got)
	}
}

func TestServerWriteSnapshotOrder(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)
	owners := []components.ConnID{0, 2, 1, 2, 0, 3, 2}
	w.SetTick(5)
	for i, o := range owners {
		typ := s.player
		if i%2 == 1 {
			typ = s.crate
		}
		e := newEntity(w, Pos{float32(i) + 0.5, -float32(i)}, HP{V: int32(100 * i)})
		if _, err := srv.Spawn(e, typ, o); err != nil {
			t.Fatal(err)
		}
	}
	srv.Quantize()
	for _, tt := range []struct {
		conn components.ConnID
		want []components.GhostID
	}{
		{2, []components.GhostID{2, 4, 7, 1, 3, 5, 6}},
		{1, []components.GhostID{3, 1, 2, 4, 5, 6, 7}},
		{3, []components.GhostID{6, 1, 2, 3, 4, 5, 7}},
		{9, []components.GhostID{1, 2, 3, 4, 5, 6, 7}},
	} {
		snap, left := writeSnapshot(t, s, srv, 0, 20, tt.conn)
		if left != 0 || !snap.Complete {
			t.Errorf("conn %d: left %d, complete %v; want 0, true", tt.conn, left, snap.Complete)
		}
		if got := snapshotIDs(snap); !slices.Equal(got, tt.want) {
			t.Errorf("conn %d: snapshot order %v, want %v", tt.conn, got, tt.want)
		}
		for gi, g := range snap.Ghosts {
			e, _ := srv.Entity(g.ID)
			if want := getGhost(w, e); g.Ghost != want {
				t.Errorf("conn %d: ghost %d identity %+v, want %+v", tt.conn, g.ID, g.Ghost, want)
			}
			ids, _ := b.ComponentIDs(netsync.GhostTypeID(g.Type))
			for ci, id := range ids {
				// Bitwise: the server quantized, so the wire loses nothing.
				size := componentSize(w.Arche(), id)
				if got, want := bytesAt(snap.Value(gi, ci), size), bytesAt(w.Arche().Get(e, id), size); got != want {
					t.Errorf("conn %d: ghost %d component %d: wire %x, server %x", tt.conn, g.ID, ci, got, want)
				}
			}
		}
	}
}

func TestServerWriteSnapshotBudget(t *testing.T) {
	for _, maxBytes := range []int{64, 128} {
		s := newTestSchema(t)
		w, b := newServerWorld(t, s)
		srv := ghosts.NewServerRegister(b)
		const n = 40
		const conn = 4
		for i := 0; i < n; i++ {
			owner := components.ConnID(0)
			if i == n-1 || i == n-3 {
				owner = conn // the highest IDs: they still come first
			}
			e := newEntity(w, Pos{float32(i), 99}, HP{V: int32(-70000 * i)})
			if _, err := srv.Spawn(e, s.player, owner); err != nil {
				t.Fatal(err)
			}
		}
		srv.Quantize()
		snap, left := writeSnapshot(t, s, srv, maxBytes, 1, conn)
		if left == 0 {
			t.Fatalf("maxBytes %d: all %d ghosts fit; the test needs an overflow", maxBytes, n)
		}
		if got := len(snap.Ghosts) + left; got != n {
			t.Errorf("maxBytes %d: %d sent + %d left out = %d, want %d", maxBytes, len(snap.Ghosts), left, got, n)
		}
		if snap.Complete {
			t.Errorf("maxBytes %d: snapshot with %d ghosts left out is marked complete", maxBytes, left)
		}
		want := []components.GhostID{n - 2, n}
		for id := components.GhostID(1); len(want) < len(snap.Ghosts); id++ {
			want = append(want, id)
		}
		if got := snapshotIDs(snap); len(got) < 2 || !slices.Equal(got, want) {
			t.Errorf("maxBytes %d: snapshot holds %v, want %v (owned first, then by ID)", maxBytes, got, want)
		}
		// Everything sent is intact.
		for gi, g := range snap.Ghosts {
			e, _ := srv.Entity(g.ID)
			if p, h := *(*Pos)(snap.Value(gi, 0)), *(*HP)(snap.Value(gi, 1)); p != *getPos(w, e) || h != *getHP(w, e) {
				t.Errorf("maxBytes %d: ghost %d decoded as %v %v, server has %v %v", maxBytes, g.ID, p, h, *getPos(w, e), *getHP(w, e))
			}
		}
	}
}

// Steady state, the per-tick server work allocates nothing: quantizing,
// and writing snapshots whether everything fits or ghosts are left out.
func TestServerSteadyStateAllocs(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)
	for i := 0; i < 64; i++ {
		e := newEntity(w, Pos{float32(i), 1}, HP{V: int32(i)})
		if _, err := srv.Spawn(e, altType(s, i), components.ConnID(i%3)); err != nil {
			t.Fatal(err)
		}
	}
	for _, maxBytes := range []int{0, 64, 200} {
		sw, err := netsync.NewSnapshotWriter(s.Schema, maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		tick := func() {
			srv.Quantize()
			sw.Begin(9)
			srv.WriteSnapshot(sw, 2)
			sw.Finish(&netsync.SnapshotHeader{Tick: 9, Complete: true})
		}
		tick()
		if n := testing.AllocsPerRun(50, tick); n != 0 {
			t.Errorf("maxBytes %d: %v allocs per Quantize+WriteSnapshot+Finish, want 0", maxBytes, n)
		}
	}
}

// A ghost whose entity the game destroyed without Despawn is dropped at the
// next snapshot or quantize; until then Owned and Entity must not hand the
// dead entity out: the server writes inputs onto every owned entity (arche
// panics on a dead one) and the game removes them on disconnect.
func TestServerOwnedSkipsDestroyedEntities(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghosts.NewServerRegister(b)
	var es []ecs.Entity
	for i := 0; i < 3; i++ {
		e := newEntity(w, Pos{}, HP{})
		if _, err := srv.Spawn(e, s.player, 1); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	a := w.Arche()
	a.RemoveEntity(es[1])
	got := srv.Owned(nil, 1)
	if want := []ecs.Entity{es[0], es[2]}; !slices.Equal(got, want) {
		t.Errorf("Owned(conn 1) = %v, want the live %v", got, want)
	}
	for _, e := range got {
		if !a.Alive(e) {
			t.Errorf("Owned returned dead entity %v", e)
		}
	}
	if _, ok := srv.Entity(2); ok {
		t.Error("Entity(2) found the destroyed ghost")
	}
	if e, ok := srv.Entity(3); !ok || e != es[2] {
		t.Errorf("Entity(3) = %v, %v; want %v, true", e, ok, es[2])
	}
	// Dropped and counted once, as before.
	srv.Quantize()
	if srv.Len() != 2 || srv.Lost() != 1 {
		t.Errorf("Len, Lost = %d, %d; want 2, 1", srv.Len(), srv.Lost())
	}
}
