package game

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// arenaSnapshot encodes one snapshot of n players with the arena schema,
// as sent once the client acknowledged their identities.
func arenaSnapshot(t testing.TB, s *Schema, n int) []byte {
	sw, err := protocol.NewSnapshotWriter((*codec.Schema)(s.Schema), 0)
	require.NoError(t, err)
	sw.Begin(500)
	for i := 1; i <= n; i++ {
		p := Position{X: float32(i) - 3.3, Y: 2.25}
		v := Velocity{X: 1.5, Y: -MaxSpeed}
		f := Facing{Yaw: float32(i) / 3}
		h := Health{HP: int16(100 - 25*(i%5)), Respawn: gw.Tick(i * 7)}
		require.True(t, sw.AddGhost(components.Ghost{ID: components.GhostID(i), Type: uint16(s.Player), Owner: components.ConnID(i), Spawned: 3}, false,
			[]unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&v), unsafe.Pointer(&f), unsafe.Pointer(&h)}))
	}
	return append([]byte(nil), sw.Finish(&protocol.SnapshotHeader{Tick: 500, Confirmed: 498, HasConfirmed: true})...)
}

func mustSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := NewSchema()
	require.NoError(t, err)
	return s
}

func TestArenaSnapshotRoundTrip(t *testing.T) {
	s := mustSchema(t)
	p := arenaSnapshot(t, s, 8)
	assert.LessOrEqual(t, len(p), 176, "8 players take about 21 bytes each (the respawn tick is 32 bits: it never grows with uptime)")
	var snap protocol.Snapshot
	require.NoError(t, protocol.DecodeSnapshot(p, (*codec.Schema)(s.Schema), &snap))
	require.Len(t, snap.Ghosts, 8)
	h := *(*Health)(snap.Value(2, 3))
	assert.Equal(t, Health{HP: 100 - 25*3, Respawn: 21}, h)
	pos := *(*Position)(snap.Value(0, 0))
	assert.Equal(t, Position{X: coord.Quantize(1 - 3.3), Y: 2.25}, pos)
}

func TestHealthWireFormIsBoundedAndKeepsLateTicks(t *testing.T) {
	s := mustSchema(t)
	var c codec.Coder
	h := Health{HP: 30000, Respawn: math.MaxUint32}
	c.Quantize((*codec.Schema)(s.Schema), 3, unsafe.Pointer(&h))
	assert.Equal(t, Health{HP: MaxHP, Respawn: math.MaxUint32}, h, "HP clamps to its range; a respawn tick near 2^32 is exact")
	h = Health{HP: -30000, Respawn: 7}
	c.Quantize((*codec.Schema)(s.Schema), 3, unsafe.Pointer(&h))
	assert.Equal(t, Health{HP: -MaxHP, Respawn: 7}, h)
}

// FuzzArenaSnapshot: snapshots off the wire, decoded with the arena's
// codecs, never panic, and what decodes re-encodes to a packet that
// decodes the same.
func FuzzArenaSnapshot(f *testing.F) {
	s := mustSchema(f)
	f.Add(arenaSnapshot(f, s, 1))
	f.Add(arenaSnapshot(f, s, 8))
	f.Add([]byte{protocol.ProtocolVersion, byte(protocol.MsgSnapshot)})
	f.Fuzz(func(t *testing.T, p []byte) {
		var snap protocol.Snapshot
		if protocol.DecodeSnapshot(p, (*codec.Schema)(s.Schema), &snap) != nil {
			return
		}
		sw, _ := protocol.NewSnapshotWriter((*codec.Schema)(s.Schema), 0)
		sw.Begin(snap.Tick)
		for _, id := range snap.Despawned {
			require.True(t, sw.Despawn(id))
		}
		for gi, g := range snap.Ghosts {
			vals := []unsafe.Pointer{snap.Value(gi, 0), snap.Value(gi, 1), snap.Value(gi, 2), snap.Value(gi, 3)}
			if !sw.AddGhost(g.Ghost, g.Identity, vals) {
				return
			}
		}
		h := snap.SnapshotHeader
		var again protocol.Snapshot
		require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&h), (*codec.Schema)(s.Schema), &again))
		require.Equal(t, len(snap.Ghosts), len(again.Ghosts))
		for gi := range snap.Ghosts {
			require.Equal(t, snap.Ghosts[gi].Ghost, again.Ghosts[gi].Ghost)
			require.Equal(t, snap.Ghosts[gi].Identity, again.Ghosts[gi].Identity)
			require.Equal(t, *(*Health)(snap.Value(gi, 3)), *(*Health)(again.Value(gi, 3)))
		}
	})
}
