package fleet

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghostwire/ghostwire/systems/agones"
)

// counter keeps an Agones counter equal to the open rooms. The rooms'
// hooks add to want without waiting (they run on a room's goroutine or
// under the manager's lock); keep sends the difference to the sidecar,
// one call at a time and in order, so the count follows the rooms +1 and
// −1, and retries a failed update a second later.
type counter struct {
	sdk      *agones.SDK
	name     string
	capacity int64 // the rooms the process may run
	clock    agones.Clock
	log      *slog.Logger
	kick     chan struct{} // one pending wake-up at most

	want     atomic.Int64 // the rooms open
	draining atomic.Bool

	mu      sync.Mutex // one sidecar call at a time
	started bool       // the capacity and count set at the start
	off     bool       // the fleet declares no such counter: left alone
	capped  bool       // the drain's capacity set
	applied int64      // the count the sidecar has
	last    agones.Counter
	errors  uint64
}

// add counts rooms opened (n > 0) or ended, and wakes keep.
func (c *counter) add(n int64) {
	c.want.Add(n)
	c.poke()
}

// drain asks for the capacity to drop to the count: the fleet allocates
// no more rooms here.
func (c *counter) drain() {
	c.draining.Store(true)
	c.poke()
}

func (c *counter) poke() {
	select {
	case c.kick <- struct{}{}:
	default: // a wake-up is pending already: it will read want
	}
}

// keep brings the sidecar's counter up to date on every change until
// ctx ends, and a second after a failed update.
func (c *counter) keep(ctx context.Context) {
	for {
		var retry <-chan time.Time
		if err := c.sync(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("ghostwire: the rooms counter's update failed; retrying in a second", "counter", c.name, "err", err)
			retry = c.clock.After(time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-retry:
		}
	}
}

// sync brings the sidecar's counter to the rooms open now: the first time
// its capacity (the rooms the process may run) and its count, then the
// difference; once draining, the capacity down to the count.
func (c *counter) sync(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return nil
	}
	if !c.started {
		want := c.want.Load()
		if _, err := c.sdk.SetCapacity(ctx, c.name, c.capacity); err != nil {
			var refused *agones.Error
			if errors.As(err, &refused) { // the sidecar's answer: no such counter in the fleet's spec
				c.off = true
				c.log.Warn("ghostwire: the rooms counter is refused: rooms are not counted (declare it in the fleet's spec.counters)", "counter", c.name, "err", err)
				return nil
			}
			c.errors++
			return err
		}
		cn, err := c.sdk.SetCount(ctx, c.name, want)
		if err != nil {
			c.errors++
			return err
		}
		c.started, c.applied, c.last = true, want, cn
	}
	for want := c.want.Load(); want != c.applied; want = c.want.Load() {
		cn, err := c.sdk.AddCount(ctx, c.name, want-c.applied)
		if err != nil {
			c.errors++
			return err
		}
		c.applied, c.last = want, cn
	}
	if c.draining.Load() && !c.capped {
		cn, err := c.sdk.SetCapacity(ctx, c.name, c.applied)
		if err != nil {
			c.errors++
			return err
		}
		c.capped, c.last = true, cn
	}
	return nil
}

// finish sets the count to the rooms open, zero once they have all
// ended: a count, not a difference, since keep's last update may have
// been cut short after the sidecar applied it.
func (c *counter) finish(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off || !c.started {
		return nil
	}
	want := c.want.Load()
	cn, err := c.sdk.SetCount(ctx, c.name, want)
	if err != nil {
		c.errors++
		return err
	}
	c.applied, c.last = want, cn
	return nil
}

// report returns the counter as the sidecar last answered and the
// failed updates.
func (c *counter) report() (agones.Counter, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.errors
}
