//go:build js && wasm

package main

import (
	"slices"
	"time"
)

// maxGaps bounds the snapshot gaps kept: ten minutes at 60 Hz.
const maxGaps = 36000

// netStats measures what the transport does to the client, for the
// side-by-side test: the gaps between snapshot arrivals (as seen once per
// frame, so to within a frame, 8 ms), and the client's mispredictions and
// extrapolated ticks, since the last reset.
type netStats struct {
	gaps                 []float64 // ms
	last                 time.Time // when the newest snapshot was seen
	snapshots, mispred   uint64    // the client's counts at the last sample
	extrapolated         float64
	base                 [2]uint64 // snapshots and mispredictions at the reset
	baseExtrap           float64
	began                time.Time
	primed, resetPending bool
}

// NetStats is netstats()'s answer: since the last reset, the snapshots
// received, the gaps between their arrivals (p50, p99 and largest, ms),
// the mispredictions and extrapolated ticks, over Seconds.
type NetStats struct {
	Snapshots              uint64
	GapP50, GapP99, GapMax float64
	Mispredictions         uint64
	ExtrapolatedTicks      float64
	Seconds                float64
}

// sample records the client's counts of a frame.
func (n *netStats) sample(now time.Time, snapshots, mispred uint64, extrapolated float64) {
	if !n.primed || n.resetPending {
		n.base, n.baseExtrap, n.began = [2]uint64{snapshots, mispred}, extrapolated, now
		n.gaps, n.primed, n.resetPending = n.gaps[:0], true, false
		n.last = now
	} else if snapshots > n.snapshots && len(n.gaps) < maxGaps {
		n.gaps = append(n.gaps, float64(now.Sub(n.last))/float64(time.Millisecond))
		n.last = now
	}
	n.snapshots, n.mispred, n.extrapolated = snapshots, mispred, extrapolated
}

// report returns the figures since the last reset, and starts a new
// measurement at the next frame when reset is set.
func (n *netStats) report(reset bool) NetStats {
	r := NetStats{Snapshots: n.snapshots - n.base[0], Mispredictions: n.mispred - n.base[1],
		ExtrapolatedTicks: n.extrapolated - n.baseExtrap, Seconds: time.Since(n.began).Seconds()}
	if len(n.gaps) > 0 {
		g := slices.Clone(n.gaps)
		slices.Sort(g)
		at := func(q float64) float64 { return g[min(len(g)-1, int(q*float64(len(g))))] }
		r.GapP50, r.GapP99, r.GapMax = at(0.5), at(0.99), g[len(g)-1]
	}
	n.resetPending = n.resetPending || reset
	return r
}
