package ecs

import (
	"fmt"
	"time"
)

// TimeSource reports elapsed time since an arbitrary origin. Games use
// [NewRealTime]; tests and simulations use [VirtualTime], so nothing sleeps.
type TimeSource interface {
	Now() time.Duration
}

// VirtualTime is a TimeSource moved only by [VirtualTime.Advance]. The
// zero value reads 0.
type VirtualTime struct{ now time.Duration }

// Now returns the virtual time.
func (v *VirtualTime) Now() time.Duration { return v.now }

// Advance moves the virtual time forward by d. It panics on a negative d,
// because time that runs backwards breaks every accumulator built on it.
func (v *VirtualTime) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("ecs: VirtualTime.Advance(%v): duration must be >= 0", d))
	}
	v.now += d
}

// NewRealTime returns the TimeSource of a real game: the monotonic wall
// clock, reading 0 now.
func NewRealTime() TimeSource { return &realTime{start: time.Now()} }

// realTime is a TimeSource backed by the monotonic wall clock.
type realTime struct{ start time.Time }

// Now returns the wall time elapsed since the origin.
func (r *realTime) Now() time.Duration { return time.Since(r.start) }
