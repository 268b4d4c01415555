package systems

import (
	"io"
	"log/slog"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

func TestDecideEveryBranch(t *testing.T) {
	const top = gw.Tick(math.MaxUint32)
	cases := []struct {
		name string
		in   reconcileInput
		want reconcileAction
	}{
		{"right prediction", reconcileInput{held: true, hasNewest: true, newest: 110, tick: 100}, actNone},
		{"mismatch rolls back", reconcileInput{held: true, hasNewest: true, newest: 110, tick: 100, mismatch: true}, actRollback},
		{"spawn in the history rolls back", reconcileInput{held: true, hasNewest: true, newest: 110, tick: 100, spawning: true}, actRollback},
		{"always rolls back", reconcileInput{held: true, hasNewest: true, newest: 110, tick: 100, always: true}, actRollback},
		{"newest tick itself", reconcileInput{held: true, hasNewest: true, newest: 100, tick: 100, mismatch: true}, actRollback},
		{"no history adopts", reconcileInput{tick: 100}, actAdopt},
		{"no history adopts a spawn", reconcileInput{tick: 100, spawning: true}, actAdopt},
		{"behind the server adopts", reconcileInput{hasNewest: true, newest: 99, tick: 100}, actAdopt},
		{"behind under always adopts", reconcileInput{hasNewest: true, newest: 99, tick: 100, always: true}, actAdopt},
		{"too old", reconcileInput{hasNewest: true, newest: 300, tick: 100}, actTooOld},
		{"too old under always", reconcileInput{hasNewest: true, newest: 300, tick: 100, always: true}, actTooOld},
		{"too old with a spawn", reconcileInput{hasNewest: true, newest: 300, tick: 100, spawning: true}, actSpawnOnly},
		// Across the wrap: newest 5 is after top, so top is too old, and
		// 5 is after top, so the client is behind.
		{"too old across the wrap", reconcileInput{hasNewest: true, newest: 5, tick: top - 200}, actTooOld},
		{"behind across the wrap", reconcileInput{hasNewest: true, newest: top - 1, tick: 3}, actAdopt},
		{"spawn too old across the wrap", reconcileInput{hasNewest: true, newest: 2, tick: top - 300, spawning: true}, actSpawnOnly},
		{"rollback across the wrap", reconcileInput{held: true, hasNewest: true, newest: 4, tick: top, mismatch: true}, actRollback},
		{"right across the wrap", reconcileInput{held: true, hasNewest: true, newest: 4, tick: top}, actNone},
	}
	for _, tc := range cases {
		assert.Equalf(t, tc.want, decide(tc.in), "%s: got %v", tc.name, decide(tc.in))
	}
	assert.Equal(t, "spawn only", actSpawnOnly.String())
}

func TestMispredictionWithoutDebugDoesNotAllocate(t *testing.T) {
	c := &Client{log: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
		mispredictedBy: map[string]uint64{"game.Position": 0}}
	d := netsync.FieldDiff{Component: "game.Position", Field: "X"}
	allocs := testing.AllocsPerRun(100, func() { c.mispredicted(7, 1, d) })
	assert.Zero(t, allocs, "values are formatted only for a Debug log")
	assert.Equal(t, uint64(101), c.mispredictedBy["game.Position"])
}
