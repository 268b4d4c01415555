package ecs_test

import (
	"testing"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// respawnEvery adds a StageSimulation system that, every period ticks,
// moves one entity back to the origin: server-only state changes outside
// the prediction stages, as a respawn does.
func respawnEvery(g *game, period int) {
	pos := generic.NewMap[Position](g.world.Arche())
	g.sched.Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
		if int(uint32(w.Tick()))%period == 0 {
			e := g.entities[int(uint32(w.Tick())/uint32(period))%len(g.entities)]
			*pos.Get(e) = Position{}
		}
	}))
}

// On a server, StageSimulation changes registered state between two ticks'
// predictions. The sync test must not call that a desync (a replay does not
// repeat the simulation), but it still checks the windows between such
// changes, shortened where they would reach back across one.
func TestSyncTestOnAServerBoundsWindowsAtSimulationChanges(t *testing.T) {
	g := newGameAs(t, true, 40, 64)
	respawnEvery(g, 20)
	st, err := gw.NewSyncTest(g.sched, g.world, gw.SyncTestOptions{Rollback: 8})
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		require.NoError(t, st.Tick(), "tick %d", i+1)
	}
	// The respawns at ticks 20, 40 … 280 each shorten the 8 windows
	// after them (the next tick cannot look back at all, the one after
	// one tick …); the one at 300 has no tick after it. Every other tick
	// from 9 on is checked 8 deep.
	assert.Equal(t, uint64(14*8), st.Shortened())
	assert.Equal(t, uint64((300-8)*8-14*(8*8-(0+1+2+3+4+5+6+7))), st.Checks())
}

// The same simulation change on a client is a desync: there nothing but a
// correction may write predicted state outside the prediction stages.
func TestSyncTestOnAClientFlagsSimulationChanges(t *testing.T) {
	g := newGameAs(t, false, 40, 64)
	respawnEvery(g, 20)
	st, err := gw.NewSyncTest(g.sched, g.world, gw.SyncTestOptions{Rollback: 8})
	require.NoError(t, err)
	var derr error
	for i := 0; i < 60 && derr == nil; i++ {
		derr = st.Tick()
	}
	var d *gw.DesyncError
	require.ErrorAs(t, derr, &d)
	assert.Zero(t, st.Shortened(), "a client never shortens its windows")
}

// Hidden state in a server's prediction is found as on a client.
func TestSyncTestOnAServerFindsHiddenState(t *testing.T) {
	g := newGameAs(t, true, 40, 64)
	respawnEvery(g, 20)
	steps := 0
	pos := generic.NewMap[Position](g.world.Arche())
	target := g.entities[3]
	g.sched.Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		steps++
		if steps%13 == 0 {
			pos.Get(target).X += 0.5
		}
	}))
	st, err := gw.NewSyncTest(g.sched, g.world, gw.SyncTestOptions{Rollback: 8})
	require.NoError(t, err)
	var derr error
	for i := 0; i < 100 && derr == nil; i++ {
		derr = st.Tick()
	}
	var d *gw.DesyncError
	require.ErrorAs(t, derr, &d)
	assert.Equal(t, target, d.Entity)
	assert.Equal(t, "X", d.Field)
}

// The check changes nothing: a server world ticked through a SyncTest ends
// in the same state as one ticked plainly, respawns included (before, the
// replay after the whole tick undid what StageSimulation wrote).
func TestSyncTestLeavesTheServerWorldAsAPlainRun(t *testing.T) {
	plain := newGameAs(t, true, 40, 64)
	respawnEvery(plain, 20)
	checked := newGameAs(t, true, 40, 64)
	respawnEvery(checked, 20)
	st, err := gw.NewSyncTest(checked.sched, checked.world, gw.SyncTestOptions{Rollback: 8})
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		plain.sched.Tick(plain.world)
		require.NoError(t, st.Tick())
	}
	pp, pv, pb := plain.state()
	cp, cv, cb := checked.state()
	assert.Equal(t, pp, cp)
	assert.Equal(t, pv, cv)
	assert.Equal(t, pb, cb)
}
