package rooms

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghostwire/ghostwire/transport"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// TickBounds are the upper bounds of RoomStats.Updates' buckets: an
// update's wall time falls in the first bucket whose bound it does not
// exceed, or in the last, past them all.
var TickBounds = [...]time.Duration{50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond,
	500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	16 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// RoomStats is what a room measured of itself, published by its goroutine
// every few updates (never read from the server while it runs).
type RoomStats struct {
	Name   string
	Opened time.Time
	// Clients is the connections of the room now, Peak the most at once;
	// Held the places it holds for players whose connection was lost
	// (systems.ServerOptions.ReconnectGrace). A room with held places is
	// not empty (Options.EmptyFor): its players may come back.
	Clients, Peak int
	Held          int
	// Reconnects counts the connections that took a player's place back,
	// HeldGivenUp the held places given up (grace over, or MaxHeld).
	Reconnects, HeldGivenUp uint64
	// Ticks is the ticks the room ran, Expected those its clock asked for
	// since it opened: Expected − Ticks is how far behind it is.
	Ticks, Expected uint64
	// TickP50, TickP99 and TickMax are the wall time of its updates (each
	// running the ticks due), over the last 1,024; Busy is the sum of all
	// of them: the room's CPU time on its goroutine.
	TickP50, TickP99, TickMax time.Duration
	Busy                      time.Duration
	// Updates counts the room's updates by wall time, in the buckets of
	// TickBounds and one past them (a histogram's, not cumulative).
	Updates [len(TickBounds) + 1]uint64
	// BytesIn and BytesOut are the datagram bytes of its connections;
	// Dropped the connections it dropped (timeouts, backlogs, bad input).
	BytesIn, BytesOut uint64
	Dropped           uint64
	// Late is the most an update began after its due time: how far the
	// room's goroutine was kept from its schedule (by another room, the
	// machine, or itself).
	Late time.Duration
}

// roomHooks are what a room calls back and reads of its manager.
type roomHooks struct {
	onTick   func(string)
	onEnd    func(RoomStats, *systems.Server)
	draining *atomic.Bool
}

// room is one match: a server on its own goroutine.
type room struct {
	name     string
	server   *systems.Server
	listener *roomListener
	rate     int
	opened   time.Time
	hooks    roomHooks
	emptyFor time.Duration

	end  chan struct{} // closed to end the room
	once sync.Once
	done chan struct{} // closed when the goroutine has returned

	mu    sync.Mutex
	stats RoomStats
	// times holds the last update durations, a ring.
	times [1024]time.Duration
	n     int
}

// stop asks the room to end.
func (r *room) stop() { r.once.Do(func() { close(r.end) }) }

// run updates the server once per tick interval until the room ends: by
// stop, ctx, when it has had no client for emptyFor, or when it has none
// while the manager drains. It closes the server (every client is told)
// before it returns.
func (r *room) run(ctx context.Context, ended func(*room)) {
	defer close(r.done)
	defer ended(r)
	interval := time.Second / time.Duration(r.rate)
	next := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	lastClient := time.Now()
	for updates := 0; ; updates++ {
		select {
		case <-ctx.Done():
			r.close()
			return
		case <-r.end:
			r.close()
			return
		case <-timer.C:
		}
		late := time.Since(next)
		if r.hooks.onTick != nil {
			r.hooks.onTick(r.name)
		}
		start := time.Now()
		r.server.Update()
		took := time.Since(start)
		st := r.server.Stats()
		r.record(took, late, &st, start)
		switch {
		case st.Connections > 0:
			lastClient = start
		case r.hooks.draining.Load() && r.listener.waiting() == 0:
			// Nobody plays and nobody may come: a draining manager routes
			// no one, a returning player neither.
			r.close()
			return
		case st.Held > 0:
			lastClient = start
		case r.emptyFor > 0 && start.Sub(lastClient) >= r.emptyFor:
			r.close()
			return
		}
		next = next.Add(interval)
		if wait := time.Until(next); wait > 0 {
			timer.Reset(wait)
		} else {
			next = time.Now() // behind: the server's clock catches up or skips
			timer.Reset(0)
		}
	}
}

// record keeps an update's time and publishes the server's counts.
func (r *room) record(took, late time.Duration, st *systems.ServerStats, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts(st, now)
	r.stats.Late = max(r.stats.Late, late)
	r.times[r.n%len(r.times)] = took
	r.n++
	s := &r.stats
	s.Busy += took
	b := 0
	for b < len(TickBounds) && took > TickBounds[b] {
		b++
	}
	s.Updates[b]++
	s.TickMax = max(s.TickMax, took)
}

// counts publishes the server's counts; r.mu is held.
func (r *room) counts(st *systems.ServerStats, now time.Time) {
	s := &r.stats
	s.Clients, s.Peak, s.Held = st.Connections, max(s.Peak, st.Connections), st.Held
	s.Reconnects, s.HeldGivenUp = st.Reconnects, st.ReconnectsExpired+st.HeldEvicted
	s.Ticks = st.Ticks
	s.Expected = uint64(now.Sub(r.opened) / (time.Second / time.Duration(r.rate)))
	s.BytesIn, s.BytesOut = st.BytesReceived, st.BytesSent
	s.Dropped = st.Dropped
}

// snapshot returns the room's stats with the percentiles of its recent
// updates.
func (r *room) snapshot() RoomStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	n := min(r.n, len(r.times))
	if n > 0 {
		d := slices.Clone(r.times[:n])
		slices.Sort(d)
		s.TickP50, s.TickP99 = d[n/2], d[min(n-1, n*99/100)]
	}
	return s
}

// close closes the server (telling every client) and the listener, and
// hands the room's last stats to OnEnd: the clients it had when it
// closed, the bytes of the goodbyes.
func (r *room) close() {
	st := r.server.Stats()
	r.server.Close()
	_ = r.listener.Close()
	if r.hooks.onEnd == nil {
		return
	}
	last := r.server.Stats()
	last.Connections, last.Held = st.Connections, st.Held
	r.mu.Lock()
	r.counts(&last, time.Now())
	r.mu.Unlock()
	r.hooks.onEnd(r.snapshot(), r.server)
}

// newRoom builds a room's server on its listener.
func newRoom(name string, shared transport.Listener, game *systems.Game, opts systems.ServerOptions, hooks roomHooks, emptyFor time.Duration) (*room, error) {
	l := newRoomListener(shared)
	srv, err := systems.NewServer(gw.NewRealTime(), l, game, opts)
	if err != nil {
		return nil, err
	}
	rate := game.TickRate
	if rate == 0 {
		rate = 60
	}
	now := time.Now()
	return &room{name: name, server: srv, listener: l, rate: rate, opened: now, hooks: hooks, emptyFor: emptyFor,
		end: make(chan struct{}), done: make(chan struct{}), stats: RoomStats{Name: name, Opened: now}}, nil
}
