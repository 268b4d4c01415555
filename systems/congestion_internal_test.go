package systems

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The budget's rules, judgement by judgement (CongestionOptions), for a
// connection that sends its whole budget: a grown round trip cuts it once
// a round trip, by the least round trip over the present one; loss over
// 20 % cuts it whatever the delay; random loss under that does not; a
// clean link grows it back to its maximum; the floor holds.
func TestLinkBudgetRules(t *testing.T) {
	const top, floor = 72_000.0, 8_400.0
	ms := time.Millisecond
	var b linkBudget
	now := time.Duration(0)
	var acked, lost uint64
	step := func(d, rtt time.Duration, a, l uint64) float64 {
		b.sent += uint64(b.rate * d.Seconds()) // the whole budget: not limited by the game
		now += d
		acked += a
		lost += l
		return b.update(now, rtt, acked, lost, floor, top)
	}
	assert.Equal(t, top, step(0, 100*ms, 0, 0), "starts at its maximum")
	assert.Equal(t, top, step(100*ms, 100*ms, 6, 0), "a clean link: at its maximum")
	assert.Equal(t, top, step(100*ms, 100*ms, 20, 10), "10 of 36 lost: too few packets to judge")
	assert.Equal(t, top, step(100*ms, 100*ms, 30, 0), "10 of 66 lost, no queue: random loss, no cut")
	assert.Equal(t, 0.5*top, step(100*ms, 200*ms, 6, 0), "the round trip doubled: halved")
	assert.Equal(t, 0.5*top, step(60*ms, 200*ms, 6, 0), "no second cut within a round trip (nor a judgement)")
	r := step(200*ms, 125*ms, 6, 0)
	assert.Equal(t, 0.5*top, r, "25 ms of queue, under 40: held")
	r = step(200*ms, 150*ms, 6, 0)
	assert.InDelta(t, 0.5*top*2/3, r, 1e-9, "50 ms: cut by 100/150")
	r = step(200*ms, 100*ms, 40, 30)
	assert.InDelta(t, 0.5*top*2/3*0.85, r, 1e-9, "30 of 88 lost without a queue: cut by 15 %")
	assert.Equal(t, uint64(3), b.cuts)
	for range 100 {
		r = step(100*ms, 100*ms, 6, 0)
	}
	assert.Equal(t, top, r, "clean again: back to its maximum, no further")
	for range 20 {
		r = step(time.Second, 3*time.Second, 6, 0)
	}
	assert.Equal(t, floor, r, "a long queue: down to the floor, never below")
	for range 20 {
		r = step(time.Second, 3*time.Second, 6, 0)
	}
	assert.Greater(t, r, floor, "30 s later the long round trip is the least seen: no queue, it grows")
	assert.Equal(t, 1000.0, b.update(now, 0, acked, lost, floor, 1000), "a floor above the maximum is the maximum")
}

// A connection that sends less than half its budget is not cut by its
// link's round trip nor by its losses: its own traffic is not what
// queues there (a game sending little on a jittery, lossy link).
func TestLinkBudgetOfAQuietConnection(t *testing.T) {
	const top, floor = 72_000.0, 8_400.0
	ms := time.Millisecond
	var b linkBudget
	now := time.Duration(0)
	var acked, lost uint64
	b.update(now, 100*ms, 0, 0, floor, top)
	for i := range 50 {
		b.sent += uint64(0.3 * top * 0.2) // 30 % of the budget over each 200 ms
		now += 200 * ms
		acked, lost = acked+40, lost+20
		rtt := 100 * ms
		if i%2 == 1 {
			rtt = 400 * ms
		}
		assert.Equal(t, top, b.update(now, rtt, acked, lost, floor, top), "judgement %d", i)
	}
	assert.Zero(t, b.cuts)
}
