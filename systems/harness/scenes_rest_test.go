package harness_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S1's accuracy check: after the pusher has shoved cubes for four seconds
// and stopped, every cube each client shows (position and smallest-three
// orientation) lies within one quantization step of the server's, over
// links losing 1 % each way, 3 s after the freeze. S1 busy too: bursts
// and sliding cubes (about 14 % moving) until the freeze, snapshots full
// and records deferred.
func TestCubesAtRestShowTheServersState(t *testing.T) {
	t.Run("S1", func(t *testing.T) { cubesAtRest(t, false) })
	t.Run("S1 busy", func(t *testing.T) { cubesAtRest(t, true) })
}

func cubesAtRest(t *testing.T, busy bool) {
	schema, err := newSceneSchema()
	require.NoError(t, err)
	scene := &cubeScene{schema: schema, busy: busy, stopAt: 4 * 60}
	h, err := newSceneHarness(schema, 2, scene.setup)
	require.NoError(t, err)
	h.Run(7 * time.Second)

	server := generic.NewMap2[cubePos, cubeRot](h.Server.World().Arche())
	moved := 0
	for i, e := range scene.cubes[:cubeCount-1] {
		p, _ := server.Get(e)
		x := (float32(i%cubesPerSide) - (cubesPerSide-1)/2.0) * cubeSpacing
		y := (float32(i/cubesPerSide) - (cubesPerSide-1)/2.0) * cubeSpacing
		if p.X != floorCoord.Quantize(x) || p.Y != floorCoord.Quantize(y) {
			moved++
		}
	}
	require.Greater(t, moved, 20, "the pusher shoved a cluster of cubes")

	const posStep, heightStep = 1.0 / 512, 1.0 / 512
	for c, cl := range h.Clients {
		shown := generic.NewMap2[cubePos, cubeRot](cl.World().Arche())
		for i, id := range scene.ids {
			ce, ok := cl.Ghosts().Entity(id)
			if !assert.Truef(t, ok, "client %d lacks cube %d", c, i) {
				continue
			}
			sp, sr := server.Get(scene.cubes[i])
			cp, cr := shown.Get(ce)
			assert.InDeltaf(t, sp.X, cp.X, posStep, "client %d cube %d x", c, i)
			assert.InDeltaf(t, sp.Y, cp.Y, posStep, "client %d cube %d y", c, i)
			assert.InDeltaf(t, sp.Z, cp.Z, heightStep, "client %d cube %d z", c, i)
			assert.Equalf(t, sr.Largest, cr.Largest, "client %d cube %d largest component", c, i)
			assert.InDeltaf(t, sr.A, cr.A, rotStep, "client %d cube %d orientation a", c, i)
			assert.InDeltaf(t, sr.B, cr.B, rotStep, "client %d cube %d orientation b", c, i)
			assert.InDeltaf(t, sr.C, cr.C, rotStep, "client %d cube %d orientation c", c, i)
		}
	}
}
