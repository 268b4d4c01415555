package systems_test

import (
	"math"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// wrapRun is what one run of the test game measured, split at the
// boundary tick.
type wrapRun struct {
	missing, mispredicted [2]uint64 // before and after the boundary
	// rollbacks counts the second client's rollbacks after the boundary:
	// it rolls back on every snapshot.
	rollbacks uint64
	// leadError is the largest distance of a client's input lead (as the
	// server reports it) from its 1-tick target, at the boundary and at
	// the end.
	leadError [2]float64
	// wrongBlends counts frames whose interpolated remote ghost differed
	// from the blend of the server's states around the render tick (as it
	// must when a snapshot of a turn was lost: the client blends across
	// it), maxError is the largest difference, blends the frames checked.
	wrongBlends, blends int
	maxError            float64
	// stalls counts frames whose render tick did not advance.
	stalls int
	// confirmedPast reports whether every client's confirmed tick reached
	// 500 ticks past the boundary, never going back.
	confirmedPast bool
	server        systems.ServerStats
}

// runAcross runs the test game with two clients on a lossy link, the
// server starting 600 ticks (10 s) before boundary, for 22 s of moving
// and 2 s of standing still, and measures before and after the boundary.
func runAcross(t *testing.T, boundary gw.Tick) wrapRun {
	t.Helper()
	g := newTestGame()
	opts := g.options(2, link(100*time.Millisecond, 10*time.Millisecond, 0.02))
	opts.Server.StartTick = boundary.Add(-600)
	opts.Clients[1].Options.RollbackAlways = true
	end := 22 * time.Second
	var now func() time.Duration
	for i := range opts.Clients {
		opts.Clients[i].Options.Input = systems.InputFunc(func(_ *gw.World, tick gw.Tick) Move {
			switch {
			case now() >= end:
				return Move{}
			case tick/30%2 == 0:
				return Move{X: 1}
			}
			return Move{X: -0.5}
		})
	}
	serverPos := map[gw.Tick]float32{}
	opts.SetupServer = func(s *systems.Server) error {
		s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
			if e, ok := s.Ghosts().Entity(2); ok {
				m := generic.NewMap[Pos](w.Arche())
				serverPos[w.Tick()] = m.Get(e).X
			}
		}))
		return nil
	}
	var r wrapRun
	lastRT := math.Inf(-1)
	// Every frame of the first client, check the remote player against
	// the server's states around the render tick.
	opts.SetupClient = func(i int, c *systems.Client) error {
		if i != 0 {
			return nil
		}
		ipos := generic.NewMap2[Pos, components.Interpolated](c.World().Arche())
		iid := ecs.ComponentID[components.Interpolated](c.World().Arche())
		c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
			e, ok := c.Ghosts().Entity(2)
			if !ok || !w.Arche().Has(e, iid) {
				return
			}
			// A ghost shown at rest is not written (its Interpolated.Tick
			// stays): the render tick is the client's.
			p, in := ipos.Get(e)
			rt := c.Stats().RenderTick
			if rt <= lastRT {
				r.stalls++
			}
			lastRT = rt
			if in.Extrapolated || in.Teleported {
				return
			}
			tk, frac := gw.TickAt(rt)
			a, okA := serverPos[tk]
			b, okB := serverPos[tk.Add(1)]
			if !okA || !okB {
				return
			}
			r.blends++
			want := a + (b-a)*float32(frac)
			if d := math.Abs(float64(want - p.X)); d > 1e-3 {
				r.wrongBlends++
				r.maxError = max(r.maxError, d)
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	now = h.Time.Now
	require.Equal(t, boundary.Add(-600), h.Server.World().Tick())

	confirmed := make([]gw.Tick, len(h.Clients))
	hasConfirmed := make([]bool, len(h.Clients))
	backwards := false
	split := false
	for h.Time.Now() < end+2*time.Second {
		h.Step()
		if !split && !h.Server.World().Tick().Before(boundary) {
			split = true
			st := h.Server.Stats()
			r.missing[0] = st.InputsMissing
			for _, c := range h.Clients {
				r.mispredicted[0] += c.Stats().Mispredictions
			}
			r.rollbacks = h.Clients[1].Stats().Rollbacks
			for _, c := range h.Clients {
				r.leadError[0] = max(r.leadError[0], math.Abs(c.Stats().Lead-1))
			}
		}
		for i, c := range h.Clients {
			if st := c.Stats(); st.HasConfirmed {
				tk := st.Confirmed
				if hasConfirmed[i] && tk.Before(confirmed[i]) {
					backwards = true
				}
				confirmed[i], hasConfirmed[i] = tk, true
			}
		}
	}
	require.True(t, split, "the server reached the boundary")
	st := h.Server.Stats()
	r.server = st
	r.missing[1] = st.InputsMissing - r.missing[0]
	for _, c := range h.Clients {
		r.mispredicted[1] += c.Stats().Mispredictions
		assert.True(t, c.Connected())
		assert.Zero(t, c.Stats().BadPackets, "boundary %d", boundary)
	}
	r.mispredicted[1] -= r.mispredicted[0]
	r.rollbacks = h.Clients[1].Stats().Rollbacks - r.rollbacks
	for _, c := range h.Clients {
		r.leadError[1] = max(r.leadError[1], math.Abs(c.Stats().Lead-1))
	}
	r.confirmedPast = !backwards
	for i := range h.Clients {
		r.confirmedPast = r.confirmedPast && hasConfirmed[i] && confirmed[i].Sub(boundary) > 500
	}
	// Standing still for 2 s: every client's prediction at the server's
	// tick is the server's state, and its view of the other player too.
	for i, c := range h.Clients {
		id := components.GhostID(i + 1)
		e, ok := c.Ghosts().Entity(id)
		require.True(t, ok)
		predicted, ok := gw.ValueAt[Pos](c.World().History(), h.Server.World().Tick(), e)
		require.True(t, ok)
		server, _, _ := positions(h, i, id)
		assert.Equal(t, server, predicted.X, "client %d converged", i)
		other := components.GhostID(2 - i)
		oe, ok := c.Ghosts().Entity(other)
		require.True(t, ok)
		server, _, _ = positions(h, 1-i, other)
		m := generic.NewMap[Pos](c.World().Arche())
		assert.Equal(t, server, m.Get(oe).X, "client %d shows the other player where it stopped", i)
	}
	return r
}

// The server and its clients run across 2³¹ and 2³² as they run anywhere
// else: inputs applied on every tick, confirmations advancing, rollback
// and interpolation working, nothing refused for its tick.
func TestRunAcrossTheTickWrap(t *testing.T) {
	far := runAcross(t, 1<<20)
	t.Logf("far from the wrap: inputs missing %v, mispredictions %v, rollbacks after %d, lead error %.2f, blends %d (%d off, by at most %.3f), stalls %d",
		far.missing, far.mispredicted, far.rollbacks, far.leadError, far.blends, far.wrongBlends, far.maxError, far.stalls)
	for _, boundary := range []gw.Tick{1 << 31, 0} { // 0 is 2³²
		r := runAcross(t, boundary)
		t.Logf("across tick %d: inputs missing %v, mispredictions %v, rollbacks after %d, lead error %.2f, blends %d (%d off, by at most %.3f), stalls %d",
			boundary, r.missing, r.mispredicted, r.rollbacks, r.leadError, r.blends, r.wrongBlends, r.maxError, r.stalls)
		assert.Zero(t, r.server.InputsRejected, "boundary %d", boundary)
		assert.Zero(t, r.server.BadPackets, "boundary %d", boundary)
		assert.Zero(t, r.server.InputsAhead, "boundary %d: no input refused as too far ahead", boundary)
		assert.LessOrEqual(t, r.missing[1], r.missing[0]+10, "boundary %d: missing inputs do not grow across the wrap", boundary)
		assert.LessOrEqual(t, r.missing[1], far.missing[1]+10, "boundary %d", boundary)
		assert.LessOrEqual(t, r.mispredicted[1], far.mispredicted[1]+5, "boundary %d: mispredictions as far from the wrap", boundary)
		assert.GreaterOrEqual(t, r.rollbacks, far.rollbacks-10, "boundary %d: rollbacks go on across the wrap", boundary)
		// On this lossy link the lead is the earliest of a second's
		// arrivals, a lost packet's input among them: it steps by a send
		// interval as a loss enters and leaves the window, so the bound is
		// less than one tick and the same as far from the wrap.
		assert.Less(t, r.leadError[0], 1.0, "boundary %d: clock sync steered the clients before the wrap", boundary)
		assert.Less(t, r.leadError[1], 1.0, "boundary %d: and after it", boundary)
		assert.LessOrEqual(t, r.leadError[1], far.leadError[1]+0.25, "boundary %d: as far from the wrap", boundary)
		assert.True(t, r.confirmedPast, "boundary %d: confirmations advance past the wrap", boundary)
		assert.Zero(t, r.stalls, "boundary %d: the render tick never stalls nor goes back", boundary)
		assert.LessOrEqual(t, r.wrongBlends, far.wrongBlends+10, "boundary %d: the remote player is drawn as far from the wrap", boundary)
		assert.Less(t, r.maxError, 0.1, "boundary %d: no jump at the wrap", boundary)
		assert.Greater(t, r.blends, 1000, "boundary %d", boundary)
	}
}

// Snapshots keep their spacing across 2³², which is no multiple of a send
// interval of 3: the client sees one every third tick throughout.
func TestSnapshotSpacingAcrossTheTickWrap(t *testing.T) {
	g := newTestGame()
	opts := g.options(1, link(50*time.Millisecond, 0, 0))
	opts.Server.SendInterval = 3
	opts.Server.StartTick = 1<<32 - 300
	h, err := harness.New(opts)
	require.NoError(t, err)
	var gaps []int32
	last, seen := gw.Tick(0), false
	for h.Time.Now() < 10*time.Second {
		h.Step()
		st := h.Clients[0].Stats()
		if st.SnapshotsReceived == 0 {
			continue
		}
		if n := st.NewestSnapshot; !seen || n != last {
			if seen {
				gaps = append(gaps, n.Sub(last))
			}
			last, seen = n, true
		}
	}
	require.Greater(t, len(gaps), 150)
	assert.True(t, last.Sub(0) > 200, "ran past the wrap: the newest snapshot is of tick %d", last)
	for i, gap := range gaps {
		require.Equal(t, int32(3), gap, "gap %d", i)
	}
	st := h.Clients[0].Stats()
	assert.Equal(t, 0.0, st.SnapshotLoss, "no snapshot taken for lost")
	assert.InDelta(t, 100*time.Millisecond, st.InterpolationDelay, float64(time.Microsecond), "two send intervals")
}
