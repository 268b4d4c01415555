package netsync_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// BenchmarkInputBuffer runs one server tick of one connection per op: the
// newest `redundancy` inputs of the client's batch are offered to Add (all
// but one are duplicates once the stream runs), then Take hands out the
// tick's input. ns/op and allocs/op cover the InputBuffer alone, also
// reported as ns/tick. The baseline writes the same commands into a plain
// [64]components.InputCommand ring by tick and reads the tick's slot back,
// with no checks at all: ring-ns/tick, and the ratio x-ring.
func BenchmarkInputBuffer(b *testing.B) {
	for _, redundancy := range []int{1, 4} {
		b.Run(fmt.Sprintf("redundancy=%d", redundancy), func(b *testing.B) { benchmarkInputBuffer(b, redundancy) })
	}
}

func benchmarkInputBuffer(b *testing.B, redundancy int) {
	const lead = 2 // the client's inputs arrive two ticks early
	buf, err := netsync.NewInputBuffer(netsync.InputBufferOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var cmds [64]components.InputCommand
	for i := range cmds {
		cmds[i] = components.InputCommand{Buttons: uint32(i), MoveX: 0.5, MoveY: -0.25, Aim: 1, ViewTick: 1}
		netsync.QuantizeInput(&cmds[i])
	}
	var sum uint64
	b.ReportAllocs()
	b.ResetTimer()

	start := time.Now()
	for i := range b.N {
		tick := gw.Tick(i + 1)
		for r := redundancy - 1; r >= 0; r-- {
			c := cmds[tick.Add(lead-r)%64]
			c.Tick = tick.Add(lead - r)
			buf.Add(c, tick-1)
		}
		c, _ := buf.Take(tick)
		sum += uint64(c.Buttons)
	}
	bufTime := time.Since(start)
	b.StopTimer()

	var ring [64]components.InputCommand
	var ringSum uint64
	start = time.Now()
	for i := range b.N {
		tick := gw.Tick(i + 1)
		for r := redundancy - 1; r >= 0; r-- {
			c := cmds[tick.Add(lead-r)%64]
			c.Tick = tick.Add(lead - r)
			ring[c.Tick%64] = c
		}
		ringSum += uint64(ring[tick%64].Buttons)
	}
	ringTime := time.Since(start)

	s := buf.Stats()
	if ringSum != sum || s.Missing > lead || s.Applied+s.Missing != uint64(b.N) {
		b.Fatalf("sums %d and %d; stats %+v", sum, ringSum, s)
	}
	ticks := float64(b.N)
	b.ReportMetric(float64(bufTime.Nanoseconds())/ticks, "ns/tick")
	b.ReportMetric(float64(ringTime.Nanoseconds())/ticks, "ring-ns/tick")
	b.ReportMetric(float64(bufTime)/float64(ringTime), "x-ring")
}
