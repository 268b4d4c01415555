package control_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
)

func TestLeadTrackerWindowMinimum(t *testing.T) {
	var l control.LeadTracker
	_, ok := l.Lead()
	assert.False(t, ok, "no arrival yet")

	l.Observe(100, 98.5)
	lead, ok := l.Lead()
	require.True(t, ok)
	assert.Equal(t, 1.5, lead)

	l.Observe(101, 100.75) // 0.25: the new minimum
	l.Observe(102, 99)     // 3
	lead, _ = l.Lead()
	assert.Equal(t, 0.25, lead)

	l.Observe(103, 104.5) // late: negative lead
	lead, _ = l.Lead()
	assert.Equal(t, -1.5, lead)

	// The window holds the newest 60 arrivals: the late one is forgotten
	// when the 60th after it arrives.
	for i := range 59 {
		l.Observe(gw.Tick(200+i), float64(200+i)-5)
	}
	lead, _ = l.Lead()
	assert.Equal(t, -1.5, lead, "59 arrivals after it: still in the window")
	l.Observe(300, 295)
	lead, _ = l.Lead()
	assert.Equal(t, 5.0, lead, "60 arrivals after it: out")

	for i := range 1000 { // many more arrivals: the window slides on
		l.Observe(gw.Tick(1000+i), float64(1000+i)-2-float64(i%7))
	}
	lead, _ = l.Lead()
	assert.Equal(t, 2.0, lead)
}

// The minimum is of exactly the last 60 arrivals, whatever their order:
// rising, falling, equal and random runs against a scan of the window.
func TestLeadTrackerMatchesAScanOfTheWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var l control.LeadTracker
	var leads []float64
	for i := range 5000 {
		var v float64
		switch (i / 200) % 4 {
		case 0:
			v = float64(i % 97) // rising, with drops
		case 1:
			v = -float64(i % 89) // falling
		case 2:
			v = 1.5 // equal
		default:
			v = float64(rng.IntN(40)) - 20 + rng.Float64()
		}
		tick := gw.Tick(uint32(i) * 7)
		l.Observe(tick, float64(tick)-v)
		leads = append(leads, v)
		want := slices.Min(leads[max(0, len(leads)-60):])
		got, ok := l.Lead()
		require.True(t, ok)
		require.InDelta(t, want, got, 1e-9, "arrival %d", i)
	}
}

// An input's lead is right across the wrap: the server's time is a
// continuous tick, float64(tick) + fraction, and the input's tick may be
// past 2³² while the server's is not, or the other way round.
func TestLeadTrackerAcrossTheWrap(t *testing.T) {
	for _, tc := range []struct {
		tick       gw.Tick
		serverTime float64
		want       float64
	}{
		{2, math.MaxUint32 + 0.5, 2.5},
		{math.MaxUint32, 1.5, -2.5}, // late: the server wrapped first
		{1 << 31, 1<<31 - 1.75, 1.75},
	} {
		var l control.LeadTracker
		l.Observe(tc.tick, tc.serverTime)
		lead, _ := l.Lead()
		assert.Equal(t, tc.want, lead, "tick %d at %v", tc.tick, tc.serverTime)
	}
}

// Before its first jump a ClockSync has nothing to wait for: feedback
// counts at every tick, those of the upper half of the tick range too
// (which come before tick 0, the zero value of the settle tick).
func TestClockSyncSteersAtEveryTick(t *testing.T) {
	for _, now := range []gw.Tick{100, 1<<31 + 100, math.MaxUint32 - 100} {
		cs, err := control.NewClockSync(control.ClockSyncOptions{})
		require.NoError(t, err)
		scale, jump := cs.Feedback(4, now.Add(-6), now) // 3 ticks early
		assert.Less(t, scale, 1.0, "tick %d: slow down", now)
		assert.Zero(t, jump)
		_, jump = cs.Feedback(20, now.Add(-6), now) // far too early: hold
		assert.Equal(t, -19, jump, "tick %d", now)
		// Feedback on inputs sent before the jump is ignored, then counts
		// again, across the wrap too.
		scale, _ = cs.Feedback(-3, now.Add(10), now.Add(16))
		assert.Equal(t, 1.0, scale, "tick %d: sent before the jump settled", now)
		scale, _ = cs.Feedback(-3, now.Add(200), now.Add(206))
		assert.Greater(t, scale, 1.0, "tick %d: late: speed up", now)
	}
}

func TestClockSyncOptions(t *testing.T) {
	for _, tt := range []struct {
		opts control.ClockSyncOptions
		text string
	}{
		{control.ClockSyncOptions{TargetLead: 0.2}, "target lead 0.2 outside 0.25..30"},
		{control.ClockSyncOptions{TargetLead: 31}, "target lead 31"},
		{control.ClockSyncOptions{TargetLead: math.NaN()}, "target lead NaN"},
		{control.ClockSyncOptions{MaxAdjust: 0.6}, "max adjust 0.6 outside 0.001..0.5"},
		{control.ClockSyncOptions{MaxAdjust: -0.01}, "max adjust -0.01"},
		{control.ClockSyncOptions{Gain: 1}, "gain 1 outside 0.0001..0.5"},
		{control.ClockSyncOptions{ResetAfter: 1}, "reset threshold 1 outside 2..1000"},
		{control.ClockSyncOptions{ResetAfter: math.Inf(1)}, "reset threshold +Inf"},
	} {
		_, err := control.NewClockSync(tt.opts)
		require.Error(t, err, "%+v", tt.opts)
		assert.Contains(t, err.Error(), tt.text)
	}
	c, err := control.NewClockSync(control.ClockSyncOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1.0, c.TargetLead(), "default target")
	assert.Equal(t, 1.0, c.Scale())
	assert.Zero(t, c.Jumps())
}

func TestClockSyncScaleDirection(t *testing.T) {
	c, err := control.NewClockSync(control.ClockSyncOptions{TargetLead: 2, MaxAdjust: 0.05, Gain: 0.02, ResetAfter: 10})
	require.NoError(t, err)
	for _, tt := range []struct {
		lead, scale float64
	}{
		{1, 1.02},     // one tick short: run 2% faster
		{0, 1.04},     // two ticks short
		{-5, 1.05},    // seven short: capped at MaxAdjust
		{-7.99, 1.05}, // just within ResetAfter
		{3, 0.98},     // one tick early: run slower
		{11.5, 0.95},  // capped
		{2, 1},        // on target
		{2.2, 1},      // within the deadband of ±0.25 tick
		{1.8, 1},      // within the deadband
		{2.3, 0.994},  // just outside it
		{1.6, 1.008},  // ...on both sides
		{12, 0.95},    // an error of exactly ResetAfter still drifts
		{-8, 1.05},    // ...both ways
		{2.25, 0.995}, // the deadband's edge is outside it
	} {
		scale, jump := c.Feedback(tt.lead, 100, 200)
		assert.InDelta(t, tt.scale, scale, 1e-12, "lead %v", tt.lead)
		assert.Zero(t, jump, "lead %v", tt.lead)
		assert.Equal(t, scale, c.Scale())
		assert.InDelta(t, tt.lead-2, c.Error(), 1e-12)
		if tt.lead < 1.75 {
			assert.Greater(t, scale, 1.0, "lead %v too small: faster", tt.lead)
		}
		if tt.lead > 2.25 {
			assert.Less(t, scale, 1.0, "lead %v too large: slower", tt.lead)
		}
		assert.LessOrEqual(t, math.Abs(scale-1), 0.05+1e-15)
	}
	assert.Zero(t, c.Jumps())
}

func TestClockSyncJumpsOnLargeErrors(t *testing.T) {
	for _, tt := range []struct {
		lead float64
		jump int
	}{
		{1 - 12.3, 13},  // 12.3 ticks late: skip ahead 13, rounding toward early
		{1 - 10.01, 11}, // just beyond ResetAfter
		{1 + 12.7, -12}, // 12.7 ticks early: hold 12, rounding toward early
		{1 + 10.5, -10},
		{1 - 500, 500},
		{1 + 500, -500},
	} {
		c, err := control.NewClockSync(control.ClockSyncOptions{})
		require.NoError(t, err)
		c.Feedback(-2, 10, 1000) // drifting first: scale > 1
		require.Greater(t, c.Scale(), 1.0)
		scale, jump := c.Feedback(tt.lead, 50, 1000)
		assert.Equal(t, tt.jump, jump, "lead %v", tt.lead)
		assert.Equal(t, 1.0, scale, "a jump resets the scale")
		assert.Equal(t, uint64(1), c.Jumps())
		assert.InDelta(t, tt.lead-1, c.Error(), 1e-12)
	}
}

func TestClockSyncIgnoresFeedbackUntilTheJumpSettles(t *testing.T) {
	for _, tt := range []struct {
		name   string
		lead   float64
		settle gw.Tick // first confirmed tick whose feedback counts
	}{
		// A hold delays the next inputs: once the 60-arrival window holds
		// only inputs sent after "now", the lead is right.
		{"hold", 1 + 20, 1000 + 1 + 60},
		// Skipping 20 ticks ahead leaves those ticks without input, so
		// the window fills with post-jump arrivals 20 ticks later.
		{"skip", 1 - 19.5, 1000 + 1 + 60 + 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := control.NewClockSync(control.ClockSyncOptions{})
			require.NoError(t, err)
			_, jump := c.Feedback(tt.lead, 990, 1000)
			require.NotZero(t, jump)
			// Old feedback still reports the old error: ignored, no second jump.
			for confirmed := gw.Tick(990); confirmed.Before(tt.settle); confirmed++ {
				scale, jump := c.Feedback(tt.lead, confirmed, confirmed.Add(1000-990))
				require.Equal(t, 1.0, scale, "confirmed %d", confirmed)
				require.Zero(t, jump, "confirmed %d", confirmed)
			}
			assert.Equal(t, uint64(1), c.Jumps())
			// From the settle tick on, feedback counts again.
			scale, jump := c.Feedback(3, tt.settle, 2000)
			assert.Zero(t, jump)
			assert.Less(t, scale, 1.0, "lead 3 > target 1: slower")
		})
	}
}

// clockLoop simulates a client clock steered by ClockSync against a server
// over a link with a fixed one-way delay, in steps of 1/16 tick: the client
// sends the input of every tick it runs; the server observes each arrival
// in a LeadTracker and every tick sends back the window minimum and its
// newest applied input tick. It returns the client's true lead (how early
// its newest input arrives) after every server tick, and the jumps.
func clockLoop(t *testing.T, delay, offset float64, ticks int) (leads []float64, jumps uint64) {
	t.Helper()
	const steps = 16
	const dt = 1.0 / steps
	c, err := control.NewClockSync(control.ClockSyncOptions{TargetLead: 1})
	require.NoError(t, err)
	var tracker control.LeadTracker
	type input struct {
		tick gw.Tick
		at   float64
	}
	type snapshot struct {
		lead      float64
		confirmed gw.Tick
		at        float64
	}
	var inputs []input
	var snaps []snapshot
	var received gw.Tick // newest input tick the server has
	now := 100.0         // real time = server time, in ticks
	clock := now + delay + 1 + offset
	hold := 0.0
	scale := 1.0
	for step := range ticks * steps {
		now += dt
		// The client clock runs, holds or skips.
		before := math.Floor(clock)
		if hold > 0 {
			hold -= dt
		} else {
			clock += scale * dt
		}
		if after := math.Floor(clock); after > before {
			inputs = append(inputs, input{tick: gw.Tick(after), at: now + delay})
		}
		// Inputs arrive at the server.
		keep := inputs[:0]
		for _, in := range inputs {
			if in.at > now {
				keep = append(keep, in)
				continue
			}
			tracker.Observe(in.tick, now)
			if in.tick.After(received) {
				received = in.tick
			}
		}
		inputs = keep
		// Once per tick the server sends a snapshot.
		if (step+1)%steps == 0 {
			lead, _ := tracker.Lead()
			snaps = append(snaps, snapshot{lead: lead, confirmed: min(received, gw.Tick(now)), at: now + delay})
			leads = append(leads, clock-now-delay)
		}
		keepSnaps := snaps[:0]
		for _, s := range snaps {
			if s.at > now {
				keepSnaps = append(keepSnaps, s)
				continue
			}
			var jump int
			scale, jump = c.Feedback(s.lead, s.confirmed, gw.Tick(clock))
			switch {
			case jump > 0:
				clock += float64(jump)
			case jump < 0:
				hold += float64(-jump)
			}
		}
		snaps = keepSnaps
	}
	return leads, c.Jumps()
}

func TestClockSyncClosedLoopConverges(t *testing.T) {
	for _, tt := range []struct {
		delay, offset float64
		maxJumps      uint64
	}{
		{delay: 3, offset: 0},
		{delay: 3, offset: -4},      // behind: drift faster
		{delay: 3, offset: 6},       // ahead: drift slower
		{delay: 8, offset: 9.5},     // just within ResetAfter
		{delay: 12.5, offset: -9.5}, // the largest overshoot
		{delay: 2, offset: -30, maxJumps: 1},
		{delay: 2, offset: 45, maxJumps: 1},
		{delay: 12.5, offset: -25.3, maxJumps: 1},
		{delay: 0.3, offset: 60, maxJumps: 1},
	} {
		leads, jumps := clockLoop(t, tt.delay, tt.offset, 4000)
		assert.LessOrEqual(t, jumps, tt.maxJumps, "delay %v offset %v: one jump corrects a large error", tt.delay, tt.offset)
		// Once within a tick of the target, the client is never late by
		// more than that again. Rising leads are seen late (the server
		// reports a window minimum, a round trip old), so a client that
		// catches up overshoots, on the safe side, by at most MaxAdjust
		// per tick of that delay.
		in := -1
		for i, l := range leads {
			if in < 0 && l >= 0 && l <= 2 {
				in = i
			}
			if in >= 0 {
				require.GreaterOrEqual(t, l, 0.0, "delay %v offset %v: late again at tick %d", tt.delay, tt.offset, i)
				require.LessOrEqual(t, l, 1+1+0.05*(60+2*tt.delay), "delay %v offset %v: overshoot at tick %d", tt.delay, tt.offset, i)
			}
		}
		require.GreaterOrEqual(t, in, 0, "delay %v offset %v: never near the target", tt.delay, tt.offset)
		// After 1500 ticks (25 s at 60 Hz) the lead stays within a tick
		// of the target, without oscillating.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, l := range leads[1500:] {
			lo, hi = min(lo, l), max(hi, l)
		}
		assert.GreaterOrEqual(t, lo, 0.0, "delay %v offset %v: lead within [%v, %v]", tt.delay, tt.offset, lo, hi)
		assert.LessOrEqual(t, hi, 2.0, "delay %v offset %v: lead within [%v, %v]", tt.delay, tt.offset, lo, hi)
		// And it settles: the last 1000 ticks move less than half a tick.
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, l := range leads[3000:] {
			lo, hi = min(lo, l), max(hi, l)
		}
		assert.Less(t, hi-lo, 0.5, "delay %v offset %v: still moving in [%v, %v]", tt.delay, tt.offset, lo, hi)
		t.Logf("delay %v offset %+v: %d jumps, final lead %.3f, last 1000 ticks in [%.3f, %.3f]", tt.delay, tt.offset, jumps, leads[len(leads)-1], lo, hi)
	}
}
