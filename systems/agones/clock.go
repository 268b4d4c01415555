package agones

import "time"

// Clock is the time the SDK waits on: its retries and health pings. The
// zero Options use the real one; tests pass a fake (agonestest.Clock).
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// realClock is time's own clock.
type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
