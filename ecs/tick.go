package ecs

import "math"

// Tick numbers a fixed simulation step. It is the same on server and
// clients and wraps after 2³² ticks (207 days at 240 Hz): compare and
// subtract ticks only with its methods, which stay right across the wrap
// as long as the two ticks are less than 2³¹ apart.
type Tick uint32

// Sub returns the signed distance t − u, wrap-safe: 5.Sub(3) is 2 and
// 0.Sub(2³²−1) is 1. It is meaningful while |t − u| < 2³¹.
func (t Tick) Sub(u Tick) int32 { return int32(t - u) }

// Since returns how many ticks passed from u to t, counted modulo 2³²:
// unsigned, so it keeps counting up past 2³¹ ticks where Sub turns
// negative. 5.Since(3) is 2, 0.Since(2³²−1) is 1, and u.Add(n).Since(u)
// is n for every n below 2³². For a match's age and a record's: what
// only goes forward from u.
func (t Tick) Since(u Tick) uint32 { return uint32(t - u) }

// Add returns the tick n steps after t (before it for a negative n),
// wrapping around 2³².
func (t Tick) Add(n int) Tick { return t + Tick(uint32(n)) }

// Before reports whether t comes before u.
func (t Tick) Before(u Tick) bool { return t.Sub(u) < 0 }

// After reports whether t comes after u.
func (t Tick) After(u Tick) bool { return t.Sub(u) > 0 }

// Unwrap returns t as a continuous tick: a float64 that counts ticks
// without wrapping (a render tick, an estimated server tick), whose floor
// equals a tick modulo 2³². Of the values that stand for t it returns the
// one nearest near, itself a continuous tick less than 2³¹ ticks from t,
// so float64 arithmetic on ticks stays right across the wrap:
// Tick(2).Unwrap(4294967295.5) is 4294967298. [TickAt] is its inverse.
func (t Tick) Unwrap(near float64) float64 {
	base := math.Floor(near)
	return base + float64(t.Sub(Tick(uint32(int64(base)))))
}

// TickAt splits the continuous tick f (a float64 that counts ticks without
// wrapping, such as a client's render tick, ClientStats.RenderTick) into
// the tick it falls in and the fraction of a tick past it, in [0, 1):
// TickAt(4294967298.25) is 2 and 0.25.
func TickAt(f float64) (Tick, float64) {
	base := math.Floor(f)
	return Tick(uint32(int64(base))), f - base
}
