package ghostreg_test

import (
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

// starvationBytes is a snapshot budget that holds 80 of the test's crates
// once their identities are acknowledged, and not 81. Every crate's HP
// grows by one every tick; each record is a delta against the client's
// state of about 13 ticks before: 33 bits (8-bit ID delta, 1-bit type,
// identity bit, delta bit, default-baseline bit, 8-bit baseline distance,
// two changed bits, the relative bit, and the HP 13 up from its baseline
// in the 10 bits of its small class), 32 more for ID deltas past one byte
// (the first, from 0, and jumps between runs of IDs in priority order),
// and the writer's 40-byte header reserve.
const starvationBytes = 40 + (80*33+32)/8

// sendMany spawns n crates and sends ticks snapshots of budget
// starvationBytes to one connection, whose client acknowledges each one
// (ticks cross the 2³² wrap); every crate's HP changes every tick, so
// every one is always pending. It returns the IDs each snapshot held and
// the view.
func sendMany(t *testing.T, n, ticks int, importance func(i int) float32) ([][]components.GhostID, *ghostreg.View) {
	t.Helper()
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	index := map[ecs.Entity]int{}
	var es []ecs.Entity
	for i := range n {
		e := newEntity(w, Pos{float32(i%200) - 99, float32(i / 200)}, HP{V: int32(i)})
		spawn(t, srv, e, s.crate, 0)
		index[e] = i
		es = append(es, e)
	}
	v := srv.NewView(1)
	if importance != nil {
		v.Importance = func(e ecs.Entity) float32 { return importance(index[e]) }
	}
	sw, err := protocol.NewSnapshotWriter(s.Schema, starvationBytes)
	require.NoError(t, err)
	var snap protocol.Snapshot
	var sent [][]components.GhostID
	start := gw.Tick(math.MaxUint32 - 5)
	for k := range ticks {
		tick := start.Add(k)
		for i, e := range es {
			getHP(w, e).V = int32(i + k)
		}
		srv.Quantize()
		sw.Begin(tick)
		srv.WriteSnapshot(sw, v, tick)
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), s.Schema, &snap))
		v.Ack(tick, 1)
		var ids []components.GhostID
		for _, g := range snap.Ghosts {
			ids = append(ids, g.ID)
		}
		sent = append(sent, ids)
	}
	return sent, v
}

// spawnPhase returns how many snapshots it took until every one of n
// ghosts had been sent once.
func spawnPhase(sent [][]components.GhostID, n int) int {
	seen := map[components.GhostID]bool{}
	for k, ids := range sent {
		for _, id := range ids {
			seen[id] = true
		}
		if len(seen) == n {
			return k + 1
		}
	}
	return len(sent) + 1
}

// staleness returns per ghost the most snapshots between two of its
// updates (or the edges of sent).
func staleness(sent [][]components.GhostID, n int) map[components.GhostID]int {
	last := map[components.GhostID]int{}
	worst := map[components.GhostID]int{}
	for id := components.GhostID(1); id <= components.GhostID(n); id++ {
		last[id] = -1
	}
	for k, ids := range sent {
		for _, id := range ids {
			worst[id] = max(worst[id], k-last[id])
			last[id] = k
		}
	}
	for id, k := range last {
		worst[id] = max(worst[id], len(sent)-k)
	}
	return worst
}

// steadyFrom returns the first snapshot after the spawns from which the
// budget holds 80 records: the first round after the spawns carries
// records whose baselines lie beyond protocol.RelativeWindow, coded
// plain and larger, so it must end within a round at the 40 records
// per snapshot such records fill.
func steadyFrom(t *testing.T, sent [][]components.GhostID, spawns, n int) int {
	t.Helper()
	k := spawns
	for k < len(sent) && len(sent[k]) != 80 {
		k++
	}
	require.LessOrEqual(t, k-spawns, (n+39)/40, "snapshots until the records are relative to recent baselines")
	return k
}

// 1,000 relevant ghosts, a budget that holds 80 per snapshot: once the
// spawns are through and every ghost was sent once after them, every
// ghost is updated at least every ⌈1000/80⌉ = 13 snapshots; the spawns
// themselves, which go first, all arrive within ⌈1000/k⌉ snapshots, k
// being the spawns that fit one with their identity.
func TestViewNoStarvation(t *testing.T) {
	const n, ticks = 1000, 600
	sent, v := sendMany(t, n, ticks, nil)
	spawns := spawnPhase(sent, n)
	perSpawn := len(sent[0])
	assert.LessOrEqual(t, spawns, (n+perSpawn-1)/perSpawn, "spawns, %d per snapshot, go first", perSpawn)
	steady := steadyFrom(t, sent, spawns, n)
	for k, ids := range sent[steady:] {
		require.Lenf(t, ids, 80, "snapshot %d after the spawns: the budget holds 80", steady-spawns+k)
	}
	const bound = (n + 79) / 80
	worst := 0
	for id, st := range staleness(sent[steady:], n) {
		worst = max(worst, st)
		assert.LessOrEqualf(t, st, bound, "ghost %d went %d snapshots without an update", id, st)
	}
	assert.Equal(t, bound, worst, "the bound is tight")
	t.Logf("%d spawns per snapshot, all sent within %d snapshots; then at most %d snapshots between updates", perSpawn, spawns, worst)
	total := 0
	for _, ids := range sent {
		total += len(ids)
	}
	st := v.Stats()
	assert.Equal(t, uint64(n), st.Identities, "each identity sent once: the client acknowledges every snapshot")
	assert.Equal(t, uint64(ticks*n-total), st.Deferred, "every ghost left out of a snapshot is counted")
}

// A client joining a large scene catches up on spawns walking its
// pending set once every few snapshots, not every one: the importance
// hook, asked about each candidate of a walk, is asked about a fraction
// of what a walk per snapshot would; the client's own ghost is in every
// snapshot; every ghost arrives, its identity sent once (the client
// acknowledges each snapshot at once); and every ghost left out of a
// snapshot is counted, walk or not.
func TestViewCatchUpWalksEveryFewSnapshots(t *testing.T) {
	const n = 3000
	p := newPair(t, 7)
	for i := range n {
		owner := components.ConnID(0)
		if i == n/2 {
			owner = 7
		}
		p.spawn(t, p.s.crate, owner, Pos{float32(i % 100), float32(i / 100)}, HP{V: int32(i)})
	}
	sw, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
	require.NoError(t, err)
	p.sw.SetTick(9)
	p.srv.Quantize()
	early := p.srv.NewView(8) // the crates are first encoded (change) at tick 9, at rest since
	sw.Begin(9)
	p.srv.WriteSnapshot(sw, early, 9)
	early.Close()
	v := p.srv.NewView(7)
	asked := 0
	v.Importance = func(ecs.Entity) float32 { asked++; return 1 }
	var snap protocol.Snapshot
	held := map[components.GhostID]bool{}
	own := components.GhostID(n/2 + 1)
	ticks, records, deferred := 0, 0, 0
	for tick := gw.Tick(100); len(held) < n; tick++ { // the crates long at rest: each spawn record says so
		// Every crate held is at rest and acknowledged so (each spawn
		// record says it rests): the candidates are the others and the
		// client's own.
		candidates := n - len(held)
		if held[own] {
			candidates++
		}
		require.Less(t, ticks, n, "the catch-up never ends")
		p.sw.SetTick(tick)
		p.srv.Quantize()
		sw.Begin(tick)
		p.srv.WriteSnapshot(sw, v, tick)
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), p.s.Schema, &snap))
		v.Ack(tick, 1)
		require.Equal(t, own, snap.Ghosts[0].ID, "tick %d: the client's own ghost first", tick)
		for _, g := range snap.Ghosts {
			held[g.ID] = true
		}
		records += len(snap.Ghosts)
		deferred += candidates - len(snap.Ghosts)
		ticks++
	}
	walks := float64(asked) / n
	t.Logf("%d ghosts caught up in %d snapshots, %.1f walks", n, ticks, walks)
	assert.Less(t, walks, float64(ticks)/2, "fewer walks than every other snapshot")
	st := v.Stats()
	assert.Equal(t, uint64(n), st.Identities, "each identity sent once")
	assert.Equal(t, uint64(deferred), st.Deferred, "every ghost left out of a snapshot is counted")
}

// Importance: a ghost that matters 4 times more is sent about 4 times as
// often; one that matters nothing still gets through, within the bound
// scaled by the importance ratio, and so does its spawn: a spawn of a
// ghost that matters less than 1 waits its turn by priority rather than
// go before every update, so it comes within that bound too.
func TestViewImportance(t *testing.T) {
	const n, ticks = 1000, 1800
	const bound = int(13/ghostreg.MinImportance) + 13 // 13 snapshots between ordinary updates, scaled; one round more for where it starts
	low := func(id components.GhostID) bool { return id > 10 && id <= 20 }
	importance := func(i int) float32 {
		switch {
		case i < 10:
			return 4
		case i < 20:
			return 0 // counts as MinImportance
		}
		return 1
	}
	sent, _ := sendMany(t, n, ticks, importance)
	others := make([][]components.GhostID, len(sent))
	first := map[components.GhostID]int{}
	for k, ids := range sent {
		for _, id := range ids {
			if _, ok := first[id]; !ok {
				first[id] = k
			}
			if !low(id) {
				others[k] = append(others[k], id)
			}
		}
	}
	spawns := spawnPhase(others, n-10)
	steady := steadyFrom(t, sent, spawns, n)
	count := map[components.GhostID]int{}
	for _, ids := range sent[steady:] {
		for _, id := range ids {
			count[id]++
		}
	}
	st := staleness(sent[steady:], n)
	for id := components.GhostID(1); id <= 10; id++ {
		assert.Greaterf(t, count[id], 3*count[500], "ghost %d of importance 4: %d updates, an ordinary one %d", id, count[id], count[500])
		// ⌈13/4⌉ between updates, one more for the window's start (a
		// ghost sent just before it counts from there), one for ties.
		assert.LessOrEqualf(t, st[id], (13+3)/4+2, "ghost %d of importance 4", id)
	}
	for id := components.GhostID(11); id <= 20; id++ {
		f, ok := first[id]
		require.Truef(t, ok, "ghost %d of importance 0 never spawned", id)
		assert.Greaterf(t, f, spawns, "ghost %d of importance 0: its spawn waited its turn", id)
		assert.LessOrEqualf(t, f, spawns+bound, "ghost %d of importance 0: spawned after %d snapshots", id, f)
		assert.Positivef(t, count[id], "ghost %d of importance 0 starved", id)
		assert.LessOrEqualf(t, st[id], bound, "ghost %d of importance 0", id)
	}
}

// Despawn records beyond MaxDespawnsPerSnapshot wait for the next snapshot
// (counted); each is resent until a snapshot carrying it is acknowledged,
// and an acknowledgement of a snapshot the view no longer remembers (64
// snapshots later, the same ring slot) or never sent acknowledges nothing.
func TestViewDespawnsAndAcks(t *testing.T) {
	const n = protocol.MaxDespawnsPerSnapshot + 44
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	var es []ecs.Entity
	for i := range n {
		e := newEntity(w, Pos{}, HP{V: int32(i)})
		spawn(t, srv, e, s.crate, 0)
		es = append(es, e)
	}
	v := srv.NewView(1)
	other := srv.NewView(2)
	sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	send := func(view *ghostreg.View, tick gw.Tick) *protocol.Snapshot {
		sw.Begin(tick)
		srv.WriteSnapshot(sw, view, tick)
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), s.Schema, &snap))
		return &snap
	}
	// Tell v about every ghost, acknowledging each snapshot.
	tick := gw.Tick(10)
	for ; v.Stats().Identities < n; tick++ {
		send(v, tick)
		v.Ack(tick, 1)
	}
	told := len(snapIDs(send(other, tick))) // the first ghosts only, never acknowledged
	require.Positive(t, told)
	before := v.Stats().Identities
	send(v, tick)
	assert.Equal(t, before, v.Stats().Identities, "identities acknowledged are not sent again")

	for _, e := range es {
		require.True(t, srv.Despawn(e))
	}
	assert.Equal(t, n, v.PendingDespawns())
	assert.Equal(t, told, other.PendingDespawns(), "a connection gets despawns only for the ghosts it was sent")
	tick += 2
	got := send(v, tick).Despawned
	require.Len(t, got, protocol.MaxDespawnsPerSnapshot)
	assert.Equal(t, uint64(n-protocol.MaxDespawnsPerSnapshot), v.Stats().DespawnsDeferred)
	send(v, tick+1) // lost: not acknowledged
	v.Ack(tick, 1)
	assert.Equal(t, n-protocol.MaxDespawnsPerSnapshot, v.PendingDespawns())
	got = send(v, tick+2).Despawned
	assert.Len(t, got, n-protocol.MaxDespawnsPerSnapshot)
	v.Ack(tick+2, 1)
	assert.Zero(t, v.PendingDespawns())
	assert.Empty(t, send(v, tick+3).Despawned)

	// A closed view no longer collects despawns.
	e := newEntity(w, Pos{}, HP{})
	spawn(t, srv, e, s.crate, 0)
	send(v, tick+4)
	v.Close()
	require.True(t, srv.Despawn(e))
	assert.Zero(t, v.PendingDespawns())
	assert.Equal(t, 0, srv.Len())
}

// A snapshot in parts: an acknowledgement of some of them makes only
// their records the client's. After part 0 alone is acknowledged, the
// ghosts it held are known and delta-encoded against it, those of the
// later parts are sent again with their identity and in full; once a
// later part is acknowledged too, its ghosts are known as well.
func TestAckOfSomePartsLeavesTheOthersPending(t *testing.T) {
	const n = 60
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	for i := range n {
		spawn(t, srv, newEntity(w, Pos{float32(i), 0}, HP{V: int32(i)}), s.crate, 0)
	}
	v := srv.NewView(1)
	small, err := protocol.NewSnapshotWriter(s.Schema, 256)
	require.NoError(t, err)
	var snap protocol.Snapshot
	tick := gw.Tick(40)
	var parts [][]components.GhostID
	for part := range protocol.MaxSnapshotParts {
		small.Begin(tick)
		deferred := srv.WritePart(small, v, tick, part)
		require.NoError(t, protocol.DecodeSnapshot(small.Finish(&protocol.SnapshotHeader{Tick: tick, Part: uint8(part)}), s.Schema, &snap))
		parts = append(parts, snapIDs(&snap))
		if deferred == 0 {
			break
		}
	}
	require.GreaterOrEqual(t, len(parts), 3, "the spawns take three parts or more")

	whole, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(t, err)
	identities := func(tick gw.Tick) map[components.GhostID]bool {
		whole.Begin(tick)
		srv.WriteSnapshot(whole, v, tick)
		require.NoError(t, protocol.DecodeSnapshot(whole.Finish(&protocol.SnapshotHeader{Tick: tick}), s.Schema, &snap))
		ident := map[components.GhostID]bool{}
		for _, g := range snap.Ghosts {
			ident[g.ID] = g.Identity
			if !g.Identity {
				assert.True(t, g.HasBase, "ghost %d: known, so delta-encoded", g.ID)
				assert.Equal(t, gw.Tick(40), g.Base, "ghost %d", g.ID)
			}
		}
		return ident
	}
	v.Ack(tick, 1) // part 0 only
	ident := identities(tick + 1)
	for _, id := range parts[0] {
		assert.False(t, ident[id], "ghost %d of part 0: its identity acknowledged", id)
	}
	for _, later := range parts[1:] {
		for _, id := range later {
			assert.True(t, ident[id], "ghost %d of a later part: sent again with its identity", id)
		}
	}
	v.Ack(tick, 1<<1) // part 1 too
	ident = identities(tick + 2)
	for _, id := range parts[1] {
		assert.False(t, ident[id], "ghost %d of part 1: its identity acknowledged", id)
	}
	for _, id := range parts[2] {
		assert.True(t, ident[id], "ghost %d of part 2: still not acknowledged", id)
	}
}

// An acknowledgement of a snapshot the view no longer remembers (256
// snapshots later, the same ring slot) or never sent acknowledges nothing.
func TestViewAckOfForgottenSnapshots(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	for i := range 3 {
		spawn(t, srv, newEntity(w, Pos{}, HP{V: int32(i)}), s.crate, 0)
	}
	v := srv.NewView(1)
	sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(t, err)
	send := func(tick gw.Tick) {
		sw.Begin(tick)
		srv.WriteSnapshot(sw, v, tick)
		sw.Finish(&protocol.SnapshotHeader{Tick: tick})
	}
	send(math.MaxUint32)
	send(255) // 256 snapshots after 2³²−1, across the wrap: the same slot
	v.Ack(math.MaxUint32, 1)
	v.Ack(5, 1) // never sent
	send(256)
	assert.Equal(t, uint64(9), v.Stats().Identities, "nothing acknowledged: identities sent three times")
	assert.Equal(t, uint64(1), v.Stats().LateAcks, "the ack of a snapshot sent 256 ticks before, not the one never sent")
	v.Ack(255, 1)
	v.Ack(255, 1) // twice: no effect
	send(257)
	assert.Equal(t, uint64(9), v.Stats().Identities, "acknowledged")
}

// A view logs the records of about a round trip of snapshots, not of
// the 256 it remembers. A round trip growing a tick at a time widens the
// log before any acknowledgement comes back too late for it; one that
// jumps past what the log holds loses the acknowledgements of what it
// logged over, counted, as the log doubles to hold it; one longer than 256 ticks
// loses all of them, counted. Every acknowledgement that does arrive in time makes
// the next snapshot's baseline.
func TestViewLogFollowsTheRoundTrip(t *testing.T) {
	c := newCrateScene(t, 20, 2)
	lag := []int{2, 2}
	var snap protocol.Snapshot
	base := make([]gw.Tick, 2)  // each view's last snapshot's default baseline
	acked := make([]gw.Tick, 2) // and the newest snapshot it acknowledged
	check := func(i int, p []byte) {
		require.NoError(t, protocol.DecodeSnapshot(p, c.s.Schema, &snap))
		base[i] = snap.DefaultBase
	}
	step := func() {
		c.step(always, func(i int) int { return lag[i] }, check)
		for i := range acked {
			if int(c.tick) > lag[i] {
				acked[i] = max(acked[i], c.tick-gw.Tick(lag[i]))
			}
		}
	}
	for range 400 { // view 1's round trip grows a tick every 4 ticks, to 90
		lag[1] = min(2+int(c.tick)/4, 90)
		want := slices.Clone(acked)
		step()
		if c.tick > 3 {
			require.Equal(t, want, base, "tick %d: the newest acknowledged snapshot is the baseline", c.tick)
		}
	}
	assert.Zero(t, c.vs[1].Stats().LateAcks, "a round trip growing slowly widens the log in time")

	lag[1] = 200 // at once: nothing newer than 90 ticks back is acknowledged for 110 ticks, then 200 ticks back
	for range 310 {
		step()
		if c.tick == 520 { // wider snapshots move the log again: what it lost stays lost
			for k := range 5 {
				e := newEntity(c.w, Pos{X: float32(-k)}, HP{V: int32(k)})
				spawn(t, c.srv, e, c.s.crate, 0)
				c.es = append(c.es, e)
			}
		}
	}
	// The first ack 200 ticks back (at tick 511) is past the log of 128
	// ticks, which doubles to 256 keeping ticks 384..511: the acks of
	// ticks 311..383 are late.
	assert.Equal(t, uint64(383-311+1), c.vs[1].Stats().LateAcks)
	want := acked[1]
	step()
	assert.Equal(t, c.tick-1-200, want, "acknowledged since")
	assert.Equal(t, want, base[1])

	lag[1] = 300 // past the 256 snapshots remembered: every ack is late
	before := c.vs[1].Stats().LateAcks
	for range 120 {
		step()
	}
	assert.Equal(t, before+20, c.vs[1].Stats().LateAcks, "200 to 300 ticks: 100 ticks of nothing new, then 20 acks sent 300 ticks before")
	assert.Zero(t, c.vs[0].Stats().LateAcks)
}

func snapIDs(s *protocol.Snapshot) []components.GhostID {
	var ids []components.GhostID
	for _, g := range s.Ghosts {
		ids = append(ids, g.ID)
	}
	return ids
}

// serializeCalls counts Counted.Serialize calls.
var serializeCalls int

// Counted is a replicated component that counts how often it is coded.
type Counted struct{ V int32 }

func (c *Counted) Serialize(s *codec.Stream) {
	serializeCalls++
	codec.Int(s, &c.V, -100, 100)
}

// A changed ghost is quantized and encoded once per tick, whatever the
// number of connections: the others get its bits spliced. A ghost that did
// not change is neither quantized nor encoded again, and once every client
// acknowledged it at rest, no snapshot holds it.
func TestWriteSnapshotEncodesOncePerTick(t *testing.T) {
	var b codec.SchemaBuilder
	counted := wiretest.Component[Counted](&b)
	typ := b.GhostType("counted", counted)
	schema, err := b.Build()
	require.NoError(t, err)
	w := gw.NewWorld(gw.WorldOptions{})
	srv := ghostreg.NewServerRegister(ghostreg.Bind(w, schema))
	const n, conns = 20, 8
	cid := ecs.ComponentID[Counted](w.Arche())
	var es []ecs.Entity
	for i := range n {
		e := w.Arche().NewEntityWith(ecs.Component{ID: cid, Comp: &Counted{V: int32(i)}})
		_, err := srv.Spawn(e, typ, 0)
		require.NoError(t, err)
		es = append(es, e)
	}
	var views []*ghostreg.View
	var clients []*ghostreg.ClientRegister
	for c := range conns {
		views = append(views, srv.NewView(components.ConnID(c+1)))
		clients = append(clients, ghostreg.NewClientRegister(ghostreg.Bind(gw.NewWorld(gw.WorldOptions{}), schema)))
	}
	sw, err := protocol.NewSnapshotWriter(schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	value := func(i int, tick gw.Tick) int32 { return int32(i) + int32(min(tick, 4)) } // moves until tick 4
	for tick := gw.Tick(1); tick <= 8; tick++ {
		for i, e := range es {
			(*Counted)(w.Arche().Get(e, cid)).V = value(i, tick)
		}
		before := serializeCalls
		srv.Quantize()
		quantized := serializeCalls - before
		encodes, held := 0, 0
		for c, v := range views {
			sw.Begin(tick)
			before := serializeCalls
			srv.WriteSnapshot(sw, v, tick)
			encodes += serializeCalls - before
			require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), schema, &snap))
			clients[c].Complete(&snap)
			held += len(snap.Ghosts)
			for gi, g := range snap.Ghosts {
				assert.Equal(t, value(int(g.ID)-1, tick), (*Counted)(snap.Value(gi, 0)).V, "tick %d: ghost %d spliced intact", tick, g.ID)
			}
			v.Ack(tick, 1)
		}
		switch {
		case tick <= 4: // every ghost changed: quantized once, and quantized and encoded once more for the wire
			assert.Equalf(t, n, quantized, "tick %d: quantized", tick)
			assert.Equalf(t, 2*n, encodes, "tick %d: encodes for %d connections", tick, conns)
			assert.Equalf(t, n*conns, held, "tick %d: every ghost to every connection", tick)
		case tick == 5: // at rest: one record each says so
			assert.Zerof(t, quantized+encodes, "tick %d: nothing changed, nothing coded", tick)
			assert.Equalf(t, n*conns, held, "tick %d: every client told the ghosts rest", tick)
		default:
			assert.Zerof(t, quantized+encodes, "tick %d: nothing changed, nothing coded", tick)
			assert.Zerof(t, held, "tick %d: every client holds every ghost at rest", tick)
		}
	}
}

// Mark is a component the game adds to some ghosts, not replicated: it
// puts them in another archetype.
type Mark struct{ Team uint8 }

// Change detection compares whole stretches of values at once (runs of
// ghosts whose values follow one another in the world's storage). With
// ghosts spread over two archetypes and holes from destroyed entities
// (arche moves the last entity of an archetype into the hole, out of
// ghost order), exactly the ghosts changed in a tick are quantized and
// encoded, and the client gets their values.
func TestChangeDetectionFindsEveryChangedGhost(t *testing.T) {
	var b codec.SchemaBuilder
	counted := wiretest.Component[Counted](&b)
	typ := b.GhostType("counted", counted)
	schema, err := b.Build()
	require.NoError(t, err)
	w := gw.NewWorld(gw.WorldOptions{})
	srv := ghostreg.NewServerRegister(ghostreg.Bind(w, schema))
	a := w.Arche()
	cid, mid := ecs.ComponentID[Counted](a), ecs.ComponentID[Mark](a)
	const n = 300
	var es []ecs.Entity
	for i := range n {
		comps := []ecs.Component{{ID: cid, Comp: &Counted{V: int32(i % 90)}}}
		if i%3 == 0 {
			comps = append(comps, ecs.Component{ID: mid, Comp: &Mark{Team: 1}})
		}
		e := a.NewEntityWith(comps...)
		_, err := srv.Spawn(e, typ, 0)
		require.NoError(t, err)
		es = append(es, e)
	}
	v := srv.NewView(1)
	client := ghostreg.NewClientRegister(ghostreg.Bind(gw.NewWorld(gw.WorldOptions{}), schema))
	sw, err := protocol.NewSnapshotWriter(schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	got := map[components.GhostID]int32{} // the values each snapshot carried
	send := func(tick gw.Tick) (coded int) {
		sw.Begin(tick)
		before := serializeCalls
		srv.WriteSnapshot(sw, v, tick)
		coded = serializeCalls - before
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), schema, &snap))
		client.Complete(&snap)
		clear(got)
		for gi, g := range snap.Ghosts {
			if g.Present != 0 {
				got[g.ID] = (*Counted)(snap.Value(gi, 0)).V
			}
		}
		v.Ack(tick, 1)
		return coded
	}
	srv.Quantize()
	send(1)
	for _, i := range []int{50, 51, 200, 3} { // holes, both archetypes
		a.RemoveEntity(es[i])
		es[i] = ecs.Entity{}
	}
	tick := gw.Tick(2)
	for ; len(snap.Ghosts) > 0 || len(snap.Despawned) > 0; tick++ { // until the client holds every ghost at rest
		require.Less(t, tick, gw.Tick(20), "the spawns take a few snapshots of 1,200 bytes")
		srv.Quantize()
		send(tick)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	want := map[components.GhostID]int32{}
	for end := tick + 40; tick < end; tick++ {
		clear(want)
		for range rng.IntN(12) {
			i := rng.IntN(n)
			if es[i].IsZero() {
				continue
			}
			c := (*Counted)(a.Get(es[i], cid))
			c.V = (c.V + int32(1+rng.IntN(5))) % 90 // within Counted's range
			want[components.GhostID(i+1)] = c.V
		}
		before := serializeCalls
		srv.Quantize()
		assert.Equalf(t, len(want), serializeCalls-before, "tick %d: quantized exactly the changed ghosts", tick)
		assert.Equalf(t, 2*len(want), send(tick), "tick %d: quantized for the wire and encoded exactly the changed ghosts", tick)
		assert.Equalf(t, want, got, "tick %d: the changed ghosts and their values", tick)
	}
}

// oneCrate is a server register holding one crate, and send, which
// writes a view's snapshot of a tick (the world at that tick, quantized),
// decodes it, has the client acknowledge it and returns its records.
func oneCrate(t *testing.T) (*gw.World, ecs.Entity, *ghostreg.ServerRegister, func(*ghostreg.View, gw.Tick) []protocol.GhostState) {
	t.Helper()
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	e := newEntity(w, Pos{1, 2}, HP{V: 3})
	spawn(t, srv, e, s.crate, 0)
	sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	return w, e, srv, func(v *ghostreg.View, tick gw.Tick) []protocol.GhostState {
		w.SetTick(tick)
		srv.Quantize()
		sw.Begin(tick)
		srv.WriteSnapshot(sw, v, tick)
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), s.Schema, &snap))
		v.Ack(tick, 1)
		return snap.Ghosts
	}
}

// A ghost at rest for more than 2³¹ ticks (6 months at 128 Hz) is long at
// rest for a client that joins then: its spawn record says it rests, it
// leaves the client's snapshots once that is acknowledged, and when one
// of its components changes, that one alone is sent.
func TestGhostAtRestForMonths(t *testing.T) {
	for _, later := range []gw.Tick{100 + 1<<31 + 5, 100 + 3<<30, gw.Tick(100).Add(-300)} { // the last: 2³² − 300 ticks on
		w, e, srv, send := oneCrate(t)
		early := srv.NewView(1)
		send(early, 100) // the crate's components change (are first encoded) at 100
		early.Close()

		v := srv.NewView(2)
		tick := later
		g := send(v, tick)
		require.Len(t, g, 1, "%d: the spawn", later)
		assert.False(t, g[0].HasBase)
		assert.True(t, g[0].Rest, "%d: unchanged since long before: at rest", later)
		tick++
		assert.Empty(t, send(v, tick), "%d: at rest, acknowledged: nothing more", later)
		tick++
		getHP(w, e).V++
		g = send(v, tick)
		require.Len(t, g, 1, "%d: the change", later)
		assert.True(t, g[0].HasBase)
		assert.Equal(t, uint32(1), g[0].Present, "%d: HP (the crate's first component) alone", later)
	}
}

// A ghost first encoded 2³² ticks ago and more, its born tick wrapped to
// just before now, still gets its acknowledgements: the register moves
// an old ghost's born tick up to 2³⁰ ticks back, so an ack of a snapshot
// from before the wrapped tick does not read as one from before the
// ghost's first encoding (a dead ghost's record in its index).
func TestAcksOfAGhostOlderThanTheTicksWrap(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	spawn(t, srv, newEntity(w, Pos{1, 2}, HP{V: 3}), s.crate, 0)
	sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	write := func(v *ghostreg.View, tick gw.Tick) []protocol.GhostState {
		w.SetTick(tick)
		srv.Quantize()
		sw.Begin(tick)
		srv.WriteSnapshot(sw, v, tick)
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), s.Schema, &snap))
		return snap.Ghosts
	}
	early := srv.NewView(1)
	write(early, 1)       // first encoded at 1
	write(early, 1+1<<31) // half the ticks on: the register sees it old
	early.Close()

	v := srv.NewView(2)
	first := gw.Tick(0).Add(-2) // 2³² − 3 ticks after 1: the born tick reads as 3 ahead
	for i := range 6 {
		require.Len(t, write(v, first.Add(i)), 1)
	}
	v.Ack(first, 1) // at tick 3, of tick 2³² − 2: 5 ticks back, the born tick 2 back when wrapped
	got := write(v, first.Add(6))
	require.Len(t, got, 1)
	assert.False(t, got[0].Identity, "the identity was acknowledged")
	assert.Equal(t, uint64(6), v.Stats().Identities)
}

// Snapshots of changing sizes (1 to 40 records, the sizes landing on each
// of the 256 remembered snapshots in turn) stop allocating once every one
// has been used twice: a record list that grows grows to the most any of
// the view's holds.
func TestSnapshotsOfChangingSizesStopAllocating(t *testing.T) {
	const n = 40
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	srv := ghostreg.NewServerRegister(b)
	var es []ecs.Entity
	for i := range n {
		e := newEntity(w, Pos{float32(i), 0}, HP{V: 1})
		spawn(t, srv, e, s.crate, 0)
		es = append(es, e)
	}
	v := srv.NewView(1)
	sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(t, err)
	tick := gw.Tick(100)
	step := func() {
		tick++
		w.SetTick(tick)
		for i := range int(uint32(tick)*7%n) + 1 { // a varying number of ghosts change
			getHP(w, es[i]).V++
		}
		srv.Quantize()
		sw.Begin(tick)
		srv.WriteSnapshot(sw, v, tick)
		sw.Finish(&protocol.SnapshotHeader{Tick: tick})
		v.Ack(tick, 1)
	}
	for range 512 {
		step()
	}
	// AllocsPerRun averages over the 256 steps, so an allocation of the
	// runtime's own during them (a timer, a GC worker) does not count.
	assert.Zero(t, testing.AllocsPerRun(256, step))
}

// A snapshot with more records than any before moves every remembered
// snapshot's records to a larger shared store: an acknowledgement of an
// older snapshot, arriving after, still confirms the identities it held.
func TestAnOlderSnapshotsRecordsSurviveALargerOne(t *testing.T) {
	const n = 40
	p := newPair(t, 1)
	for i := range n {
		p.spawn(t, p.s.crate, 0, Pos{float32(i), 0}, HP{V: 1})
	}
	v := p.srv.NewView(1)
	small, err := protocol.NewSnapshotWriter(p.s.Schema, 120)
	require.NoError(t, err)
	full, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
	require.NoError(t, err)
	var snap protocol.Snapshot
	send := func(sw *protocol.SnapshotWriter, tick gw.Tick) []protocol.GhostState {
		p.sw.SetTick(tick)
		p.srv.Quantize()
		sw.Begin(tick)
		p.srv.WriteSnapshot(sw, v, tick)
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), p.s.Schema, &snap))
		return slices.Clone(snap.Ghosts)
	}
	first := send(small, 101)
	require.NotEmpty(t, first)
	require.Less(t, len(first), 16, "a small first snapshot")
	require.Len(t, send(full, 102), n, "then every crate: a record list larger than any before")
	v.Ack(101, 1) // late, after the lists moved
	known := map[components.GhostID]bool{}
	for _, g := range first {
		known[g.ID] = true
	}
	for _, g := range send(full, 103) {
		assert.Equalf(t, !known[g.ID], g.Identity, "ghost %d: identity sent until acknowledged, not after", g.ID)
	}
}

// A baseline further back than protocol.MaxBaseDistance is forgotten
// when its ghost's turn comes, so 2³² ticks later, when its wrapping tick
// reads as a recent one again, the ghost's next record goes in full, not
// as a delta against a state of 2³² ticks before.
func TestOldBaselinesAreForgottenBeforeTheyWrap(t *testing.T) {
	w, e, srv, sendTo := oneCrate(t)
	v := srv.NewView(1)
	send := func(tick gw.Tick) []protocol.GhostState { return sendTo(v, tick) }
	require.Len(t, send(100), 1, "the spawn, acknowledged: the baseline is 100")
	require.Len(t, send(101), 1, "the rest record")
	require.Empty(t, send(102), "at rest")
	send(102 + protocol.MaxBaseDistance) // the baseline is too old now, and the one ghost's turn comes every tick
	getHP(w, e).V++
	g := send(111) // 2³² + 10 ticks after 101 too: the baseline's tick would read as 10 ticks back
	require.Len(t, g, 1)
	assert.False(t, g[0].HasBase, "a full record, not a delta against the state of 2³² ticks before")
}

// A spawn record says its ghost rests only once the ghost has been
// unchanged for a while: a client joining sees a ghost that just stopped
// (a player at its spawn point) as any client would, and holds a ghost
// long at rest from its first record, acknowledged once.
func TestSpawnRecordRestsOnlyAfterAQuietSpell(t *testing.T) {
	w, e, srv, send := oneCrate(t)
	early := srv.NewView(1)
	send(early, 100) // the crate's components change (are first encoded) at 100
	early.Close()

	fresh := srv.NewView(2)
	g := send(fresh, 101)
	require.Len(t, g, 1)
	assert.False(t, g[0].Rest, "changed a tick ago: not said to rest")
	fresh.Close()

	late := srv.NewView(3)
	g = send(late, 300)
	require.Len(t, g, 1)
	assert.True(t, g[0].Rest, "unchanged for 200 ticks: at rest from its first record")
	assert.Empty(t, send(late, 301), "held, acknowledged: nothing more")
	getHP(w, e).V++
	assert.Len(t, send(late, 302), 1, "until it changes")
}

// A ghost spawned after another died takes the dead one's place in every
// view's state: an acknowledgement of a snapshot that held the dead one
// must not tell the view the new one is known, nor give it a baseline.
func TestViewStateOfADeadGhostIsNotTheNextOnes(t *testing.T) {
	// The new ghost takes the dead one's index; the late ack of the old
	// one's snapshot must not acknowledge the new one's identity, whether
	// it comes before the new one's first snapshot or after it.
	for _, sentFirst := range []bool{false, true} {
		s := newTestSchema(t)
		w, b := newServerWorld(t, s)
		srv := ghostreg.NewServerRegister(b)
		old := newEntity(w, Pos{X: 1}, HP{V: 1})
		spawn(t, srv, old, s.crate, 0)
		v := srv.NewView(1)
		sw, err := protocol.NewSnapshotWriter(s.Schema, 0)
		require.NoError(t, err)
		var snap protocol.Snapshot
		send := func(tick gw.Tick) *protocol.Snapshot {
			sw.Begin(tick)
			srv.WriteSnapshot(sw, v, tick)
			require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), s.Schema, &snap))
			return &snap
		}
		send(10) // the old ghost with its identity, not acknowledged yet
		require.True(t, srv.Despawn(old))
		e := newEntity(w, Pos{X: 2}, HP{V: 2})
		spawn(t, srv, e, s.crate, 0)
		tick := gw.Tick(11)
		if sentFirst {
			require.Len(t, send(tick).Ghosts, 1)
			tick++
		}
		v.Ack(10, 1)
		got := send(tick)
		require.Len(t, got.Ghosts, 1)
		assert.True(t, got.Ghosts[0].Identity, "sent first %v: the new ghost is sent with its identity", sentFirst)
		assert.False(t, got.Ghosts[0].HasBase, "sent first %v: and in full", sentFirst)
		identities := uint64(2)
		if sentFirst {
			identities = 3
		}
		assert.Equal(t, identities, v.Stats().Identities, "sent first %v", sentFirst)
		assert.Equal(t, 1, v.PendingDespawns(), "sent first %v: the old one's despawn", sentFirst)
	}
}

// A view that notes plain records as bits of its ghosts' state writes
// the bytes one that logs every record writes: same world, same
// acknowledgements (lost, late, repeated, out of order, of some parts),
// ghosts moving, stopping, dying, and waiting for room far longer than
// the plain bits reach (importance down to MinImportance in a crowded
// snapshot), and a client acknowledging nothing for longer than that,
// so their baselines come from folded bits.
func TestPlainRecordsAckAsLoggedOnes(t *testing.T) {
	const views, ghosts, ticks = 4, 100, 900 // more ghosts than the 64 ticks View.expire takes to fold each one
	s := newTestSchema(t)
	scene := newTwinScene(t, s, 2, views, ghosts) // 0: plain records as bits; 1: every record logged
	worlds := scene.worlds
	vs := make([][]*ghostreg.View, len(worlds))
	writers := make([]*protocol.SnapshotWriter, views)
	for i := range views {
		for j, wd := range worlds {
			v := wd.srv.NewView(components.ConnID(i + 1))
			if j == 1 {
				ghostreg.LogEveryRecord(v)
			}
			if i == 0 { // a crowded view: the least important ghosts wait about 64 times as long
				w := wd.w
				v.Importance = func(e ecs.Entity) float32 {
					if getHP(w, e).V%3 == 0 {
						return ghostreg.MinImportance
					}
					return 1
				}
			}
			vs[j] = append(vs[j], v)
		}
		size := 0
		if i < 2 {
			size = 120 // not every moving ghost fits
		}
		var err error
		writers[i], err = protocol.NewSnapshotWriter(s.Schema, size)
		require.NoError(t, err)
	}
	rng := rand.New(rand.NewPCG(61, 62))
	type ack struct {
		at, tick gw.Tick
		view     int
		parts    uint8
	}
	var acks []ack
	for n := range ticks {
		tick := gw.Tick(1<<32 - 300).Add(n) // across the wrap
		scene.advance(t, s, rng, tick, 30, 40)
		for i := range views {
			sw := writers[i]
			parts := 1
			if i == 1 {
				parts = protocol.MaxSnapshotParts // the rest in later parts, whose records are always logged
			}
			for part := range parts {
				var got []byte
				deferred := 0
				for j, wd := range worlds {
					sw.Begin(tick)
					deferred = wd.srv.WritePart(sw, vs[j][i], tick, part)
					p := sw.Finish(&protocol.SnapshotHeader{Tick: tick, Part: uint8(part)})
					if j == 0 {
						got = append(got[:0], p...)
						continue
					}
					require.Equal(t, p, got, "view %d, tick %d, part %d", i, tick, part)
				}
				outage := i == 2 && n%200 >= 150 // 50 ticks of nothing acknowledged, longer than the plain bits reach
				if rng.IntN(5) > 0 && !outage {  // lost otherwise
					a := ack{at: tick + gw.Tick(1+rng.IntN(11)), tick: tick, view: i, parts: 1 << part}
					acks = append(acks, a)
					if rng.IntN(10) == 0 { // repeated, later
						a.at += gw.Tick(1 + rng.IntN(5))
						acks = append(acks, a)
					}
				}
				if deferred == 0 {
					break
				}
			}
		}
		kept := acks[:0]
		for _, a := range acks {
			if a.at == tick {
				for j := range worlds {
					vs[j][a.view].Ack(a.tick, a.parts)
				}
			} else {
				kept = append(kept, a)
			}
		}
		acks = kept
	}
	for i := range views {
		plain, logged := vs[0][i], vs[1][i]
		assert.Equal(t, logged.Stats(), plain.Stats(), "view %d", i)
		assert.Equal(t, logged.Stats().Records, ghostreg.Logged(logged), "view %d: every record logged", i)
		if i == 1 {
			assert.Less(t, ghostreg.Logged(plain), ghostreg.Logged(logged), "view 1: its first parts' records plain")
		} else {
			assert.Less(t, ghostreg.Logged(plain), plain.Stats().Records/2, "view %d: most records plain", i)
		}
	}
	assert.Greater(t, vs[0][0].Stats().MaxStaleness, 64, "a ghost waited longer than its plain bits reach")
}

// An acknowledgement of a snapshot with plain records that comes back
// plainTicks (32) ticks or more after it acknowledges nothing, counted:
// the ghost's bits no longer reach it. The log widens, so the next
// records are logged.
func TestLateAckOfPlainRecordsIsCounted(t *testing.T) {
	c := newCrateScene(t, 1, 1)
	v := c.vs[0]
	var snap protocol.Snapshot
	var last protocol.GhostState
	keep := func(_ int, p []byte) {
		require.NoError(t, protocol.DecodeSnapshot(p, c.s.Schema, &snap))
		require.Len(t, snap.Ghosts, 1)
		last = snap.Ghosts[0]
	}
	for c.tick < 10 { // acknowledged a tick later: the crate is known, its records plain
		c.step(always, func(int) int { return 1 }, keep)
	}
	require.True(t, last.HasBase)
	logged := ghostreg.Logged(v)
	for c.tick < 50 { // nothing acknowledged
		c.step(always, func(int) int { return 1 << 20 }, keep)
	}
	assert.Equal(t, logged, ghostreg.Logged(v), "plain records are not logged")
	v.Ack(50-32, 1)
	assert.Equal(t, uint64(1), v.Stats().LateAcks)
	v.Ack(50-31, 1)
	assert.Equal(t, uint64(1), v.Stats().LateAcks, "31 ticks back: in time")
	c.step(always, func(int) int { return 1 << 20 }, keep)
	assert.Equal(t, gw.Tick(50-31), last.Base, "the newest snapshot acknowledged in time is the baseline")
	assert.Equal(t, logged+1, ghostreg.Logged(v), "the log widened: records are logged again")
}

// A ghost's plain bits are dropped once they are too old to be
// acknowledged, before their ticks can read as recent again: 2³² ticks
// after a run of plain records, a snapshot of the same tick number
// acknowledged is not taken for one that held the ghost.
func TestPlainBitsAreForgottenBeforeTheyWrap(t *testing.T) {
	w, e, srv, sendTo := oneCrate(t)
	v := srv.NewView(1)
	send := func(tick gw.Tick) []protocol.GhostState { return sendTo(v, tick) }
	require.Len(t, send(100), 1, "the spawn")
	for tick := gw.Tick(101); tick <= 110; tick++ {
		getHP(w, e).V++
		require.Len(t, send(tick), 1)
	}
	require.Equal(t, uint64(1), ghostreg.Logged(v), "the spawn logged, the moves plain")
	require.Len(t, send(111), 1, "the rest record")
	require.Empty(t, send(112), "at rest")
	for _, tick := range []gw.Tick{112 + 1<<30, 112 + 2<<30, 112 + 3<<30, 109} { // on to 2³² ticks after 109
		require.Empty(t, send(tick))
	}
	getHP(w, e).V++
	g := send(110)
	require.Len(t, g, 1)
	assert.False(t, g[0].HasBase, "a full record, not a delta against the snapshot of 109 2³² ticks later")
}

// The pending set stays in ID order, each ghost once, as ghosts come to
// rest and move again, a few at a time (merged in place) or many (merged
// through a second buffer), so connections list their records alike.
func TestPendingSetStaysInIDOrder(t *testing.T) {
	c := newCrateScene(t, 60, 1)
	rng := rand.New(rand.NewPCG(71, 72))
	moving := make([]bool, len(c.es))
	for range 400 {
		flips := 1 + rng.IntN(3)
		if rng.IntN(10) == 0 {
			flips = 30 // many at once
		}
		for range flips {
			k := rng.IntN(len(moving))
			moving[k] = !moving[k]
		}
		c.step(func(k int) bool { return moving[k] }, func(int) int { return 1 }, nil)
		ids := ghostreg.PendingIDs(c.vs[0])
		require.True(t, slices.IsSortedFunc(ids, func(a, b components.GhostID) int { return int(a) - int(b) }), "tick %d: %v", c.tick, ids)
		require.Len(t, slices.Compact(slices.Clone(ids)), len(ids), "tick %d: each once", c.tick)
		for k, m := range moving {
			if m {
				require.Contains(t, ids, components.GhostID(k+1), "tick %d: a moving crate is pending", c.tick)
			}
		}
	}
}
