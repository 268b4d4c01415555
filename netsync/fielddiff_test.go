package netsync_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/netsync"
)

// A FieldDiff prints each kind of field as Go would, and a zero one as
// empty values.
func TestFieldDiffPrintsEachKind(t *testing.T) {
	for _, tc := range []struct {
		d          netsync.FieldDiff
		a, b, text string
	}{
		{netsync.FieldDiff{Component: "game.Position", Field: "X", Kind: reflect.Float32, Predicted: 1.5, Server: float64(float32(0.1))},
			"1.5", "0.1", "game.Position.X: 1.5 then 0.1"},
		{netsync.FieldDiff{Component: "game.Door", Field: "Open", Kind: reflect.Bool, Predicted: 1, Server: 0}, "true", "false", "game.Door.Open: true then false"},
		{netsync.FieldDiff{Component: "game.Health", Field: "HP", Kind: reflect.Int16, Predicted: -25, Server: 100}, "-25", "100", "game.Health.HP: -25 then 100"},
		{netsync.FieldDiff{Component: "game.Health", Field: "Respawn", Kind: reflect.Uint32, Predicted: math.MaxUint32, Server: 7}, "4294967295", "7", "game.Health.Respawn: 4294967295 then 7"},
		{netsync.FieldDiff{Component: "game.X", Field: "Y"}, "", "", "game.X.Y:  then "},
	} {
		a, b := tc.d.Values()
		assert.Equal(t, tc.a, a)
		assert.Equal(t, tc.b, b)
		assert.Equal(t, tc.text, tc.d.String())
	}
}
