package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// Big is a 64 KiB message.
type Big struct {
	Data [64 << 10]byte
	N    uint32
}

func (m *Big) Serialize(s *netsync.Stream) { s.Bytes(m.Data[:], &m.N) }

// messageBound is the most a reliable message of any size adds to the
// delay of a snapshot or an input on a link of bandwidth bytes per
// second (docs/messages.md): the bytes of one tick's message budget R,
// the last entry's overshoot of up to 1,191 bytes, and the 9-byte header
// of each packet carrying them, on a link that carries a tick's traffic
// and those bytes within the tick.
func messageBound(bytesPerSecond, tickRate, bandwidth int) time.Duration {
	entries := bytesPerSecond/tickRate + 1191
	packets := (entries + 1190) / 1191
	return time.Duration(entries+packet.HeaderSize*packets) * time.Second / time.Duration(bandwidth)
}

// transfer is what one 64 KiB message did beside a full snapshot stream.
type transfer struct {
	base, worst time.Duration // the longest snapshot delay before and during the transfer
	leadDrop    float64       // how much the client's lead (its inputs' margin) fell, in ticks
	took        time.Duration // from the send to the handler
	late        uint64        // inputs that arrived after their tick ran
}

// sendBig sends one 64 KiB message over a 300,000-byte-a-second link of
// 50 ms latency, to the client or to the server, while 400 moving ghosts
// fill every snapshot at 60 Hz, with the given message budget (0: the
// default); it measures every snapshot's delay (its arrival at the client
// less the server's tick that sent it) and the client's lead.
func sendBig(t *testing.T, budget int, toServer bool) transfer {
	g := newTestGameWith(func(b *netsync.SchemaBuilder) { netsync.Message[Big](b, netsync.MessageRules{}) })
	lk := transport.LinkConfig{Latency: 50 * time.Millisecond, Bandwidth: 300_000}
	opts := g.options(1, transport.Conditions{Up: lk, Down: lk})
	opts.Server.MessageBytesPerSecond = budget
	opts.Clients[0].Options.MessageBytesPerSecond = budget
	opts.SetupServer = func(s *systems.Server) error {
		m := generic.NewMap2[Pos, Speed](s.World().Arche())
		for i := range 400 {
			if _, err := s.Ghosts().Spawn(m.NewWith(&Pos{X: float32(i) - 200}, &Speed{V: 1}), g.player, 0); err != nil {
				return err
			}
		}
		pos := generic.NewFilter1[Pos]()
		s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
			q := pos.Query(w.Arche())
			for q.Next() {
				p := q.Get()
				p.X += 0.05
				if p.X > 900 {
					p.X = -900
				}
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	c := h.Clients[0]
	got := false
	w := c.World()
	if toServer {
		w = h.Server.World()
	}
	require.NoError(t, systems.Handle(w, func(_ *gw.World, _ systems.Envelope, m *Big) { got = m.N == 64<<10 }))
	require.True(t, h.RunUntil(c.Connected, 5*time.Second))

	sentAt := map[gw.Tick]time.Duration{}
	sw := h.Server.World()
	lastSent, newest := sw.Tick(), gw.Tick(0)
	var worst time.Duration
	minLead := 1e9
	step := func() {
		h.Step()
		now := h.Time.Now()
		for ; lastSent != sw.Tick(); lastSent++ {
			sentAt[lastSent+1] = now
		}
		st := c.Stats()
		for ; st.SnapshotsReceived > 0 && newest.Before(st.NewestSnapshot); newest++ {
			if at, ok := sentAt[newest+1]; ok {
				worst = max(worst, now-at)
			}
		}
		if st.Lead != 0 {
			minLead = min(minLead, st.Lead)
		}
	}
	for range 3000 { // settle: the clock, the lead, the ghosts' first records
		step()
	}
	newest = c.Stats().NewestSnapshot
	worst, minLead = 0, 1e9
	for range 1000 {
		step()
	}
	var tr transfer
	tr.base, worst = worst, 0
	baseLead := minLead
	minLead = 1e9
	late := h.Server.Stats().InputsLate
	assert.Positive(t, h.Server.Stats().GhostsDeferred, "every snapshot is full")

	big := &Big{N: 64 << 10}
	for i := range big.Data {
		big.Data[i] = byte(i)
	}
	start := h.Time.Now()
	if toServer {
		require.NoError(t, systems.SendToServer(c.World(), c.World().Tick(), big))
	} else {
		require.NoError(t, systems.SendToClients(sw, systems.ToAll(), sw.Tick(), big))
	}
	for !got && h.Time.Now()-start < 5*time.Second {
		step()
	}
	require.True(t, got, "the message arrived whole")
	tr.took = h.Time.Now() - start
	for range 200 { // the snapshots sent last arrive
		step()
	}
	tr.worst, tr.leadDrop = worst, baseLead-minLead
	tr.late = h.Server.Stats().InputsLate - late
	return tr
}

// A 64 KiB message sent beside a full snapshot stream at 60 Hz, either
// way, delays no snapshot and no input by more than the stated bound:
// the server sends each tick's snapshot, and the client each tick's
// inputs, before at most one tick's message budget (MessageBytesPerSecond
// / TickRate, 2,133 bytes by default), so on a link that carries a tick's
// traffic and that budget within the tick nothing waits behind more than
// one tick's message bytes: 11.2 ms on this 300,000-byte-a-second link.
// Sent in one burst (an unlimited budget), the same message delays the
// snapshots behind it by over 200 ms.
func TestALargeMessageDelaysNoSnapshotBeyondTheBound(t *testing.T) {
	bound := messageBound(128_000, 60, 300_000)
	require.Equal(t, 11170*time.Microsecond, bound)
	tick := float64(time.Second / 60)

	down := sendBig(t, 0, false)
	t.Logf("to the client: snapshots delayed at most %v before, %v during; 64 KiB in %v", down.base, down.worst, down.took)
	assert.LessOrEqual(t, down.worst-down.base, bound, "no snapshot delayed beyond the bound")
	assert.Less(t, down.took, 900*time.Millisecond, "31 ticks of 2,133 bytes, and the latency")

	up := sendBig(t, 0, true)
	t.Logf("to the server: lead fell by %.3f ticks; 64 KiB in %v", up.leadDrop, up.took)
	assert.LessOrEqual(t, up.leadDrop*tick, float64(bound), "no input delayed beyond the bound")
	assert.Zero(t, up.late, "no input late")
	assert.LessOrEqual(t, up.worst-up.base, bound)

	burst := sendBig(t, 1_000_000_000, false)
	t.Logf("in one burst: snapshots delayed at most %v during", burst.worst)
	assert.Greater(t, burst.worst-burst.base, 200*time.Millisecond, "without the budget, 64 KiB at 300,000 bytes a second")
	burstUp := sendBig(t, 1_000_000_000, true)
	t.Logf("in one burst to the server: lead fell by %.3f ticks, %d inputs late", burstUp.leadDrop, burstUp.late)
	assert.Greater(t, burstUp.leadDrop*tick, float64(200*time.Millisecond))
}
