package harness_test

import (
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/harness/serverbench"
	"github.com/ghostwire/ghostwire/transport"
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
	start     time.Duration // when measuring began
}

func newTickMeter(h *harness.Harness) *tickMeter {
	return &tickMeter{h: h, nextFrame: h.Time.Now(), start: h.Time.Now()}
}

// recordedScene builds the harness of sceneOptions with every client's
// traffic recorded (serverbench), and the build of a twin of its server
// whose scene is set up by twinSetup (a fresh scene).
func recordedScene(schema *sceneSchema, clients int, setup, twinSetup func(*systems.Server) error) (*harness.Harness, *serverbench.Recorder, func(*gw.VirtualTime, transport.Listener) (*systems.Server, error), error) {
	opts := sceneOptions(schema, clients, setup)
	rec := &serverbench.Recorder{}
	for i := range opts.Clients {
		opts.Clients[i].Wrap = rec.Wrap(opts.Clients[i].Link)
	}
	h, err := harness.New(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	rec.Now = h.Time.Now
	return h, rec, serverbench.Build(opts, twinSetup), nil
}

// alone runs a twin of the server on the recorded traffic from the start,
// stepped as the harness stepped, three times, and returns its Update
// time and its heap allocations per tick over the measured ticks: the
// server's cost without the clients' worlds in its process, the least of
// the three runs (the machine's speed swings from minute to minute, and
// the process counts the runtime's own allocations now and then). It
// fails when a twin's counters differ from the server's (not the same
// run).
func (m *tickMeter) alone(b *testing.B, rec *serverbench.Recorder, build func(*gw.VirtualTime, transport.Listener) (*systems.Server, error)) (us, allocs float64) {
	ticks := float64(m.ticks)
	for run := range 3 {
		tw, err := serverbench.NewTwin(1, rec, build) // sceneOptions' seed
		if err != nil {
			b.Fatal(err)
		}
		ms, n := serverbench.Run(time.Millisecond, m.start, m.h.Time.Now(), tw)
		if want, got := m.h.Server.Stats(), tw.Server.Stats(); want != got || ms[0].Ticks != m.ticks {
			b.Fatalf("the twin ran another match (%d ticks, want %d):\n%+v\nwant %+v", ms[0].Ticks, m.ticks, got, want)
		}
		t, a := float64(ms[0].Wall.Nanoseconds())/1e3/ticks, float64(n)/ticks
		if run == 0 || t < us {
			us = t
		}
		if run == 0 || a < allocs {
			allocs = a
		}
	}
	return us, allocs
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
func BenchmarkCubes(b *testing.B) { benchCubes(b, &cubeScene{}, nil) }

// BenchmarkCubesBusy is S1 busy (docs/performance.md): the same 901 cubes
// and link, with bursts that keep about 14 % of the cubes moving
// (cubeScene.burst); moving-% is the share of cubes whose replicated
// state changed on a tick, measured on every tick of the run, and
// deferred/tick the ghost records per tick that waited for a later
// snapshot for lack of room.
func BenchmarkCubesBusy(b *testing.B) { benchCubes(b, &cubeScene{busy: true}, nil) }

// BenchmarkCubesAllMoving is S1 with every cube moving on every tick
// (cubeScene.circle), at the default budget (one packet a tick) and with
// a bucket of 300,000 bytes a second (up to four packets a tick, the
// most a tick's snapshot takes): bits/record is what a moving cube's
// record costs on the wire, packet headers shared out.
func BenchmarkCubesAllMoving(b *testing.B) {
	b.Run("budget=default", func(b *testing.B) { benchCubes(b, &cubeScene{all: true}, nil) })
	b.Run("budget=300kB", func(b *testing.B) {
		benchCubes(b, &cubeScene{all: true}, func(o *harness.Options) { o.Server.BytesPerSecond = 300_000 })
	})
}

func benchCubes(b *testing.B, scene *cubeScene, opt func(*harness.Options)) {
	schema, err := newSceneSchema()
	if err != nil {
		b.Fatal(err)
	}
	scene.schema = schema
	opts := sceneOptions(schema, 1, scene.setup)
	if opt != nil {
		opt(&opts)
	}
	h, err := harness.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	if !h.RunUntil(holdsAll(h, scene.ids), 30*time.Second) {
		b.Fatal("the client never held all 901 cubes")
	}
	h.Run(time.Second)
	m := newTickMeter(h)
	st0 := h.Server.Stats()
	naive := make([]byte, 0, cubeCount*28)
	prev := make([]cubeState, cubeCount)
	scene.moved(prev)
	var naiveTime time.Duration
	naiveBytes, moved := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		m.tick()
		start := time.Now()
		naive = scene.naiveCubes(naive[:0])
		naiveTime += time.Since(start)
		naiveBytes += len(naive)
		moved += scene.moved(prev)
	}
	st := h.Server.Stats()
	ticks := float64(m.ticks)
	bits := float64(st.BytesSent-st0.BytesSent) * 8 / ticks * 60 / float64(len(h.Clients))
	naiveBits := float64(naiveBytes) * 8 / ticks * 60
	b.ReportMetric(bits, "bits/s-client")
	b.ReportMetric(naiveBits, "naive-bits/s-client")
	b.ReportMetric(100*bits/naiveBits, "%-of-naive")
	b.ReportMetric(100*float64(moved)/ticks/cubeCount, "moving-%")
	b.ReportMetric(float64(st.GhostsDeferred-st0.GhostsDeferred)/ticks, "deferred/tick")
	if records := st.GhostRecords - st0.GhostRecords; records > 0 {
		b.ReportMetric(float64(st.BytesSent-st0.BytesSent)*8/float64(records), "bits/record")
	}
	b.ReportMetric(float64(st.GhostStaleness), "max-staleness-ticks")
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
// losing 1 % each way, once every client holds every ghost and five
// seconds more have passed: the acknowledgements are in, and every
// connection's ring of 256 sent snapshots has been round once (its
// records have their capacity). One op is one server tick
// (server, 16 clients, links). server-us/tick is the server's Update
// time per tick alone: a twin of the server run again on the clients'
// recorded traffic (serverbench), as a deployed server runs, its clients
// elsewhere (the fastest of three such runs); shared-us/tick times the server's Update in the harness,
// where the 16 client worlds pass through the same caches between its
// ticks. The naive baseline, measured in the same loop on the same
// values: encoding/binary of every ghost's float32 position for each
// connection every tick (12 bytes per ghost), its time per tick and its
// bytes per client and tick.
func BenchmarkIdle(b *testing.B) {
	schema, err := newSceneSchema()
	if err != nil {
		b.Fatal(err)
	}
	scene := &staticScene{schema: schema, n: idleGhosts}
	twin := &staticScene{schema: schema, n: idleGhosts}
	h, rec, build, err := recordedScene(schema, idleClients, scene.setup, twin.setup)
	if err != nil {
		b.Fatal(err)
	}
	if !h.RunUntil(holdsAll(h, scene.ids), 60*time.Second) {
		b.Fatal("the clients never held all 10,000 ghosts")
	}
	h.Run(5 * time.Second)
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
	us, allocs := m.alone(b, rec, build)
	b.ReportMetric(us, "server-us/tick")
	b.ReportMetric(allocs, "server-allocs/tick")
	b.ReportMetric(m.serverMicros(), "shared-us/tick")
	b.ReportMetric(float64(h.Server.Stats().BytesSent-sent)/ticks/clients, "bytes/client-tick")
	b.ReportMetric(float64(naiveTime.Nanoseconds())/1e3/ticks, "naive-us/tick")
	b.ReportMetric(float64(naiveBytes)/ticks/clients, "naive-bytes/client-tick")
}
