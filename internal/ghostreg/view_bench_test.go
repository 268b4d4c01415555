package ghostreg_test

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// BenchmarkS2SendTick measures the server's send work of one tick with n
// players, each owning one ghost and connected: Quantize, then one
// snapshot per connection (WriteSnapshot and Finish; every client
// acknowledges). Beside it, in the same run, the baseline: the same
// Quantize and snapshots with every ghost encoded again for every
// connection (what the server did before encoding once per tick). The
// metrics are µs per tick for both and their ratio.
func BenchmarkS2SendTick(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("players=%d", n), func(b *testing.B) {
			p := newPair(b, 1)
			var es []ecs.Entity
			for i := range n {
				es = append(es, p.spawn(b, p.s.player, components.ConnID(i+1), Pos{float32(i) - 31.7, 0.3 * float32(i)}, HP{int32(100 + i)}))
			}
			views := make([]*ghostreg.View, n)
			for i := range views {
				views[i] = p.srv.NewView(components.ConnID(i + 1))
			}
			sw, err := protocol.NewSnapshotWriter(p.s.Schema, 0)
			require.NoError(b, err)
			a := p.sw.Arche()
			gid, pid, hid := ecs.ComponentID[components.Ghost](a), ecs.ComponentID[Pos](a), ecs.ComponentID[HP](a)
			vals := make([][]unsafe.Pointer, n)
			for i, e := range es {
				vals[i] = []unsafe.Pointer{a.Get(e, pid), a.Get(e, hid)}
			}
			tick := gw.Tick(100)
			move := func() {
				tick++
				p.sw.SetTick(tick)
				for i, e := range es {
					getPos(p.sw, e).X += 0.01 * float32(i%3-1)
				}
				p.srv.Quantize()
			}
			once := func() {
				move()
				for _, v := range views {
					sw.Begin(tick)
					if p.srv.WriteSnapshot(sw, v, tick) != 0 {
						panic("ghosts deferred")
					}
					sw.Finish(&protocol.SnapshotHeader{Tick: tick})
					v.Ack(tick, 1)
				}
			}
			perConn := func() {
				move()
				for c := range n {
					sw.Begin(tick)
					for pass := range 2 { // owned first, then the others by ID, as before
						for i, e := range es {
							if (i == c) != (pass == 0) {
								continue
							}
							if !sw.AddGhost(*(*components.Ghost)(a.Get(e, gid)), false, vals[i]) {
								panic("ghost left out")
							}
						}
					}
					sw.Finish(&protocol.SnapshotHeader{Tick: tick})
				}
			}
			once()
			perConn()

			start := time.Now()
			for range b.N {
				perConn()
			}
			baseNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)

			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				once()
			}
			b.StopTimer()
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(ns/1000, "µs/tick")
			b.ReportMetric(baseNs/1000, "per-conn-µs/tick")
			b.ReportMetric(baseNs/ns, "x-per-conn")
		})
	}
}
