package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// Seq is an input that numbers itself: the sampler counts its calls, and
// every fifth one presses Jump, so the server can tell an input dropped
// (a number missing), doubled (one applied twice) or a press lost.
type Seq struct {
	N    int32
	Jump components.Press
}

func (s *Seq) Serialize(st *netsync.Stream) {
	netsync.Int(st, &s.N, 0, 1<<20)
	st.Press(&s.Jump)
}

// seqRun is a one-client match of a player moved by Seq inputs, with what
// each end saw of them.
type seqRun struct {
	h *harness.Harness
	// applied holds, tick by tick, the inputs the server applied (N > 0:
	// sampled, not the neutral ones before the player existed).
	applied []Seq
	// sampled counts the sampler's calls, presses its presses; predicted
	// counts the presses the client predicted on a tick's first run;
	// latency the ticks between sampling an input and predicting it
	// first, by its number.
	sampled, presses, predicted int
	latency                     map[int32]int
	sampledAt                   map[int32]gw.Tick
}

func newSeqRun(t *testing.T, lk harness.ClientSpec, delay systems.InputDelay) *seqRun {
	t.Helper()
	r := &seqRun{latency: map[int32]int{}, sampledAt: map[int32]gw.Tick{}}
	var b netsync.SchemaBuilder
	player := b.GhostType("player", netsync.Component[Pos](&b))
	netsync.Input[Seq](&b, netsync.InputRules[Seq]{})
	schema, err := b.Build()
	require.NoError(t, err)
	move := func(*gw.World) gw.System {
		movers := generic.NewFilter2[Pos, Seq]().With(generic.T[components.Predicted]())
		return gw.SystemFunc(func(w *gw.World) {
			q := movers.Query(w.Arche())
			for q.Next() {
				p, in := q.Get()
				p.X += float32(in.N%7) / 64
			}
		})
	}
	game := &systems.Game{Schema: schema, Prediction: []func(*gw.World) gw.System{move},
		OnConnect: func(w *gw.World, _ components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap1[Pos](w.Arche())
			return m.NewWith(&Pos{}), player, nil
		}}
	lk.Options.InputDelay = delay
	lk.Options.SyncTest = 4
	lk.Options.Input = systems.InputFunc(func(w *gw.World, tick gw.Tick) Seq {
		r.sampled++
		in := Seq{N: int32(r.sampled)}
		r.sampledAt[in.N] = w.Tick()
		if r.sampled%5 == 0 {
			in.Jump = 1
			r.presses++
		}
		return in
	})
	inputs := generic.NewFilter2[Seq, components.InputHeader]()
	r.h, err = harness.New(harness.Options{Seed: 3, Game: game, Clients: []harness.ClientSpec{lk},
		SetupServer: func(s *systems.Server) error {
			s.Schedule().Add(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
				q := inputs.Query(w.Arche())
				for q.Next() {
					if in, _ := q.Get(); in.N > 0 {
						r.applied = append(r.applied, *in)
					}
				}
			}))
			return nil
		},
		SetupClient: func(_ int, c *systems.Client) error {
			own := generic.NewFilter1[Seq]().With(generic.T[components.Predicted]())
			c.Schedule().AddSideEffect(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
				q := own.Query(w.Arche())
				for q.Next() {
					in := q.Get()
					if in.N == 0 {
						continue
					}
					if _, seen := r.latency[in.N]; !seen {
						r.latency[in.N] = int(w.Tick().Sub(r.sampledAt[in.N]))
					}
					if in.Jump.Pressed() {
						r.predicted++
					}
				}
			}))
			return nil
		}})
	require.NoError(t, err)
	return r
}

// checkEveryInputOnce asserts that the server applied the sampled inputs
// in order, each exactly once and with its press, up to the newest it
// had: none dropped, none doubled.
func (r *seqRun) checkEveryInputOnce(t *testing.T) {
	t.Helper()
	require.NotEmpty(t, r.applied)
	for i, in := range r.applied {
		require.Equalf(t, int32(i+1), in.N, "the %dth input the server applied", i+1)
		require.Equalf(t, in.N%5 == 0, in.Jump.Pressed(), "input %d's press", in.N)
	}
	assert.Greater(t, len(r.applied), r.sampled-20, "the server applied all but the newest inputs")
	assert.NoError(t, r.h.Clients[0].Stats().FirstDesync, "the determinism check passes")
	assert.Greater(t, r.h.Clients[0].Stats().SyncTestChecks, uint64(100))
}

func clean100() harness.ClientSpec { return harness.ClientSpec{Link: link(100*time.Millisecond, 0, 0)} }

// A fixed delay of 3 ticks: every input is predicted 3 ticks after it was
// sampled, the server applies it on the tick it was stamped for, and the
// client runs 3 ticks less far ahead.
func TestFixedInputDelayAppliesTheInputLater(t *testing.T) {
	plain := newSeqRun(t, clean100(), systems.InputDelay{})
	plain.h.Run(3 * time.Second)
	r := newSeqRun(t, clean100(), systems.InputDelay{Ticks: 3})
	r.h.Run(3 * time.Second)
	r.checkEveryInputOnce(t)
	st := r.h.Clients[0].Stats()
	assert.Equal(t, 3, st.InputDelay)
	assert.Zero(t, st.InputDelayChanges)
	assert.Zero(t, st.Mispredictions)
	for n, d := range r.latency {
		require.Equalf(t, 3, d, "input %d: ticks from sampling to its first prediction", n)
	}
	for n, d := range plain.latency {
		require.Zerof(t, d, "input %d without a delay", n)
	}
	assert.InDelta(t, plain.h.Clients[0].Stats().Ahead-3, st.Ahead, 0.5, "3 ticks less ahead of the server")
	assert.Equal(t, plain.h.Server.Stats().InputsMissing, r.h.Server.Stats().InputsMissing, "the inputs arrive as early as without a delay")
}

// The delay changes mid-game, up and down by several ticks: the server
// applies every sampled input once, in order, presses included; the
// client predicts every press once; the determinism check passes.
func TestInputDelayChangesWithoutDroppingOrDoublingAnInput(t *testing.T) {
	r := newSeqRun(t, clean100(), systems.InputDelay{})
	c := r.h.Clients[0]
	r.h.Run(2 * time.Second)
	steps := uint64(0)
	for _, d := range []int{3, 1, 4, 0, 2} {
		require.NoError(t, c.SetInputDelay(systems.InputDelay{Ticks: d}))
		before := c.Stats().InputDelay
		r.h.Run(time.Second)
		assert.Equalf(t, d, c.Stats().InputDelay, "the delay in use a second after asking for %d", d)
		steps += uint64(max(d-before, before-d))
	}
	r.h.Run(time.Second)
	assert.Equal(t, steps, c.Stats().InputDelayChanges, "a tick per step")
	r.checkEveryInputOnce(t)
	missing := r.h.Server.Stats().InputsMissing
	r.h.Run(time.Second)
	assert.Equal(t, missing, r.h.Server.Stats().InputsMissing, "no tick of the server waits for an input")
	n := 0
	for _, in := range r.applied {
		if in.Jump.Pressed() && int(in.N) <= r.sampled {
			n++
		}
	}
	assert.InDelta(t, r.predicted, n, float64(10/5+1), "the client predicted each press once (the newest not yet applied by the server)")
}

// The adaptive delay covers half the round trip and twice the jitter,
// within its bounds, and never more than the link leaves room for.
func TestAdaptiveInputDelayFollowsTheLink(t *testing.T) {
	for _, tc := range []struct {
		rtt      time.Duration
		min, max int
		want     int
	}{
		{200 * time.Millisecond, 0, 4, 4}, // 6 ticks wanted, 4 at most
		{200 * time.Millisecond, 0, 8, 7}, // ⌈(100 ms + 2·jitter) / 16.7 ms⌉: a tick of the RTT's spread
		{40 * time.Millisecond, 0, 4, 2},
		{0, 2, 4, 0}, // no room for the minimum: the prediction stays ahead of the snapshots
	} {
		r := newSeqRun(t, harness.ClientSpec{Link: link(tc.rtt, 0, 0)}, systems.InputDelay{Adaptive: true, Min: tc.min, Max: tc.max})
		r.h.Run(4 * time.Second)
		st := r.h.Clients[0].Stats()
		assert.Equalf(t, tc.want, st.InputDelay, "RTT %v, bounds %d..%d (measured RTT %v ±%v)", tc.rtt, tc.min, tc.max, st.RTT, st.Jitter)
		assert.Equalf(t, uint64(1), st.HardCorrections, "RTT %v: the first snapshot only, adopted before anything was predicted", tc.rtt)
		r.checkEveryInputOnce(t)
	}
}

// A fixed delay longer than the link leaves room for is limited to it:
// the prediction stays ahead of the snapshots (no hard correction).
func TestInputDelayIsLimitedByTheLink(t *testing.T) {
	r := newSeqRun(t, harness.ClientSpec{Link: link(50*time.Millisecond, 0, 0)}, systems.InputDelay{Ticks: 10})
	r.h.Run(3 * time.Second)
	st := r.h.Clients[0].Stats()
	assert.Less(t, st.InputDelay, 10)
	assert.Positive(t, st.InputDelay)
	assert.Equal(t, uint64(1), st.HardCorrections, "the first snapshot only, adopted before anything was predicted")
	assert.Zero(t, st.Mispredictions)
	r.checkEveryInputOnce(t)
}

func TestInputDelayRefusesBadSettings(t *testing.T) {
	g := newTestGame()
	for _, tc := range []struct {
		opts systems.ClientOptions
		want string
	}{
		{systems.ClientOptions{InputDelay: systems.InputDelay{Ticks: -1}}, "systems: input delay -1 ticks outside 0..30"},
		{systems.ClientOptions{InputDelay: systems.InputDelay{Ticks: 31}}, "systems: input delay 31 ticks outside 0..30"},
		{systems.ClientOptions{InputDelay: systems.InputDelay{Max: 3}}, "systems: input delay bounds 0..3 set without Adaptive"},
		{systems.ClientOptions{InputDelay: systems.InputDelay{Adaptive: true, Ticks: 2}}, "systems: input delay of 2 ticks set with Adaptive: bound it with Min and Max"},
		{systems.ClientOptions{InputDelay: systems.InputDelay{Adaptive: true, Min: 3, Max: 2}}, "systems: adaptive input delay bounds 3..2 outside 0 ≤ min ≤ max ≤ 30"},
		{systems.ClientOptions{InputDelay: systems.InputDelay{Adaptive: true, Max: 31}}, "systems: adaptive input delay bounds 0..31 outside 0 ≤ min ≤ max ≤ 30"},
		{systems.ClientOptions{HistoryCapacity: 128, InputHistory: 130, InputDelay: systems.InputDelay{Ticks: 3}},
			"systems: input stream capacity 130 is below the history capacity 128 plus the input delay 3: a long rollback would replay without inputs"},
	} {
		_, err := systems.NewClient(&gw.VirtualTime{}, nil, g.game(), tc.opts)
		assert.EqualError(t, err, tc.want)
	}

	r := newSeqRun(t, clean100(), systems.InputDelay{Ticks: 2})
	c := r.h.Clients[0]
	assert.EqualError(t, c.SetInputDelay(systems.InputDelay{Ticks: 300}), "systems: input delay 300 ticks outside 0..30")
	r.h.Run(time.Second)
	assert.Equal(t, 2, c.Stats().InputDelay, "a refused setting changes nothing")
}
