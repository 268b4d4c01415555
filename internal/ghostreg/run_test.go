package ghostreg_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// Connections sharing a register (record bodies and runs written once,
// copied into each) get the bytes each would get alone in a register of
// its own: same world, same acknowledgements (late, lost, out of order),
// ghosts moving, stopping, spawning in a dead one's place, and snapshots
// too small for every ghost.
func TestSharedRecordsWriteWhatEachConnectionAloneWrites(t *testing.T) {
	const views, ghosts, ticks = 6, 40, 400
	s := newTestSchema(t)
	scene := newTwinScene(t, s, views+1, views, ghosts) // register 0: every view; i: view i alone
	worlds := scene.worlds
	shared := make([]*ghostreg.View, views)
	alone := make([]*ghostreg.View, views)
	writers := make([]*protocol.SnapshotWriter, views)
	for i := range views {
		shared[i] = worlds[0].srv.NewView(components.ConnID(i + 1))
		alone[i] = worlds[i+1].srv.NewView(components.ConnID(i + 1))
		size := 0
		if i == 0 {
			size = 160 // not every moving ghost fits: priority order, runs that do not fit
		}
		var err error
		writers[i], err = protocol.NewSnapshotWriter(s.Schema, size)
		require.NoError(t, err)
	}
	rng := rand.New(rand.NewPCG(51, 52))
	type ack struct {
		at, tick gw.Tick
		view     int
	}
	var acks []ack
	for n := range ticks {
		tick := gw.Tick(1<<32 - 100).Add(n) // across the wrap
		scene.advance(t, s, rng, tick, 20, 25)
		for i := range views {
			sw := writers[i]
			sw.Begin(tick)
			worlds[0].srv.WriteSnapshot(sw, shared[i], tick)
			got := append([]byte(nil), sw.Finish(&protocol.SnapshotHeader{Tick: tick})...)
			sw.Begin(tick)
			worlds[i+1].srv.WriteSnapshot(sw, alone[i], tick)
			require.Equal(t, sw.Finish(&protocol.SnapshotHeader{Tick: tick}), got, "view %d, tick %d", i, tick)
			if rng.IntN(5) > 0 { // lost otherwise
				acks = append(acks, ack{at: tick + gw.Tick(1+rng.IntN(2+i)), tick: tick, view: i})
			}
		}
		kept := acks[:0]
		for _, a := range acks {
			if a.at == tick {
				shared[a.view].Ack(a.tick, 1)
				alone[a.view].Ack(a.tick, 1)
			} else {
				kept = append(kept, a)
			}
		}
		acks = kept
	}
	copied, _ := worlds[0].srv.RunRecords()
	assert.Greater(t, copied, uint64(views*ticks), "records copied from runs")
	for i := range views {
		copied, runless := worlds[i+1].srv.RunRecords()
		assert.Zero(t, copied+runless, "a connection alone writes its records")
	}
}

// crateScene is crates in a register with views connections, for the
// record runs' tests.
type crateScene struct {
	s    *testSchema
	w    *gw.World
	srv  *ghostreg.ServerRegister
	es   []ecs.Entity
	vs   []*ghostreg.View
	sw   *protocol.SnapshotWriter
	tick gw.Tick
}

func newCrateScene(t *testing.T, crates, views int) *crateScene {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	c := &crateScene{s: s, w: w, srv: ghostreg.NewServerRegister(b)}
	for k := range crates {
		e := newEntity(w, Pos{X: float32(k)}, HP{V: int32(k)})
		spawn(t, c.srv, e, s.crate, 0)
		c.es = append(c.es, e)
	}
	for i := range views {
		c.vs = append(c.vs, c.srv.NewView(components.ConnID(i+1)))
	}
	var err error
	c.sw, err = protocol.NewSnapshotWriter(s.Schema, 0)
	require.NoError(t, err)
	return c
}

// step moves crate k when move(k) holds, then writes each view's
// snapshot of the next tick, hands it to check when set, and
// acknowledges the snapshot lag(i) ticks back for view i.
func (c *crateScene) step(move func(k int) bool, lag func(i int) int, check func(i int, p []byte)) {
	c.tick++
	c.w.SetTick(c.tick)
	for k, e := range c.es {
		if p := getPos(c.w, e); move(k) {
			if p.X += 0.5; p.X > 99 { // within posQ's range: each move changes it
				p.X = -99
			}
		}
	}
	c.srv.Quantize()
	for i, v := range c.vs {
		c.sw.Begin(c.tick)
		c.srv.WriteSnapshot(c.sw, v, c.tick)
		p := c.sw.Finish(&protocol.SnapshotHeader{Tick: c.tick})
		if check != nil {
			check(i, p)
		}
		if acked := c.tick - gw.Tick(lag(i)); acked >= 1 {
			v.Ack(acked, 1)
		}
	}
}

func always(int) bool { return true }

// A tick keeps at most 8 runs: connections with a ninth and tenth
// baseline distance write their records one at a time, counted.
func TestRecordRunsAreCapped(t *testing.T) {
	const views = 10
	c := newCrateScene(t, 20, views)
	var snap protocol.Snapshot
	for range 60 {
		_, before := c.srv.RunRecords()
		c.step(always, func(i int) int { return i }, func(i int, p []byte) { // view i acknowledges i ticks late: distance i+1
			require.NoError(t, protocol.DecodeSnapshot(p, c.s.Schema, &snap))
			require.Len(t, snap.Ghosts, len(c.es), "view %d, tick %d", i, c.tick)
		})
		if _, after := c.srv.RunRecords(); c.tick > views+1 {
			assert.Equal(t, uint64(views-8), after-before, "tick %d: the ninth and tenth distance have no run", c.tick)
		}
	}
	copied, _ := c.srv.RunRecords()
	assert.Positive(t, copied)
}

// Record runs grow together: once one run has grown to a tick's records,
// connections spread over all 8 runs allocate nothing, whichever run
// their baseline distance lands on. The fewest allocations of three
// fresh registers count, so a stray runtime allocation cannot fail it.
func TestRecordRunsGrowTogether(t *testing.T) {
	least := uint64(math.MaxUint64)
	for range 3 {
		least = min(least, spreadRunAllocs(t))
	}
	assert.Zero(t, least)
}

// spreadRunAllocs runs 10 connections one tick behind, then at ten
// baseline distances, and returns the allocations of the second part.
func spreadRunAllocs(t *testing.T) uint64 {
	const views = 10
	c := newCrateScene(t, 60, views)
	for range 30 { // every connection one tick behind: one run, grown
		c.step(always, func(int) int { return 0 }, nil)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 30 { // ten distances: all 8 runs
		c.step(always, func(i int) int { return i }, nil)
	}
	runtime.ReadMemStats(&after)
	copied, runless := c.srv.RunRecords()
	assert.Greater(t, copied, uint64(30*views*len(c.es)))
	assert.Positive(t, runless, "ten distances, eight runs")
	return after.Mallocs - before.Mallocs
}

// Record runs grow to the largest tick's and then allocate nothing, on
// whichever of the 8 runs a baseline distance lands.
func TestRecordRunsStopAllocating(t *testing.T) {
	const views = 10
	c := newCrateScene(t, 60, views)
	step := func() {
		c.step(func(k int) bool { return (int(c.tick)+k)%3 != 0 }, // a third rest each tick: runs of changing lengths
			func(i int) int { return (i + int(c.tick)/7) % views }, nil) // distances move between the runs
	}
	for range 200 {
		step()
	}
	assert.Zero(t, testing.AllocsPerRun(200, step))
	copied, runless := c.srv.RunRecords()
	assert.Positive(t, copied)
	assert.Positive(t, runless)
}

// A ghost that moves again after a rest has, at each connection, the
// snapshot that said it rests as its baseline, not the default one: its
// record comes after those copied from the tick's run, so it does not
// split their stretch.
func TestRecordsAgainstOtherBaselinesComeAfterTheRun(t *testing.T) {
	const crates, views, still = 10, 3, 3
	c := newCrateScene(t, crates, views)
	lag := func(int) int { return 1 }
	resting := func(k int) bool { return k != still }
	for range 8 {
		c.step(always, lag, nil)
	}
	for range 80 { // long enough for every view to hold it at rest
		c.step(resting, lag, nil)
	}
	var snap protocol.Snapshot
	checked := 0
	c.step(always, lag, func(i int, p []byte) {
		require.NoError(t, protocol.DecodeSnapshot(p, c.s.Schema, &snap))
		require.Len(t, snap.Ghosts, crates, "view %d", i)
		var ids []components.GhostID
		for _, g := range snap.Ghosts {
			ids = append(ids, g.ID)
		}
		want := []components.GhostID{1, 2, 3, 5, 6, 7, 8, 9, 10, 4}
		assert.Equal(t, want, ids, "view %d: the default baseline's records first, in ID order", i)
		last := snap.Ghosts[crates-1]
		require.True(t, last.HasBase, "view %d", i)
		assert.True(t, last.Base.Before(c.tick-1), "view %d: ghost 4 against the snapshot that said it rests (%d), not the default %d", i, last.Base, c.tick-1)
		checked++
	})
	assert.Equal(t, views, checked)
	copied, _ := c.srv.RunRecords()
	assert.Positive(t, copied)
}

// twinScene is one scene of ghosts in several registers, for tests that
// compare what they write: the first players ghosts are players (ghost k
// owned by connection k+1), the others crates, moved, killed and
// respawned alike in every register.
type twinScene struct {
	worlds  []*twinWorld
	players int
	moving  []bool
}

type twinWorld struct {
	w   *gw.World
	srv *ghostreg.ServerRegister
	es  []ecs.Entity
}

func newTwinScene(t *testing.T, s *testSchema, registers, players, ghosts int) *twinScene {
	c := &twinScene{players: players}
	for range registers {
		w, b := newServerWorld(t, s)
		c.worlds = append(c.worlds, &twinWorld{w: w, srv: ghostreg.NewServerRegister(b)})
	}
	for range ghosts {
		c.spawn(t, s)
	}
	return c
}

// spawn adds the next ghost to every register, moving.
func (c *twinScene) spawn(t *testing.T, s *testSchema) {
	k := len(c.moving)
	for _, wd := range c.worlds {
		typ, owner := s.crate, components.ConnID(0)
		if k < c.players {
			typ, owner = s.player, components.ConnID(k+1)
		}
		e := newEntity(wd.w, Pos{X: float32(k % 90)}, HP{V: int32(k)})
		spawn(t, wd.srv, e, typ, owner)
		wd.es = append(wd.es, e)
	}
	c.moving = append(c.moving, true)
}

// advance sets every world to tick, starts or stops each ghost with odds
// 1 in flip, moves the moving ones (ghost k by dx·(k%5+1), within posQ's
// range), kills a crate and spawns one in its place with odds 1 in
// respawn, and quantizes.
func (c *twinScene) advance(t *testing.T, s *testSchema, rng *rand.Rand, tick gw.Tick, flip, respawn int) {
	for k := range c.moving {
		if rng.IntN(flip) == 0 {
			c.moving[k] = !c.moving[k]
		}
	}
	dx, kill := rng.Float32(), rng.IntN(respawn) == 0
	victim := c.players + rng.IntN(len(c.worlds[0].es)-c.players)
	for _, wd := range c.worlds {
		wd.w.SetTick(tick)
		for k, e := range wd.es {
			if c.moving[k] && wd.w.Arche().Alive(e) {
				if p := getPos(wd.w, e); p.X+dx*float32(k%5+1) < 99 {
					p.X += dx * float32(k%5+1)
				} else {
					p.X = -99
				}
			}
		}
		if kill && wd.w.Arche().Alive(wd.es[victim]) {
			require.True(t, wd.srv.Despawn(wd.es[victim]))
			wd.w.Arche().RemoveEntity(wd.es[victim])
		}
	}
	if kill {
		c.spawn(t, s)
	}
	for _, wd := range c.worlds {
		wd.srv.Quantize()
	}
}
