package harness_test

import (
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// tickMeter advances a harness one server tick at a time the way
// harness.Step does (1 ms steps, every client updated after the server,
// client frames at 60 Hz), timing the server's Update apart from the
// clients': the server's cost per tick is the figure, the clients only
// make it real (their acknowledgements and inputs).
type tickMeter struct {
	h         *harness.Harness
	nextFrame time.Duration
	server    time.Duration
	ticks     int
}

func newTickMeter(h *harness.Harness) *tickMeter {
	return &tickMeter{h: h, nextFrame: h.Time.Now()}
}

// tick steps until the server has run one more tick.
func (m *tickMeter) tick() {
	t := m.h.Server.World().Tick()
	for m.h.Server.World().Tick() == t {
		m.h.Time.Advance(time.Millisecond)
		start := time.Now()
		m.h.Server.Update()
		m.server += time.Since(start)
		for _, c := range m.h.Clients {
			c.Update()
		}
		if now := m.h.Time.Now(); now >= m.nextFrame {
			for _, c := range m.h.Clients {
				c.Frame()
			}
			m.nextFrame = now + time.Second/60
		}
	}
	m.ticks++
}

// serverMicros is the server's mean wall time per tick, in µs.
func (m *tickMeter) serverMicros() float64 {
	return float64(m.server.Nanoseconds()) / 1e3 / float64(max(m.ticks, 1))
}

// holdsAll reports whether every client of h has a ghost for every id,
// checking at most every 100 ms of virtual time (it is called every step).
func holdsAll(h *harness.Harness, ids []components.GhostID) func() bool {
	var next time.Duration
	return func() bool {
		if h.Time.Now() < next {
			return false
		}
		next = h.Time.Now() + 100*time.Millisecond
		for _, c := range h.Clients {
			for _, id := range ids {
				if _, ok := c.Ghosts().Entity(id); !ok {
					return false
				}
			}
		}
		return true
	}
}

// BenchmarkCubes is S1 (docs/performance.md): Glenn Fiedler's 901 cubes
// at 60 Hz, one client over a 100 ms RTT link losing 1 % each way, while
// the pusher rolls round its circle and shoves a cluster of cubes (the
// simulation is described at cubeScene's constants); the other cubes rest
// on the floor. Positions are on Fiedler's 1/512 m grid and orientations
// in smallest-three form (29 bits). One op is one server tick (server,
// client and link). It reports the server's bytes on the wire per client
// (packet headers included) as bits per second, beside the naive snapshot
// measured in the same loop on the same values: encoding/binary of every
// cube's float32 position and quaternion every tick (28 bytes per cube;
// Fiedler's naive 17.37 Mbps also sends a linear velocity and a bit).
func BenchmarkCubes(b *testing.B) {
	schema, err := newSceneSchema()
	if err != nil {
		b.Fatal(err)
	}
	scene := &cubeScene{schema: schema}
	h, err := newSceneHarness(schema, 1, scene.setup)
	if err != nil {
		b.Fatal(err)
	}
	if !h.RunUntil(holdsAll(h, scene.ids), 30*time.Second) {
		b.Fatal("the client never held all 901 cubes")
	}
	h.Run(time.Second)
	m := newTickMeter(h)
	sent := h.Server.Stats().BytesSent
	naive := make([]byte, 0, cubeCount*28)
	var naiveTime time.Duration
	naiveBytes := 0
	b.ReportAllocs()
	for b.Loop() {
		m.tick()
		start := time.Now()
		naive = scene.naiveCubes(naive[:0])
		naiveTime += time.Since(start)
		naiveBytes += len(naive)
	}
	ticks := float64(m.ticks)
	bits := float64(h.Server.Stats().BytesSent-sent) * 8 / ticks * 60 / float64(len(h.Clients))
	naiveBits := float64(naiveBytes) * 8 / ticks * 60
	b.ReportMetric(bits, "bits/s-client")
	b.ReportMetric(naiveBits, "naive-bits/s-client")
	b.ReportMetric(100*bits/naiveBits, "%-of-naive")
	b.ReportMetric(m.serverMicros(), "server-us/tick")
	b.ReportMetric(float64(naiveTime.Nanoseconds())/1e3/ticks, "naive-us/tick")
}

// Idle is S3's shape: naia's idle benchmark.
const (
	idleGhosts  = 10000
	idleClients = 16
)

// BenchmarkIdle is S3 (docs/performance.md): 10,000 server-owned ghosts
// at rest (a position each) and 16 connections over 100 ms RTT links
// losing 1 % each way, once every client holds every ghost and a second
// more has passed for the acknowledgements. One op is one server tick
// (server, 16 clients, links); server-us/tick times the server's Update
// alone. The naive baseline, measured in the same loop on the same
// values: encoding/binary of every ghost's float32 position for each
// connection every tick (12 bytes per ghost), its time per tick and its
// bytes per client and tick.
func BenchmarkIdle(b *testing.B) {
	schema, err := newSceneSchema()
	if err != nil {
		b.Fatal(err)
	}
	scene := &staticScene{schema: schema, n: idleGhosts}
	h, err := newSceneHarness(schema, idleClients, scene.setup)
	if err != nil {
		b.Fatal(err)
	}
	if !h.RunUntil(holdsAll(h, scene.ids), 60*time.Second) {
		b.Fatal("the clients never held all 10,000 ghosts")
	}
	h.Run(time.Second)
	m := newTickMeter(h)
	sent := h.Server.Stats().BytesSent
	naive := make([]byte, 0, idleGhosts*12)
	var naiveTime time.Duration
	naiveBytes := 0
	b.ReportAllocs()
	for b.Loop() {
		m.tick()
		start := time.Now()
		for range h.Clients {
			naive = scene.naiveStatic(naive[:0])
			naiveBytes += len(naive)
		}
		naiveTime += time.Since(start)
	}
	ticks, clients := float64(m.ticks), float64(len(h.Clients))
	b.ReportMetric(m.serverMicros(), "server-us/tick")
	b.ReportMetric(float64(h.Server.Stats().BytesSent-sent)/ticks/clients, "bytes/client-tick")
	b.ReportMetric(float64(naiveTime.Nanoseconds())/1e3/ticks, "naive-us/tick")
	b.ReportMetric(float64(naiveBytes)/ticks/clients, "naive-bytes/client-tick")
}
