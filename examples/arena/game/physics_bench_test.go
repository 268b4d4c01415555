package game

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// BenchmarkCollide times one tick of CollideSystem beside its all-pairs
// baseline, for players spread at random over the arena: on a server
// (every player predicted) and on a client (its own player predicted).
// The ticks push the players apart, so the steady state is an arena with
// few overlaps, as in a match.
func BenchmarkCollide(b *testing.B) {
	type collider interface{ Update(*gw.World) }
	impls := []struct {
		name string
		new  func(*gw.World) collider
	}{
		{"all-pairs", func(w *gw.World) collider { return newAllPairsCollide(w) }},
		{"system", func(w *gw.World) collider { return NewCollideSystem(w) }},
	}
	for _, n := range []int{16, 64} {
		for _, side := range []string{"server", "client"} {
			for _, impl := range impls {
				b.Run(fmt.Sprintf("players=%d/%s/%s", n, side, impl.name), func(b *testing.B) {
					w, _ := spreadScene(n, side == "server").build()
					sys := impl.new(w)
					sys.Update(w) // grows the slices
					b.ReportAllocs()
					for b.Loop() {
						sys.Update(w)
					}
				})
			}
		}
	}
}

// spreadScene is n living players at seeded random spots of the arena,
// stored in ID order; all predicted, or only the middle one.
func spreadScene(n int, predictAll bool) collideScene {
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	var sc collideScene
	for i := range n {
		sc.ids = append(sc.ids, components.GhostID(i+1))
		sc.at = append(sc.at, Position{X: float32(rng.Float64()*19 - 9.5), Y: float32(rng.Float64()*19 - 9.5)})
		sc.alive = append(sc.alive, true)
		sc.predicted = append(sc.predicted, predictAll || i == n/2)
		sc.moving = append(sc.moving, false)
	}
	return sc
}
