package protocol_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// runGhosts returns n delta records against def in ascending ID order,
// their bodies encoded.
func runGhosts(t testing.TB, ts *wiretest.Schema, rng *rand.Rand, n int, tick, def gw.Tick) ([]*protocol.EncodedGhost, []protocol.RecordBody) {
	ghosts := randomGhosts(t, ts, rng, n, tick, 1)
	slices.SortFunc(ghosts, func(a, b wiretest.Ghost) int { return int(a.ID) - int(b.ID) })
	egs := make([]*protocol.EncodedGhost, n)
	bodies := make([]protocol.RecordBody, n)
	for i := range ghosts {
		eg := encodeGhost(ts, &ghosts[i])
		gt, _ := ts.GhostType(codec.GhostTypeID(eg.Type))
		eg.HasBase, eg.Base, eg.Changed = true, def, rng.Uint32()&(1<<len(gt.Components)-1)
		bodies[i].Encode(ts.Schema, eg)
		egs[i] = eg
	}
	return egs, bodies
}

// Stretches of a run copied into a snapshot, anywhere in it and after any
// other record, give the bytes its records added one by one give.
func TestRecordRunWritesWhatAddEncodedWrites(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(41, 42))
	const tick = gw.Tick(1<<32 - 1)
	def := tick.Add(-3)
	egs, bodies := runGhosts(t, ts, rng, 60, tick, def)
	var run protocol.RecordRun
	run.Reset()
	for i, eg := range egs {
		run.Append(eg, &bodies[i])
	}
	require.Equal(t, len(egs), run.Len())
	require.Equal(t, egs[len(egs)-1].ID, run.Last())
	direct, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	spliced, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	for round := range 20 {
		direct.Begin(tick)
		direct.DefaultBase(def)
		spliced.Begin(tick)
		spliced.DefaultBase(def)
		// Stretches of the run, some records left out between them, each
		// record left out written on its own in some rounds.
		for i := 0; i < len(egs); {
			n := 1 + rng.IntN(8)
			if rng.IntN(3) == 0 || round == 0 {
				for _, eg := range egs[i:min(i+n, len(egs))] {
					require.True(t, direct.AddEncoded(eg))
				}
				require.True(t, spliced.AddRun(&run, i, min(i+n, len(egs))))
			} else if rng.IntN(2) == 0 {
				require.True(t, direct.AddEncoded(egs[i]))
				require.True(t, spliced.AddBody(egs[i], &bodies[i]))
				n = 1
			}
			i += n
		}
		require.Equal(t, direct.Count(), spliced.Count())
		h := protocol.SnapshotHeader{Tick: tick}
		want := append([]byte(nil), direct.Finish(&h)...)
		require.Equal(t, want, spliced.Finish(&h), "round %d", round)
	}
}

// A stretch that does not fit adds nothing and leaves the snapshot open:
// its records one by one then fill it.
func TestRecordRunThatDoesNotFitAddsNothing(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(43, 44))
	const tick = gw.Tick(500)
	egs, bodies := runGhosts(t, ts, rng, 40, tick, tick-1)
	var run protocol.RecordRun
	for i, eg := range egs {
		run.Append(eg, &bodies[i])
	}
	sw, err := protocol.NewSnapshotWriter(ts.Schema, 200)
	require.NoError(t, err)
	sw.Begin(tick)
	sw.DefaultBase(tick - 1)
	require.True(t, sw.AddRun(&run, 0, 2))
	assert.False(t, sw.AddRun(&run, 2, len(egs)), "40 records in 200 bytes")
	assert.Equal(t, 2, sw.Count())
	assert.False(t, sw.Full(), "nothing was left out yet")
	n := 2
	for ; sw.AddEncoded(egs[n]); n++ {
	}
	assert.True(t, sw.Full())
	assert.Less(t, n, len(egs))
	assert.False(t, sw.AddRun(&run, n, n+1), "a ghost was left out before")

	var snap protocol.Snapshot
	require.NoError(t, protocol.DecodeSnapshot(sw.Finish(&protocol.SnapshotHeader{Tick: tick}), ts.Schema, &snap))
	require.Len(t, snap.Ghosts, n)
	for i, g := range snap.Ghosts {
		assert.Equal(t, egs[i].ID, g.ID)
	}
}

// Records that differ per connection, out of order or against another
// baseline are bugs in the caller.
func TestRecordRunRefusesWhatItCannotHold(t *testing.T) {
	ts := wiretest.NewSchema(t)
	rng := rand.New(rand.NewPCG(45, 46))
	const tick = gw.Tick(900)
	egs, bodies := runGhosts(t, ts, rng, 3, tick, tick-2)
	var run protocol.RecordRun
	run.Append(egs[1], &bodies[1])
	assert.Panics(t, func() { run.Append(egs[0], &bodies[0]) }, "below the last ID")
	assert.Panics(t, func() { run.Append(egs[2], &bodies[0]) }, "another ghost's body")
	ident := *egs[2]
	ident.Identity = true
	assert.Panics(t, func() { run.Append(&ident, &bodies[2]) }, "with its identity")
	sw, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	sw.Begin(tick)
	assert.Panics(t, func() { sw.AddRun(&run, 0, 1) }, "no default baseline")
	sw.DefaultBase(tick - 2)
	assert.Panics(t, func() { sw.AddRun(&run, 0, 2) }, "past the run's end")
	assert.Panics(t, func() { sw.AddRun(&run, 1, 1) }, "empty")
	run.Reset()
	assert.Zero(t, run.Len())
	run.Append(egs[0], &bodies[0]) // lower IDs again after a reset
	assert.True(t, sw.AddRun(&run, 0, 1))
}
