package control_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
)

const icTick = 10 * time.Millisecond

// icArrival is one snapshot reaching the client.
type icArrival struct {
	tick gw.Tick
	at   time.Duration
}

// icStream returns the arrivals of the snapshots of ticks first, first+every,
// ... up to last, sent at tick·icTick of a clock the client shares, each
// arriving latency(tick) later unless drop(tick); sorted by arrival time
// (ties keep send order). nil drop drops nothing.
func icStream(first, last gw.Tick, every int, latency func(tick gw.Tick) time.Duration, drop func(tick gw.Tick) bool) []icArrival {
	var out []icArrival
	for k := first; !k.After(last); k = k.Add(every) {
		if drop != nil && drop(k) {
			continue
		}
		out = append(out, icArrival{k, time.Duration(k)*icTick + latency(k)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// icDrive feeds arrivals to c and calls Advance every step from start to
// end inclusive, arrivals first when they coincide; fn sees every frame.
func icDrive(c *control.InterpolationClock, arr []icArrival, start, end, step time.Duration, fn func(now time.Duration, render float64)) {
	i := 0
	for now := start; now <= end; now += step {
		for ; i < len(arr) && arr[i].at <= now; i++ {
			c.Observe(arr[i].tick, arr[i].at)
		}
		r := c.Advance(now)
		if fn != nil {
			fn(now, r)
		}
	}
}

func newIC(t *testing.T, opts control.InterpolationOptions) *control.InterpolationClock {
	t.Helper()
	c, err := control.NewInterpolationClock(icTick, opts)
	require.NoError(t, err)
	return c
}

func constLatency(d time.Duration) func(gw.Tick) time.Duration {
	return func(gw.Tick) time.Duration { return d }
}

func TestInterpolationClockSteadyStream(t *testing.T) {
	c := newIC(t, control.InterpolationOptions{})
	// Every tick, 35 ms (3.5 ticks) late, from tick 100 on.
	arr := icStream(100, 400, 1, constLatency(35*time.Millisecond), nil)
	frames := 0
	var last float64
	icDrive(c, arr, arr[0].at, 400*icTick, icTick/4, func(now time.Duration, r float64) {
		nowTicks := float64(now) / float64(icTick)
		// The delay is two send intervals from the start, and stays.
		require.Equal(t, 2.0, c.Delay(), "Delay at %v", now)
		require.Equal(t, 0.0, c.Jitter())
		require.Equal(t, 0.0, c.Loss())
		// Server tick = the newest tick at its arrival, plus time since.
		require.InDelta(t, nowTicks-3.5, c.ServerTick(now), 1e-9)
		require.InDelta(t, nowTicks-3.5-2, r, 1e-9, "render tick at %v", now)
		if frames > 0 {
			require.InDelta(t, 0.25, r-last, 1e-9, "a quarter tick of client time moves the render tick a quarter tick")
		}
		// At an arrival the render tick trails the newest tick by the delay.
		if (now-35*time.Millisecond)%icTick == 0 {
			require.Equal(t, gw.Tick((now-35*time.Millisecond)/icTick), c.Newest())
			require.Equal(t, float64(c.Newest())-c.Delay(), r, "render tick at the arrival of %d", c.Newest())
		}
		last = r
		frames++
	})
	assert.Equal(t, gw.Tick(396), c.Newest())
	assert.Greater(t, frames, 1000)
}

func TestInterpolationClockSendIntervalThree(t *testing.T) {
	c := newIC(t, control.InterpolationOptions{})
	arr := icStream(30, 3030, 3, constLatency(50*time.Millisecond), nil)
	var prevDelay, prevR float64
	var prevNow time.Duration
	converged := time.Duration(-1)
	icDrive(c, arr, arr[0].at, 3030*icTick+50*time.Millisecond, icTick, func(now time.Duration, r float64) {
		d := c.Delay()
		if prevNow != 0 {
			// The delay grows toward its target (at once while the first
			// 64 arrivals measure the spread), and the render tick by the
			// elapsed time less that, never going back.
			el := float64(now-prevNow) / float64(icTick)
			require.GreaterOrEqual(t, d, prevDelay)
			require.GreaterOrEqual(t, r, prevR)
			require.LessOrEqual(t, r-prevR, el+1e-9)
		}
		if d >= 6 && converged < 0 {
			converged = now
		}
		if converged >= 0 {
			require.GreaterOrEqual(t, d, 6.0, "the delay fell below two send intervals at %v", now)
		}
		prevDelay, prevR, prevNow = d, r, now
	})
	require.GreaterOrEqual(t, converged, time.Duration(0), "the delay never reached two send intervals (6 ticks); it is %v", c.Delay())
	// From the first guess (2 ticks) to 6 at the second arrival, which
	// shows the send interval.
	assert.Equal(t, 3*icTick, converged-arr[0].at)
	assert.Equal(t, 6.0, c.Delay(), "no jitter, no loss: exactly two send intervals")
	assert.Equal(t, 0.0, c.Loss(), "a steady send interval of 3 is not loss")
	assert.Equal(t, 0.0, c.Jitter())
	// Steady state: one render tick per tick, 6 behind the newest at its arrival.
	assert.Equal(t, gw.Tick(3030), c.Newest())
	assert.InDelta(t, 3030-6, prevR, 1e-9, "render tick at the arrival of 3030")
	assert.InDelta(t, 3030-6+1, c.Advance(3031*icTick+50*time.Millisecond), 1e-9)
}

// icDelayRun runs a stream of snapshots every tick for n ticks with the
// given latency and drops, and returns the clock, the mean of Loss over the
// second half and the last frame's time.
func icDelayRun(t *testing.T, c *control.InterpolationClock, first gw.Tick, n int, lat func(gw.Tick) time.Duration, drop func(gw.Tick) bool, fn func(now time.Duration, r float64)) (meanLoss float64, end time.Duration) {
	arr := icStream(first, first.Add(n), 1, lat, drop)
	var sum float64
	var cnt int
	end = time.Duration(first.Add(n))*icTick + 50*time.Millisecond
	icDrive(c, arr, time.Duration(first)*icTick, end, icTick, func(now time.Duration, r float64) {
		if now > time.Duration(first.Add(n/2))*icTick {
			sum += c.Loss()
			cnt++
		}
		if fn != nil {
			fn(now, r)
		}
	})
	return sum / float64(cnt), end
}

// icCalmDown continues with a clean link after a rough phase ending at
// from, checks that the delay never shrinks faster than 2 % of the elapsed
// time and returns how long it took to come back to 2 ticks exactly.
func icCalmDown(t *testing.T, c *control.InterpolationClock, from time.Duration) time.Duration {
	t.Helper()
	first := gw.Tick(from/icTick) + 20 // past anything the rough phase sent
	arr := icStream(first, first+3000, 1, constLatency(30*time.Millisecond), nil)
	start := time.Duration(first) * icTick
	prevD, prevNow, prevR := c.Delay(), from, c.Advance(from)
	back := time.Duration(-1)
	icDrive(c, arr, start, time.Duration(first+3000)*icTick, icTick, func(now time.Duration, r float64) {
		d := c.Delay()
		el := float64(now-prevNow) / float64(icTick)
		require.GreaterOrEqual(t, d, prevD-0.02*el-1e-12, "the delay shrank faster than 2 %% of the elapsed time at %v", now)
		require.GreaterOrEqual(t, r, prevR, "the render tick went back at %v", now)
		if d == 2 && back < 0 {
			back = now - start
		}
		prevD, prevNow, prevR = d, now, r
	})
	require.GreaterOrEqual(t, back, time.Duration(0), "the delay did not come back to 2 ticks (%v)", c.Delay())
	assert.Equal(t, 2.0, c.Delay())
	return back
}

func TestInterpolationClockJitterRaisesDelay(t *testing.T) {
	calm := newIC(t, control.InterpolationOptions{})
	icDelayRun(t, calm, 100, 2000, constLatency(50*time.Millisecond), nil, nil)
	require.Equal(t, 2.0, calm.Delay())
	require.Equal(t, 0.0, calm.Jitter())

	// The same link with 0..60 ms of extra latency per packet, delivered
	// in order (a queue), so the jitter is not mistaken for loss.
	rng := rand.New(rand.NewPCG(41, 43))
	var prevArrival time.Duration
	lat := func(k gw.Tick) time.Duration {
		at := time.Duration(k)*icTick + 50*time.Millisecond + time.Duration(rng.Float64()*float64(60*time.Millisecond))
		at = max(at, prevArrival)
		prevArrival = at
		return at - time.Duration(k)*icTick
	}
	c := newIC(t, control.InterpolationOptions{})
	var prevR float64
	_, end := icDelayRun(t, c, 100, 2000, lat, nil, func(now time.Duration, r float64) {
		require.GreaterOrEqual(t, r, prevR)
		prevR = r
	})
	t.Logf("jitter %.3f ticks, delay %.3f ticks", c.Jitter(), c.Delay())
	assert.Equal(t, 0.0, c.Loss(), "in-order jittery arrivals are not loss")
	assert.Greater(t, c.Jitter(), 0.8, "6 ticks of jitter measured as %v", c.Jitter())
	assert.Less(t, c.Jitter(), 3.0)
	assert.Greater(t, c.Delay(), calm.Delay()+1, "jitter did not raise the delay")
	// The delay covers the latest recent arrival past two send intervals:
	// 0..60 ms of queueing is at most 3.6 ticks late.
	assert.Greater(t, c.Delay(), 2+1.0)
	assert.LessOrEqual(t, c.Delay(), 2+3.6)

	peak := c.Delay()
	took := icCalmDown(t, c, end)
	assert.GreaterOrEqual(t, took, time.Duration((peak-2)/0.02)*icTick-2*icTick, "the delay came back faster than 2 %% of elapsed time allows")
}

func TestInterpolationClockLossBridgesOneSnapshot(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 53))
	lost := 0
	drop := func(k gw.Tick) bool {
		if rng.Float64() < 0.1 {
			lost++
			return true
		}
		return false
	}
	c := newIC(t, control.InterpolationOptions{})
	frames, past := 0, 0
	meanLoss, _ := icDelayRun(t, c, 100, 4000, constLatency(40*time.Millisecond), drop, func(now time.Duration, r float64) {
		if now > 1100*icTick {
			frames++
			if r > float64(c.Newest()) {
				past++
			}
		}
	})
	t.Logf("lost %d of 4001, estimated loss %.4f (mean %.4f), delay %.3f, %d of %d frames past the newest", lost, c.Loss(), meanLoss, c.Delay(), past, frames)
	require.InDelta(t, 0.1, float64(lost)/4001, 0.02, "test setup: the seeded drop rate")
	// The estimate is of the fraction of snapshots lost: about 10 %.
	assert.InDelta(t, 0.1, meanLoss, 0.025, "mean estimated loss over the second half")
	assert.Equal(t, 0.0, c.Jitter(), "dropped packets are no arrival jitter")
	// One interval for the gap and one for a lost snapshot, no more: two
	// losses in a row (1 %) are left to extrapolation. Loss itself adds
	// nothing (the old rule asked for 4.5 intervals here).
	assert.Equal(t, 2.0, c.Delay())
	assert.Less(t, float64(past)/float64(frames), 0.03, "extrapolated too often")
}

func TestInterpolationClockRenderNeverGoesBack(t *testing.T) {
	c := newIC(t, control.InterpolationOptions{})
	// 30 ms latency, then from tick 200 a 1 s spike for 100 ticks, then
	// back: the estimated server tick falls back by up to 97 ticks, faster
	// than client time moves it on.
	lat := func(k gw.Tick) time.Duration {
		if k >= 200 && k < 300 {
			return time.Second
		}
		return 30 * time.Millisecond
	}
	arr := icStream(100, 500, 1, lat, nil)
	// Old snapshots arriving late: ticks the clock has already passed.
	arr = append(arr, icArrival{150, 180 * icTick}, icArrival{120, 181 * icTick}, icArrival{100, 420 * icTick})
	sort.SliceStable(arr, func(i, j int) bool { return arr[i].at < arr[j].at })

	var prevR float64
	clamped := false
	newest := gw.Tick(0)
	icDrive(c, arr, arr[0].at, 520*icTick, icTick/2, func(now time.Duration, r float64) {
		require.GreaterOrEqual(t, r, prevR, "render tick went back at %v", now)
		require.False(t, c.Newest().Before(newest), "Newest went back at %v", now)
		if c.ServerTick(now)-c.Delay() < prevR-0.5 {
			clamped = true // without the clamp it would have gone back
		}
		prevR, newest = r, c.Newest()
	})
	assert.True(t, clamped, "test setup: the spike never pulled the estimate back")
	assert.Equal(t, gw.Tick(500), c.Newest())

	// Client time going backwards cannot move it back either.
	r := c.Advance(520 * icTick)
	assert.Equal(t, r, c.Advance(400*icTick))
	assert.Equal(t, r, c.Advance(0))
	assert.GreaterOrEqual(t, c.Advance(530*icTick), r)
}

func TestInterpolationClockFixedDelay(t *testing.T) {
	c := newIC(t, control.InterpolationOptions{Delay: 45 * time.Millisecond})
	rng := rand.New(rand.NewPCG(59, 61))
	// Steady first: render = newest − 4.5 at each arrival.
	arr := icStream(10, 200, 1, constLatency(20*time.Millisecond), nil)
	icDrive(c, arr, arr[0].at, 200*icTick+20*time.Millisecond, icTick, func(now time.Duration, r float64) {
		require.Equal(t, 4.5, c.Delay())
		require.InDelta(t, float64(c.Newest())-4.5, r, 1e-9)
	})
	// Then jitter and loss: the fixed delay does not move.
	arr = icStream(201, 1200, 1,
		func(gw.Tick) time.Duration { return 20*time.Millisecond + time.Duration(rng.IntN(80))*time.Millisecond },
		func(gw.Tick) bool { return rng.IntN(5) == 0 })
	icDrive(c, arr, 201*icTick, 1300*icTick, icTick, func(now time.Duration, r float64) {
		require.Equal(t, 4.5, c.Delay(), "fixed delay moved at %v", now)
	})
	assert.Greater(t, c.Jitter(), 0.5, "test setup: jitter measured")
	assert.Greater(t, c.Loss(), 0.1, "test setup: loss measured")

	long := newIC(t, control.InterpolationOptions{Delay: time.Second})
	long.Observe(500, 5*time.Second)
	assert.Equal(t, 100.0, long.Delay())
	assert.Equal(t, 400.0, long.Advance(5*time.Second))
}

func TestInterpolationClockOptions(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		opts     control.InterpolationOptions
		name     string
	}{
		{0, control.InterpolationOptions{}, "0s"},
		{-time.Millisecond, control.InterpolationOptions{}, "-1ms"},
		{icTick, control.InterpolationOptions{Delay: -time.Millisecond}, "-1ms"},
		{icTick, control.InterpolationOptions{Delay: 1001 * time.Millisecond}, "1.001s"},
		{icTick, control.InterpolationOptions{MaxExtrapolation: 60.5}, "60.5"},
		{icTick, control.InterpolationOptions{MaxExtrapolation: math.NaN()}, "NaN"},
		{icTick, control.InterpolationOptions{MaxExtrapolation: math.Inf(1)}, "+Inf"},
	} {
		got, err := control.NewInterpolationClock(c.interval, c.opts)
		if assert.Error(t, err, "interval %v, %+v", c.interval, c.opts) {
			assert.Nil(t, got)
			assert.True(t, strings.Contains(err.Error(), c.name), "error %q does not name %s", err, c.name)
		}
	}
	for _, c := range []struct {
		in, want float64
	}{{0, 4}, {-1, 0}, {math.Inf(-1), 0}, {0.5, 0.5}, {60, 60}} {
		clk, err := control.NewInterpolationClock(icTick, control.InterpolationOptions{MaxExtrapolation: c.in})
		require.NoError(t, err, "MaxExtrapolation %v", c.in)
		assert.Equal(t, c.want, clk.MaxExtrapolation(), "MaxExtrapolation %v", c.in)
	}
	_, err := control.NewInterpolationClock(icTick, control.InterpolationOptions{Delay: time.Second})
	assert.NoError(t, err, "1s is allowed")
}

func TestInterpolationClockGetters(t *testing.T) {
	c := newIC(t, control.InterpolationOptions{})
	// Nothing observed yet.
	assert.Equal(t, 0.0, c.Advance(time.Second))
	assert.Equal(t, gw.Tick(0), c.Newest())
	assert.Equal(t, 0.0, c.Delay())
	assert.Equal(t, 0.0, c.Jitter())
	assert.Equal(t, 0.0, c.Loss())

	c.Observe(50, 120*time.Millisecond)
	assert.Equal(t, gw.Tick(50), c.Newest())
	assert.InDelta(t, 50, c.ServerTick(120*time.Millisecond), 1e-9)
	assert.InDelta(t, 52.5, c.ServerTick(145*time.Millisecond), 1e-9)
	assert.Equal(t, 2.0, c.Delay())
	assert.InDelta(t, 48, c.Advance(120*time.Millisecond), 1e-9)

	// Older and equal ticks are ignored entirely.
	c.Observe(49, 125*time.Millisecond)
	c.Observe(50, 400*time.Millisecond)
	assert.Equal(t, gw.Tick(50), c.Newest())
	assert.InDelta(t, 52.5, c.ServerTick(145*time.Millisecond), 1e-9)
	assert.Equal(t, 0.0, c.Jitter())
	assert.Equal(t, 0.0, c.Loss())

	// On time: no jitter, no loss.
	c.Observe(51, 130*time.Millisecond)
	assert.Equal(t, gw.Tick(51), c.Newest())
	assert.Equal(t, 0.0, c.Jitter())
	assert.Equal(t, 0.0, c.Loss())
	// One late by 2 ticks: jitter rises, the server estimate moves a little.
	c.Observe(52, 160*time.Millisecond)
	assert.Greater(t, c.Jitter(), 0.0)
	assert.Less(t, c.ServerTick(160*time.Millisecond), 54.0)
	assert.Greater(t, c.ServerTick(160*time.Millisecond), 52.0)
	// Two missing: loss rises.
	c.Observe(55, 190*time.Millisecond)
	assert.Greater(t, c.Loss(), 0.0)
	assert.Less(t, c.Loss(), 0.2)
	assert.Equal(t, gw.Tick(55), c.Newest())
}

// Across 2³² the clock's ticks keep counting: the render tick moves a
// quarter tick per quarter tick of client time through the wrap, and the
// measured jitter and loss stay zero.
func TestInterpolationClockAcrossTheWrap(t *testing.T) {
	for _, first := range []gw.Tick{1<<32 - 200, 1<<31 - 200} {
		c := newIC(t, control.InterpolationOptions{})
		var arr []icArrival
		for i := range 400 { // every tick, 35 ms late
			arr = append(arr, icArrival{first.Add(i), time.Duration(i)*icTick + 35*time.Millisecond})
		}
		frames := 0
		var last float64
		icDrive(c, arr, arr[0].at, 399*icTick+35*time.Millisecond, icTick/4, func(now time.Duration, r float64) {
			if frames > 0 {
				require.InDelta(t, 0.25, r-last, 1e-5, "first %d: render tick %.3f after %.3f", first, r, last)
			}
			if (now-35*time.Millisecond)%icTick == 0 {
				// At an arrival the render tick trails the newest tick by
				// the delay, wrapped or not.
				tick, frac := gw.TickAt(r + c.Delay())
				require.Equal(t, c.Newest(), tick, "first %d at %v", first, now)
				require.InDelta(t, 0, frac, 1e-5)
				require.InDelta(t, r+c.Delay(), c.ServerTick(now), 1e-5)
			}
			last = r
			frames++
		})
		assert.Equal(t, first.Add(399), c.Newest())
		assert.Equal(t, float64(first)+399-2, last, "first %d: the render tick counts on past the wrap", first)
		assert.Equal(t, 0.0, c.Jitter(), "first %d", first)
		assert.Equal(t, 0.0, c.Loss(), "first %d", first)
		assert.Greater(t, frames, 1500)
	}
}

// Once the first 64 arrivals measured the spread, the delay rises toward
// a larger target by at most 10 % of the elapsed time (remote ghosts at
// 90 % speed) and falls by at most 2 %.
func TestInterpolationClockRisesFasterThanItFalls(t *testing.T) {
	c := newIC(t, control.InterpolationOptions{})
	// 30 ms late, then from tick 200 every other run of 8 snapshots 40 ms
	// later.
	arr := icStream(100, 600, 1, func(k gw.Tick) time.Duration {
		if k >= 200 && k/8%2 == 1 {
			return 70 * time.Millisecond
		}
		return 30 * time.Millisecond
	}, nil)
	var prev float64
	var prevNow time.Duration
	rose := false
	icDrive(c, arr, arr[0].at, 600*icTick, icTick/2, func(now time.Duration, _ float64) {
		d := c.Delay()
		if prevNow > 200*icTick {
			el := float64(now-prevNow) / float64(icTick)
			require.LessOrEqual(t, d-prev, 0.1*el+1e-9, "at %v", now)
			require.GreaterOrEqual(t, d-prev, -0.02*el-1e-9, "at %v", now)
			rose = rose || d-prev > 0.05*el
		}
		prev, prevNow = d, now
	})
	assert.True(t, rose, "faster than the 2 % it falls by")
	assert.Greater(t, c.Delay(), 4.0, "two intervals plus the lateness against the mean arrival, about 2 ticks")
}

// While the first 64 arrivals measure the spread, the render tick waits
// at the newest snapshot rather than run past it: an early first arrival
// sets the offset ahead of the ones after it.
func TestInterpolationClockStartsBehindTheNewest(t *testing.T) {
	c := newIC(t, control.InterpolationOptions{})
	// The first snapshot 0 ms late, the others 60 ms (6 ticks).
	arr := icStream(100, 400, 1, func(k gw.Tick) time.Duration {
		if k == 100 {
			return 0
		}
		return 60 * time.Millisecond
	}, nil)
	past, last := 0.0, 0.0
	icDrive(c, arr, arr[0].at, 400*icTick, icTick/4, func(now time.Duration, r float64) {
		past, last = max(past, r-float64(c.Newest())), r
	})
	assert.LessOrEqual(t, past, 0.0, "the render tick ran past the newest snapshot (4.75 ticks before)")
	assert.Greater(t, last, 390.0, "and it keeps up once the offset has")
}
