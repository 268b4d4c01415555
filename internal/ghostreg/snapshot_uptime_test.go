package ghostreg_test

import (
	"math"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// The far end of a long match: 64 players' snapshots are as large an hour
// (216,000 ticks) after the start as at the start, whether the server
// starts at tick 1 or just before the 2³² wrap, and whether the connection
// IDs are small or past 127 (where a variable-length owner would grow).
// Once the identities are acknowledged (the first snapshot has room for 50
// of the 64 new players, the second for the other 14 and the rest),
// every snapshot holds all 64 players within one 1,200-byte packet. A
// snapshot after a gap longer than a delta's baseline may span (about 18
// minutes without sending) holds full states, still within the packet,
// and the next one is back to the same size.
func TestSnapshotSizeDoesNotGrowWithUptime(t *testing.T) {
	const players = 64
	const hour = 60 * 60 * 60
	s := newArenaSchema(t)
	cs := s.Schema
	sizes := map[int]string{} // steady-state size → the first scenario that had it
	for _, sc := range []struct {
		name  string
		start gw.Tick
		conn  components.ConnID // the first player's connection ID
	}{
		{"tick 1, connections 1..64", 1, 1},
		{"tick 1, connections 200..263", 1, 200},
		{"before the wrap, connections 1..64", math.MaxUint32 - 30, 1},
		{"before the wrap, connections past 2^31", math.MaxUint32 - 30, math.MaxUint32 - 100},
	} {
		w := gw.NewWorld(gw.WorldOptions{})
		w.SetTick(sc.start)
		srv := ghostreg.NewServerRegister(ghostreg.Bind(w, cs))
		a := w.Arche()
		pid, vid, fid, hid := ecs.ComponentID[arPosition](a), ecs.ComponentID[arVelocity](a), ecs.ComponentID[arFacing](a), ecs.ComponentID[arHealth](a)
		var es []ecs.Entity
		for i := range players {
			e := a.NewEntity(pid, vid, fid, hid)
			_, err := srv.Spawn(e, s.Player, sc.conn+components.ConnID(i))
			require.NoError(t, err)
			es = append(es, e)
		}
		view := srv.NewView(sc.conn)
		sw, err := protocol.NewSnapshotWriter(cs, 0)
		require.NoError(t, err)
		send := func(tick gw.Tick) (size, deferred int) {
			w.SetTick(tick)
			for i, e := range es {
				*(*arPosition)(a.Get(e, pid)) = arPosition{X: float32(i%8) * 3, Y: float32(i/8) * 3}
				// A respawn tick just ahead of now: its value grows with uptime, its size must not.
				*(*arHealth)(a.Get(e, hid)) = arHealth{HP: arMaxHP, Respawn: tick.Add(180)}
			}
			srv.Quantize()
			sw.Begin(tick)
			deferred = srv.WriteSnapshot(sw, view, tick)
			size = len(sw.Finish(&protocol.SnapshotHeader{Tick: tick, Confirmed: tick.Add(-2), HasConfirmed: true, Lead: 1}))
			view.Ack(tick, 1)
			return size, deferred
		}
		first, deferred := send(sc.start.Add(1))
		assert.Equalf(t, 14, deferred, "%s: spawns that wait for the second snapshot", sc.name)
		_, deferred = send(sc.start.Add(2))
		assert.Zerof(t, deferred, "%s: the rest of the spawns, with the others", sc.name)
		_, deferred = send(sc.start.Add(3))
		assert.Zerof(t, deferred, "%s: every identity acknowledged by the third", sc.name)
		steady, deferred := send(sc.start.Add(4))
		assert.Zero(t, deferred)
		t.Logf("%s: %d bytes with identities, %d without", sc.name, first, steady)
		assert.Lessf(t, steady, first, "%s: identities are sent until acknowledged only", sc.name)
		for _, d := range []int{5, 100, hour / 2, hour} {
			size, deferred := send(sc.start.Add(d)) // full states after a gap past protocol.MaxBaseDistance
			assert.LessOrEqualf(t, size, protocol.MaxDatagram, "%s: snapshot size %d ticks in", sc.name, d)
			assert.Zerof(t, deferred, "%s: players deferred %d ticks in", sc.name, d)
			size, deferred = send(sc.start.Add(d + 1))
			assert.Equalf(t, steady, size, "%s: snapshot size %d ticks in", sc.name, d+1)
			assert.Zerof(t, deferred, "%s: players deferred %d ticks in", sc.name, d+1)
		}
		assert.LessOrEqual(t, steady, protocol.MaxDatagram)
		sizes[steady] = sc.name
	}
	assert.Len(t, sizes, 1, "the same size whatever the start tick and connection IDs: %v", sizes)
}
