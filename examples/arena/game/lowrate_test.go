package game

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// poorLink is the bad link: 200 ms RTT, ±40 ms jitter, 8 % loss,
// 3 % duplication and 5 % reordering each way, in the arena the figures
// of these tests were measured in: players alone, no ball, no rockets
// (a rocket whose despawn a loss delays is shown flying on to the
// extrapolation cap, which these figures do not count).
func poorLink(hz, clients int) Config {
	cfg := DefaultConfig()
	cfg.TickRate, cfg.Clients, cfg.Duration = hz, clients, 20*time.Second
	cfg.RTT, cfg.Jitter, cfg.Loss, cfg.Dup, cfg.Reorder = 200*time.Millisecond, 40*time.Millisecond, 8, 3, 5
	cfg.Ball, cfg.Rockets = false, false
	return cfg
}

// honest checks what an honest match must show: converged at the compared
// tick, a footstep per moving input, at least 95 % of the shots (every
// bot's shot is aimed at a player it draws) judged hits, and none refused
// by the window, the fire rate or the claimed origin, which only a cheater
// breaks; the plausible view may refuse 0.5 % (its tolerance is a margin
// on measurements, docs/lagcomp.md).
func honest(t *testing.T, r *Report, name string) {
	t.Helper()
	assert.Truef(t, r.Converged, "%s: converged at tick %d", name, r.ComparedTick)
	for _, c := range r.Clients {
		assert.Equalf(t, c.MovingInputs, c.Footsteps, "%s client %d: a footstep per moving input", name, c.ID)
		assert.Emptyf(t, c.Divergence, "%s client %d", name, c.ID)
	}
	s := r.Server.Shots
	require.Positivef(t, s.Fired, "%s: the bots must shoot", name)
	assert.GreaterOrEqualf(t, float64(s.Hits)/float64(s.Fired), 0.95, "%s: %d of %d aimed shots hit (%v)", name, s.Hits, s.Fired, s.Verdicts)
	for _, rule := range []string{"outside_window", "fire_rate", "origin_mismatch"} {
		assert.Zerof(t, s.Verdicts[rule], "%s: honest shots refused as %s", name, rule)
	}
	assert.LessOrEqualf(t, float64(s.Verdicts["view_implausible"]), 0.005*float64(s.Fired), "%s: honest shots refused as view_implausible", name)
}

// meanDelay is the interpolation delay over the match and the clients, in
// send intervals.
func meanDelay(r *Report) float64 {
	var sum float64
	for _, c := range r.Clients {
		sum += c.InterpDelayMeanMS
	}
	return sum / float64(len(r.Clients)) / (1000 / float64(r.Config.TickRate))
}

func mispredictionsPerSecond(r *Report) float64 {
	var n uint64
	for _, c := range r.Clients {
		n += c.Mispredictions
	}
	return float64(n) / float64(len(r.Clients)) / r.Config.DurationS
}

// At 20 and 30 Hz on the poor link shots register, matches converge and
// the interpolation delay stays under three snapshot intervals at 20 Hz.
func TestHonestPlayAtLowTickRatesOnAPoorLink(t *testing.T) {
	for _, hz := range []int{20, 30} {
		for _, n := range []int{3, 12} {
			name := fmt.Sprintf("%d Hz, %d clients", hz, n)
			_, r := run(t, poorLink(hz, n))
			honest(t, r, name)
			t.Logf("%s: delay %.2f intervals, %d/%d hits, %.2f mispredictions per client per second",
				name, meanDelay(r), r.Server.Shots.Hits, r.Server.Shots.Fired, mispredictionsPerSecond(r))
			if hz == 20 {
				assert.LessOrEqualf(t, meanDelay(r), 3.0, "%s: interpolation delay in send intervals", name)
			}
		}
	}
}

// At 60, 128 and 240 Hz on the poor link, with 3 clients and with 12 at
// 60 Hz: the same, and with 3 clients no regression against the figures
// of main before the issue (0ceff7f, where the hit rates were 93 %, 91 %
// and 91 %): mispredictions per client per second and the furthest
// extrapolation stay within 10 % of them; no client ever holds at the cap.
func TestHonestPlayAtHighTickRatesOnAPoorLink(t *testing.T) {
	for _, c := range []struct{ hz, clients int }{{60, 3}, {60, 12}, {128, 3}, {240, 3}} {
		honestAtHighRate(t, c.hz, c.clients)
	}
}

// The same with 12 clients at 128 and 240 Hz. Long tier (2.3 s).
func TestHonestPlayOfTwelveAtHighTickRatesOnAPoorLink(t *testing.T) {
	skipUnlessLong(t)
	for _, hz := range []int{128, 240} {
		honestAtHighRate(t, hz, 12)
	}
}

// honestAtHighRate plays 20 s at hz with n clients on the poor link; with
// 3 clients it compares the figures with those before the issue.
func honestAtHighRate(t *testing.T, hz, n int) {
	t.Helper()
	// Before: mispredictions per client per second; max extrapolation, ticks.
	before := map[int][2]float64{60: {3.17, 0.99}, 128: {6.15, 1.42}, 240: {8.43, 3.38}}
	name := fmt.Sprintf("%d Hz, %d clients", hz, n)
	_, r := run(t, poorLink(hz, n))
	honest(t, r, name)
	ext, held := heldAndExtrapolated(r)
	t.Logf("%s: delay %.2f intervals, %d/%d hits, %.2f mispredictions per client per second, %.1f extrapolated ticks",
		name, meanDelay(r), r.Server.Shots.Hits, r.Server.Shots.Fired, mispredictionsPerSecond(r), ext)
	assert.Zerof(t, held, "%s: held at the cap", name)
	if n != 3 {
		return
	}
	assert.LessOrEqualf(t, mispredictionsPerSecond(r), before[hz][0]*1.1, "%s: mispredictions per client per second", name)
	for _, c := range r.Clients {
		assert.LessOrEqualf(t, c.MaxExtrapolation, before[hz][1]*1.1, "%s client %d", name, c.ID)
	}
}

// At 60 Hz on a 100 ms / ±10 ms / 1 % link the delay is at most three
// send intervals (it was 4.4 with the sum of worst cases).
func TestInterpolationDelayAt60HzOnADecentLink(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 3, 20*time.Second
	_, r := run(t, cfg)
	honest(t, r, "60 Hz")
	assert.LessOrEqual(t, meanDelay(r), 3.0)
	assert.Greater(t, meanDelay(r), 2.0, "two intervals plus the arrival spread")
}

// heldAndExtrapolated sums the ticks the clients showed remote players
// past their newest state, and held at the cap.
func heldAndExtrapolated(r *Report) (extrapolated, held float64) {
	for _, c := range r.Clients {
		extrapolated += c.ExtrapolatedTicks
		held += c.HeldTicks
	}
	return extrapolated, held
}

// At 60 Hz extrapolation stays as rare as with the old delay (7.5 send
// intervals on the poor link; docs/tuning.md): the lean delay leaves no
// margin for a snapshot received but not yet buffered, so the client
// buffers a snapshot's remote states on arrival, and the delay rises
// faster than it falls, to cover the spread measured at the start.
func TestExtrapolationAt60HzAsRareAsBeforeTheLeanDelay(t *testing.T) {
	decent := DefaultConfig()
	decent.Clients, decent.Duration = 3, 20*time.Second
	decent.Ball, decent.Rockets = false, false // as poorLink
	// Before (main at 0ceff7f): extrapolated ticks summed over 3 clients.
	for _, c := range []struct {
		name   string
		cfg    Config
		before float64
	}{
		{"200 ms / ±40 ms / 8 %", poorLink(60, 3), 3.1},
		{"100 ms / ±10 ms / 1 %", decent, 2.6},
	} {
		_, r := run(t, c.cfg)
		honest(t, r, c.name)
		ext, held := heldAndExtrapolated(r)
		t.Logf("%s: %.2f extrapolated ticks, %.2f held, delay %.2f intervals", c.name, ext, held, meanDelay(r))
		assert.LessOrEqualf(t, ext, c.before, "%s: extrapolated ticks, 3 clients, 20 s", c.name)
		assert.Zerof(t, held, "%s: held at the cap", c.name)
	}
}

// viewAges is a judge that notes how old each shot's view is against the
// newest recorded tick (what lagcomp's window bounds), then asks lc.
type viewAges struct {
	lc     *lagcomp.Compensator
	oldest float64 // ticks
}

func (v *viewAges) Rules() []lagcomp.Reason { return v.lc.Rules() }

func (v *viewAges) Judge(s lagcomp.Shot) lagcomp.Verdict {
	newest, _ := v.lc.History().Newest()
	v.oldest = max(v.oldest, float64(newest.Sub(s.ViewTick))-float64(s.ViewFraction))
	return v.lc.Judge(s)
}

// lagcomp's default window (750 ms) covers the oldest view an honest
// client claims at 20 Hz on the poor link, with 12 clients and the widest
// window the arena allows, over three seeds; the old default, 500 ms, did
// not.
func TestTheDefaultWindowCoversHonestViewsAt20Hz(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		cfg := poorLink(20, 12)
		cfg.Seed, cfg.MaxRewind = seed, 2*time.Second
		m, err := NewMatch(cfg)
		require.NoError(t, err)
		ages := &viewAges{lc: m.Shots.LC}
		m.Shots.Judge = ages
		r := m.Run(nil)
		honest(t, r, fmt.Sprintf("seed %d", seed))
		oldest := time.Duration(ages.oldest * float64(time.Second) / 20)
		t.Logf("seed %d: the oldest view is %v old", seed, oldest.Round(time.Millisecond))
		assert.Less(t, oldest, 750*time.Millisecond, "seed %d", seed)
	}
}
