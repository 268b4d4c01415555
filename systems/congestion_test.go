package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// bottleneck is the last hop before a client: a link of rate bytes per
// second (none when 0) with a drop-tail queue of limit bytes, on the
// client's end of its memory link. What arrives while the queue is full
// is dropped and counted.
type bottleneck struct {
	transport.Conn
	now   func() time.Duration
	rate  int
	limit int
	queue []held
	bytes int           // queued
	free  time.Duration // when the hop has sent every queued datagram
	buf   []byte
	// in and dropped count the datagrams that reached the hop and those
	// it dropped.
	in, dropped int
}

type held struct {
	at   time.Duration
	data []byte
}

func (b *bottleneck) Receive(p []byte) (int, bool) {
	now := b.now()
	for {
		n, ok := b.Conn.Receive(b.buf)
		if !ok {
			break
		}
		b.in++
		if b.rate > 0 && b.bytes+n > b.limit {
			b.dropped++
			continue
		}
		at := max(b.free, now)
		if b.rate > 0 {
			at += time.Duration(int64(n) * int64(time.Second) / int64(b.rate))
		}
		b.free = at
		b.queue = append(b.queue, held{at: at, data: append([]byte(nil), b.buf[:n]...)})
		b.bytes += n
	}
	if len(b.queue) == 0 || b.queue[0].at > now {
		return 0, false
	}
	d := b.queue[0]
	b.queue = b.queue[1:]
	b.bytes -= len(d.data)
	return copy(p, d.data), true
}

// A client whose downlink drops to 32 KB/s for 10 s (a drop-tail queue
// of half a second) and recovers, fed 600 moving crates at the default
// budget (one 1,200-byte packet a tick at 60 Hz, 72 KB/s): its snapshot
// budget falls below the link's rate within a second, the hop drops
// under 5 % of the datagrams during the dip, and the budget is back near
// its maximum within 3 s after. With congestion control off, the same
// dip loses more than half of them.
func TestBudgetFollowsALinkThatThins(t *testing.T) {
	const (
		crates = 600
		thin   = 32_000
		top    = 72_000 // (1188 + 12) bytes × 60
	)
	run := func(off bool) (hop *bottleneck, fell, back time.Duration, lowest int, mean float64) {
		g := newTestGame()
		opts := g.options(1, link(100*time.Millisecond, 0, 0))
		opts.Server.Congestion.Off = off
		opts.SetupServer = func(s *systems.Server) error {
			m := generic.NewMap2[Pos, Speed](s.World().Arche())
			var es []ecs.Entity
			for i := range crates {
				e := m.NewWith(&Pos{X: float32(i) - 300}, &Speed{})
				if _, err := s.Ghosts().Spawn(e, g.player, 0); err != nil {
					return err
				}
				es = append(es, e)
			}
			pos := generic.NewMap[Pos](s.World().Arche())
			s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
				for _, e := range es {
					pos.Get(e).X += 0.25 // every crate moves every tick: a full packet always
				}
			}))
			return nil
		}
		opts.Clients[0].Wrap = func(c transport.Conn) transport.Conn {
			hop = &bottleneck{Conn: c, limit: thin / 2, buf: make([]byte, transport.MaxDatagramSize)}
			return hop
		}
		h, err := harness.New(opts)
		require.NoError(t, err)
		hop.now = h.Time.Now
		h.Run(5 * time.Second)
		conn := (*ghostreg.ClientRegister)(h.Clients[0].Ghosts()).Conn()
		budget := func() int {
			st, ok := h.Server.ConnStats(conn)
			require.True(t, ok)
			return st.Budget
		}
		require.Equal(t, top, budget(), "a clean link: the budget is at its maximum")

		hop.rate, hop.in, hop.dropped = thin, 0, 0
		start, lowest := h.Time.Now(), top
		fell = -1
		samples := 0
		for h.Time.Now()-start < 10*time.Second {
			h.Run(10 * time.Millisecond)
			b := budget()
			if b <= thin && fell < 0 {
				fell = h.Time.Now() - start
			}
			lowest = min(lowest, b)
			mean += float64(b)
			samples++
		}
		mean /= float64(samples)
		hop.rate = 0
		start, back = h.Time.Now(), -1
		for h.Time.Now()-start < 5*time.Second && back < 0 {
			h.Run(10 * time.Millisecond)
			if budget() >= top*9/10 {
				back = h.Time.Now() - start
			}
		}
		return hop, fell, back, lowest, mean
	}

	hop, fell, back, lowest, mean := run(false)
	loss := float64(hop.dropped) / float64(hop.in)
	t.Logf("adaptive: the budget fell to %d B/s after %v (mean %.0f, lowest %d in the dip), the hop dropped %d of %d datagrams (%.2f %%) in the dip, back to 90 %% %v after",
		thin, fell, mean, lowest, hop.dropped, hop.in, 100*loss, back)
	assert.True(t, fell >= 0 && fell <= time.Second, "the budget falls within a second: %v", fell)
	assert.Less(t, loss, 0.05, "under 5 % lost during the dip")
	assert.Greater(t, lowest, 8_000, "the floor holds")
	assert.True(t, back >= 0 && back <= 3*time.Second, "the budget is back within 3 s: %v", back)

	hop, _, _, lowest, _ = run(true)
	loss = float64(hop.dropped) / float64(hop.in)
	t.Logf("off: the hop dropped %d of %d datagrams (%.2f %%) in the dip", hop.dropped, hop.in, 100*loss)
	assert.Equal(t, top, lowest, "off: the budget stays at its maximum")
	assert.Greater(t, loss, 0.4, "off: the dip loses what the link cannot carry")
}
