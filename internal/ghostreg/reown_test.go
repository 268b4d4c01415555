package ghostreg_test

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// A player's ghost moves from its lost connection (1) to its new one (2):
// the register's and the entity's owner change, an observer (3) that
// knew the ghost gets its identity again in a delta record and updates
// the owner it holds on the same entity, and the new connection gets the
// ghost as a spawn it owns. The identity goes once: after the
// acknowledgement the records are plain again.
func TestReownMovesAGhostToTheNewConnection(t *testing.T) {
	const lost, fresh, observer = 1, 2, 3
	p := newPair(t, observer)
	se := p.spawn(t, p.s.player, lost, Pos{1, 2}, HP{V: 3})
	crate := p.spawn(t, p.s.crate, 0, Pos{4, 5}, HP{V: 6})
	for tick := range 3 {
		p.sw.SetTick(gw.Tick(10 + tick))
		getPos(p.sw, se).X++
		p.srv.Quantize()
		snap, _ := writeSnapshot(t, p.s, p.srv, 0, gw.Tick(10+tick), observer)
		p.apply(snap)
	}
	ce := p.lookup(t, 1)
	require.Equal(t, components.ConnID(lost), getGhost(p.cw, ce).Owner)

	assert.Zero(t, p.srv.Reown(lost, lost), "to itself: nothing moves")
	assert.Zero(t, p.srv.Reown(7, fresh), "a connection that owns nothing")
	require.Equal(t, 1, p.srv.Reown(lost, fresh))
	assert.Empty(t, p.srv.Owned(nil, lost))
	assert.Equal(t, []ecs.Entity{se}, p.srv.Owned(nil, fresh))
	assert.Equal(t, components.ConnID(fresh), getGhost(p.sw, se).Owner)
	assert.Equal(t, components.ConnID(0), getGhost(p.sw, crate).Owner, "the server's ghost stays the server's")

	p.sw.SetTick(13)
	p.srv.Quantize()
	snap, _ := writeSnapshot(t, p.s, p.srv, 0, 13, observer)
	rec := recordOf(t, snap, 1)
	assert.True(t, rec.Identity, "the identity again, for the new owner")
	assert.Equal(t, components.ConnID(fresh), rec.Owner)
	assert.True(t, rec.HasBase, "against the baseline the observer holds, not in full")
	p.apply(snap)
	assert.Equal(t, ce, p.lookup(t, 1), "the same entity: never despawned")
	assert.Equal(t, components.ConnID(fresh), getGhost(p.cw, ce).Owner)
	assert.False(t, p.cl.Predicts(&components.Ghost{ID: 1, Type: uint16(p.s.player), Owner: fresh}), "another's: still interpolated")

	getPos(p.sw, se).X++
	p.sw.SetTick(14)
	p.srv.Quantize()
	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 14, observer)
	assert.False(t, recordOf(t, snap, 1).Identity, "acknowledged: the identity is not sent again")

	snap, _ = writeSnapshot(t, p.s, p.srv, 0, 14, fresh)
	rec = recordOf(t, snap, 1)
	assert.True(t, rec.Identity)
	assert.Equal(t, components.ConnID(fresh), rec.Owner, "the new connection's own")
}

// An interpolated ghost's owner changes in the interpolator's buffer
// too, whether the ghost is shown yet or not: an entity spawned later
// takes the new owner.
func TestReownReachesTheInterpolator(t *testing.T) {
	r := newIPRig(t, 2)
	_, id := r.spawn(t, ipState{Pos: ipPos{1, 1}})
	r.send(t, 1)
	r.send(t, 2)
	r.update(1.5)
	r.srv.Reown(ipOther, 9)
	_, late := r.spawn(t, ipState{Pos: ipPos{5, 5}})
	r.send(t, 3)
	r.srv.Reown(ipOther, 9) // the later ghost, buffered but not shown
	r.send(t, 4)
	r.update(3.5)
	for _, g := range []components.GhostID{id, late} {
		e, ok := r.cl.Entity(g)
		require.True(t, ok, "ghost %d shown", g)
		assert.Equal(t, components.ConnID(9), getGhost(r.cw, e).Owner, "ghost %d", g)
	}
}

// recordOf returns the record of ghost id in snap, requiring it.
func recordOf(tb testing.TB, snap *protocol.Snapshot, id components.GhostID) protocol.GhostState {
	tb.Helper()
	for _, g := range snap.Ghosts {
		if g.ID == id {
			return g
		}
	}
	require.Failf(tb, "no record", "ghost %d not in the snapshot of tick %d", id, snap.Tick)
	return protocol.GhostState{}
}
