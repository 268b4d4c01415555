package game

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/harness/serverbench"
	"github.com/ghostwire/ghostwire/transport"
)

// scaleMeter advances a match's harness one server tick at a time the
// way harness.Step does (1 ms steps, every client updated after the
// server, client frames at 60 Hz), timing the server's Update apart from
// the clients'.
type scaleMeter struct {
	h         *harness.Harness
	nextFrame time.Duration
	server    time.Duration
	ticks     int
	sent      uint64 // the server's BytesSent when measuring began
	deferred  uint64 // and its GhostsDeferred
	records   uint64 // GhostRecords
	shared    uint64 // RecordsShared
	// The server alone: the clients' traffic, recorded from the start,
	// for a twin of the server (see alone); start is when measuring
	// began.
	cfg   Config
	rec   *serverbench.Recorder
	start time.Duration
	// The naive baseline: every player's full state, encoded with
	// encoding/binary for every client every tick.
	players    *generic.Filter4[Position, Velocity, Facing, Health]
	naive      []byte
	naiveTime  time.Duration
	naiveBytes int
}

// newScaleMeter starts a match of n players on cfg, its clients' traffic
// recorded, and warms it up for 10 simulated seconds.
func newScaleMeter(cfg Config, n int) (*scaleMeter, error) {
	rec := &serverbench.Recorder{}
	cfg.Clients, cfg.Duration = n, time.Hour
	cfg.Client = func(_ int, spec *harness.ClientSpec) { spec.Wrap = rec.Wrap(spec.Link) }
	m, err := NewMatch(cfg)
	if err != nil {
		return nil, err
	}
	h := m.Harness
	rec.Now = h.Time.Now
	h.Run(10 * time.Second)
	st := h.Server.Stats()
	return &scaleMeter{h: h, nextFrame: h.Time.Now(), sent: st.BytesSent, deferred: st.GhostsDeferred,
		records: st.GhostRecords, shared: st.RecordsShared,
		cfg: cfg, rec: rec, start: h.Time.Now(),
		players: generic.NewFilter4[Position, Velocity, Facing, Health](), naive: make([]byte, 0, 64*26)}, nil
}

// twin builds a twin of the match's server, built as NewMatch builds it,
// for its recorded traffic (serverbench).
func (m *scaleMeter) twin(b *testing.B) *serverbench.Twin {
	tw, err := serverbench.NewTwin(m.cfg.Seed, m.rec, func(clock *gw.VirtualTime, l transport.Listener) (*systems.Server, error) {
		twin, err := newMatch(m.cfg)
		if err != nil {
			return nil, err
		}
		so := twin.serverOptions()
		so.Logger = slog.New(slog.DiscardHandler)
		s, err := systems.NewServer(clock, l, twin.game(), so)
		if err != nil {
			return nil, err
		}
		return s, twin.setupServer(s)
	})
	if err != nil {
		b.Fatal(err)
	}
	return tw
}

// alone runs twins of the meters' servers on their recorded traffic from
// the start, together, a step each in turn as the loop advanced them,
// three times, and returns each one's Update time per tick over the
// measured ticks (the server's cost without the client worlds in its
// process) and their heap allocations per tick, summed: the least of the
// three runs, as the machine's speed swings from minute to minute and
// the process counts the runtime's own allocations now and then (the
// same binary counts a different handful from run to run). It fails
// when a twin's counters differ from its server's (not the same match).
func alone(b *testing.B, meters []*scaleMeter) (us []float64, allocs float64) {
	us = make([]float64, len(meters))
	least := uint64(math.MaxUint64)
	for run := range 3 {
		twins := make([]*serverbench.Twin, len(meters))
		for i, m := range meters {
			twins[i] = m.twin(b)
		}
		ms, n := serverbench.Run(time.Millisecond, meters[0].start, meters[0].h.Time.Now(), twins...)
		least = min(least, n)
		for i, m := range meters {
			if want, got := m.h.Server.Stats(), twins[i].Server.Stats(); want != got || ms[i].Ticks != m.ticks {
				b.Fatalf("%d players: the twin ran another match (%d ticks, want %d):\n%+v\nwant %+v", m.cfg.Clients, ms[i].Ticks, m.ticks, got, want)
			}
			if t := float64(ms[i].Wall.Nanoseconds()) / 1e3 / float64(m.ticks); run == 0 || t < us[i] {
				us[i] = t
			}
		}
	}
	return us, float64(least) / float64(meters[0].ticks)
}

// encodeNaive encodes every player's position, velocity, facing (float32)
// and health (int16 and uint32 tick) with encoding/binary once per
// client: 26 bytes per player, what a full snapshot without quantization
// or bit packing sends.
func (m *scaleMeter) encodeNaive() {
	start := time.Now()
	le := binary.LittleEndian
	for range m.h.Clients {
		buf := m.naive[:0]
		q := m.players.Query(m.h.Server.World().Arche())
		for q.Next() {
			p, v, f, hp := q.Get()
			buf = le.AppendUint32(buf, math.Float32bits(p.X))
			buf = le.AppendUint32(buf, math.Float32bits(p.Y))
			buf = le.AppendUint32(buf, math.Float32bits(v.X))
			buf = le.AppendUint32(buf, math.Float32bits(v.Y))
			buf = le.AppendUint32(buf, math.Float32bits(f.Yaw))
			buf = le.AppendUint16(buf, uint16(hp.HP))
			buf = le.AppendUint32(buf, uint32(hp.Respawn))
		}
		m.naive = buf
		m.naiveBytes += len(buf)
	}
	m.naiveTime += time.Since(start)
}

// tick steps until the server has run one more tick.
func (m *scaleMeter) tick() {
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

// BenchmarkArenaScale is S2 (docs/performance.md): arena matches of 4, 16
// and 64 bot players at 60 Hz (the arena's default link: 100 ms RTT,
// 10 ms jitter, 1 % loss), warmed up for 10 simulated seconds, then
// advanced one server tick each per op, in turn, so the three share the
// machine's load. Per player count it reports the server's Update time
// per tick alone (server-us/tick-Np: a twin of the server run again on
// the clients' recorded traffic, as a deployed server runs, its clients
// elsewhere; the fastest of three such runs) and in the harness (shared-us/tick-Np: between two of its
// ticks the client worlds pass through the same caches), its bytes on
// the wire per client per tick and per second (packet headers included),
// the ghosts it deferred to a later snapshot per tick, its ghost records
// per tick and the percentage of them copied from record runs (written
// once per tick for all the connections whose baseline is as far back);
// x-64p/16p is the 64-player server cost over the 16-player one (linear
// in players would be 4), x-shared-64p/16p the same in the harness. The naive
// baseline, measured in the same loop on the same values: every player's
// full state encoded with encoding/binary for every client every tick (26
// bytes per player), its time per tick and its bytes per client and tick.
func BenchmarkArenaScale(b *testing.B) {
	players := []int{4, 16, 64}
	meters := make([]*scaleMeter, len(players))
	for i, n := range players {
		m, err := newScaleMeter(DefaultConfig(), n)
		if err != nil {
			b.Fatal(err)
		}
		meters[i] = m
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range meters {
			m.tick()
			m.encodeNaive()
		}
	}
	alone, allocs := alone(b, meters)
	shared := make([]float64, len(players))
	for i, n := range players {
		m := meters[i]
		ticks, clients := float64(m.ticks), float64(n)
		st := m.h.Server.Stats()
		perTick := float64(st.BytesSent-m.sent) / ticks / clients
		shared[i] = float64(m.server.Nanoseconds()) / 1e3 / ticks
		b.ReportMetric(alone[i], fmt.Sprintf("server-us/tick-%dp", n))
		b.ReportMetric(shared[i], fmt.Sprintf("shared-us/tick-%dp", n))
		b.ReportMetric(perTick, fmt.Sprintf("bytes/client-tick-%dp", n))
		b.ReportMetric(perTick*60, fmt.Sprintf("bytes/client-s-%dp", n))
		b.ReportMetric(float64(st.GhostsDeferred-m.deferred)/ticks, fmt.Sprintf("deferred/tick-%dp", n))
		b.ReportMetric(float64(st.GhostRecords-m.records)/ticks, fmt.Sprintf("records/tick-%dp", n))
		b.ReportMetric(100*float64(st.RecordsShared-m.shared)/float64(max(1, st.GhostRecords-m.records)), fmt.Sprintf("run-pct-%dp", n))
		b.ReportMetric(float64(m.naiveTime.Nanoseconds())/1e3/ticks, fmt.Sprintf("naive-us/tick-%dp", n))
		b.ReportMetric(float64(m.naiveBytes)/ticks/clients, fmt.Sprintf("naive-bytes/client-tick-%dp", n))
	}
	b.ReportMetric(allocs, "server-allocs/tick")
	b.ReportMetric(alone[2]/alone[1], "x-64p/16p")
	b.ReportMetric(shared[2]/shared[1], "x-shared-64p/16p")
}
