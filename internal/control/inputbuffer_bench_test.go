package control_test

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// BenchmarkInputBuffer runs one server tick of one connection per op: the
// newest `redundancy` inputs of the client's batch are offered to Add (all
// but one are duplicates once the stream runs), then Take hands out the
// tick's input. The game's Validate (wiretest.ClampX) runs on every accepted
// input. ns/op and allocs/op cover the InputBuffer alone, also reported as
// ns/tick. The baseline writes the same inputs into a plain [64]wiretest.Input
// ring by tick and reads the tick's slot back, with no checks at all:
// ring-ns/tick, and the ratio x-ring.
func BenchmarkInputBuffer(b *testing.B) {
	for _, redundancy := range []int{1, 4} {
		b.Run(fmt.Sprintf("redundancy=%d", redundancy), func(b *testing.B) { benchmarkInputBuffer(b, redundancy) })
	}
}

func benchmarkInputBuffer(b *testing.B, redundancy int) {
	const lead = 2 // the client's inputs arrive two ticks early
	s := wiretest.NewInputSchema(b, wiretest.InputRulesOf[wiretest.Input]{Validate: wiretest.ClampX})
	buf, err := control.NewInputBuffer(s, control.InputBufferOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var inputs [64]wiretest.Input
	for i := range inputs {
		inputs[i] = wiretest.Quantized(s, wiretest.Input{X: 0.5, Y: -0.25, Jump: components.Press(i % 2), Steer: int8(i%7 - 3 + b2i(i%7 == 0))})
	}
	var sum uint64
	b.ReportAllocs()
	b.ResetTimer()

	start := time.Now()
	for i := range b.N {
		tick := gw.Tick(i + 1)
		for r := redundancy - 1; r >= 0; r-- {
			t := tick.Add(lead - r)
			buf.Add(hd(t), wiretest.RecOf(&inputs[t%64]), tick-1)
		}
		_, rec, _ := buf.Take(tick)
		sum += uint64(uint8((*wiretest.Input)(unsafe.Pointer(&rec[0])).Steer))
	}
	bufTime := time.Since(start)
	b.StopTimer()

	var ring [64]wiretest.Input
	var ringSum uint64
	start = time.Now()
	for i := range b.N {
		tick := gw.Tick(i + 1)
		for r := redundancy - 1; r >= 0; r-- {
			t := tick.Add(lead - r)
			ring[t%64] = inputs[t%64]
		}
		ringSum += uint64(uint8(ring[tick%64].Steer))
	}
	ringTime := time.Since(start)

	st := buf.Stats()
	if ringSum != sum || st.Missing > lead || st.Applied+st.Missing != uint64(b.N) || st.Refused != 0 {
		b.Fatalf("sums %d and %d; stats %+v", sum, ringSum, st)
	}
	ticks := float64(b.N)
	b.ReportMetric(float64(bufTime.Nanoseconds())/ticks, "ns/tick")
	b.ReportMetric(float64(ringTime.Nanoseconds())/ticks, "ring-ns/tick")
	b.ReportMetric(float64(bufTime)/float64(ringTime), "x-ring")
}
