package systems

import (
	"sync/atomic"

	"github.com/ghostwire/ghostwire/components"
)

// Latch keeps a press that happens between two ticks for the next sampled
// input, so a key pressed and released within one tick still counts: call
// Press from the device event (any goroutine), and Take once in the input
// sampler. The zero Latch is released.
type Latch struct{ down atomic.Bool }

// Press records a press.
func (l *Latch) Press() { l.down.Store(true) }

// Take returns the press recorded since the last Take (1) or none (0),
// and releases the latch.
func (l *Latch) Take() components.Press {
	if l.down.Swap(false) {
		return 1
	}
	return 0
}
