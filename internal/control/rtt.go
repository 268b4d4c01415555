package control

import (
	"math"
	"time"
)

// RTT estimates the round-trip time from samples the way TCP does
// (Jacobson/Karels): a smoothed mean and a smoothed mean deviation, which
// tracks jitter.
type RTT struct {
	srtt, rttvar float64 // ms
	samples      uint64
}

// Sample adds one measurement. Negative or non-finite samples are ignored.
func (r *RTT) Sample(d time.Duration) {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 0 || math.IsNaN(ms) || math.IsInf(ms, 0) {
		return
	}
	if r.samples == 0 {
		r.srtt, r.rttvar = ms, ms/2
	} else {
		r.rttvar = 0.75*r.rttvar + 0.25*math.Abs(r.srtt-ms)
		r.srtt = 0.875*r.srtt + 0.125*ms
	}
	r.samples++
}

// Samples returns how many samples were taken.
func (r *RTT) Samples() uint64 { return r.samples }

// Smoothed returns the smoothed RTT (0 before the first sample).
func (r *RTT) Smoothed() time.Duration { return time.Duration(r.srtt * float64(time.Millisecond)) }

// Variation returns the smoothed mean deviation: a jitter estimate.
func (r *RTT) Variation() time.Duration { return time.Duration(r.rttvar * float64(time.Millisecond)) }
