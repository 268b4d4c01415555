package rooms

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// MaxRoomsLimit bounds Options.MaxRooms.
const MaxRoomsLimit = 1024

// Refusal reasons of connections the manager routed nowhere, the keys of
// Stats.Refused.
const (
	RefusedNoClaims    = "no_claims"    // the connection carries no room (another token maker's user data)
	RefusedUnknownRoom = "unknown_room" // its room is not open, and Options.OpenOnDemand is off or the cap is reached
	RefusedRoomBusy    = "room_busy"    // 64 connections already wait for the room to accept them
	RefusedDraining    = "draining"     // the manager admits nothing new (Drain)
)

// Options configure a Manager.
type Options struct {
	// Listener is the netcode listener every room shares; the manager
	// owns it from Run on and closes it when Run returns.
	Listener transport.Listener
	// NewRoom builds a room's game and server options when it opens; it
	// runs on the caller of Open or on Run's goroutine (OpenOnDemand).
	// Options whose Identity is nil get tokens.Identity, the identity of
	// the token's claims, so a room with a ReconnectGrace gives a player's
	// new connection (a new token for the same room and identity, routed
	// to the same room) its place back.
	NewRoom func(name string) (*systems.Game, systems.ServerOptions, error)
	// MaxRooms caps the rooms open at once; 16 when zero. Allowed:
	// 0..MaxRoomsLimit.
	MaxRooms int
	// EmptyFor ends a room that has had no client for that long; 30 s when
	// zero, never when negative.
	EmptyFor time.Duration
	// OpenOnDemand opens a room the first time a connection names it (the
	// token service decided it exists), within MaxRooms.
	OpenOnDemand bool
	// Route names the room of a new connection; nil reads the room of its
	// token's claims (tokens.ParseClaims of the udp connection's user
	// data). It must read what the token service wrote, never what the
	// client sends.
	Route func(c transport.Conn) (room string, err error)
	// OnOpen, if set, runs when a room opens, once its server is built and
	// before its first update, on the goroutine that opens it (Open's
	// caller, or Run's for OpenOnDemand) with the manager's lock held: for
	// what the game adds to the server (lag compensation, its own
	// systems) and for counting rooms. It must not call the Manager. An
	// error refuses the room: Open returns it and the server is closed.
	OnOpen func(name string, s *systems.Server) error
	// OnEnd, if set, runs on a room's goroutine once its server has
	// closed (every client told), with the room's last stats and the
	// server, which updates no more: for a last read of what the game
	// counted. It runs before the room leaves Rooms, so before Wait and
	// Shutdown return. OnOpen and OnEnd are called once each per room
	// that opened.
	OnEnd func(st RoomStats, s *systems.Server)
	// OnTick, if set, runs on a room's goroutine before each of its
	// updates: instrumentation.
	OnTick func(room string)
	// Logger receives rooms opening and ending; nil discards.
	Logger *slog.Logger
}

// Stats counts the manager's routing.
type Stats struct {
	Routed         uint64
	Refused        map[string]uint64
	Opened, Ended  uint64
	Rooms, MaxRoom int // open now, and the cap
}

// Manager runs rooms behind one listener. Open, End, Rooms and Stats are
// safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	rooms    map[string]*room
	stats    Stats
	ctx      context.Context // Run's; rooms opened before Run wait for it
	started  chan struct{}
	draining atomic.Bool // read by the rooms: a draining room with no client ends
	wg       sync.WaitGroup
}

// New returns a Manager. It errors on a missing Listener or NewRoom, or
// MaxRooms out of range.
func New(opts Options) (*Manager, error) {
	switch {
	case opts.Listener == nil:
		return nil, errors.New("rooms: Options.Listener is nil")
	case opts.NewRoom == nil:
		return nil, errors.New("rooms: Options.NewRoom is nil")
	case opts.MaxRooms < 0 || opts.MaxRooms > MaxRoomsLimit:
		return nil, fmt.Errorf("rooms: MaxRooms %d outside 0..%d", opts.MaxRooms, MaxRoomsLimit)
	}
	if opts.MaxRooms == 0 {
		opts.MaxRooms = 16
	}
	if opts.EmptyFor == 0 {
		opts.EmptyFor = 30 * time.Second
	}
	if opts.Route == nil {
		opts.Route = claimsRoom
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{opts: opts, log: log, rooms: map[string]*room{}, started: make(chan struct{}),
		stats: Stats{Refused: map[string]uint64{}, MaxRoom: opts.MaxRooms}}
	return m, nil
}

// claimsRoom is the default Route: the room of the token's claims.
func claimsRoom(c transport.Conn) (string, error) {
	claims, err := tokens.ConnClaims(c)
	if err != nil {
		return "", err
	}
	return claims.Room, nil
}

// Open opens a room. It errors when the name is taken, MaxRooms rooms are
// open, the manager drains, or NewRoom or the server fails.
func (m *Manager) Open(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.openLocked(name)
}

func (m *Manager) openLocked(name string) error {
	switch {
	case m.draining.Load():
		return fmt.Errorf("rooms: room %q: the manager is draining", name)
	case m.rooms[name] != nil:
		return fmt.Errorf("rooms: room %q is open already", name)
	case len(m.rooms) >= m.opts.MaxRooms:
		return fmt.Errorf("rooms: room %q would be the %dth; at most %d", name, len(m.rooms)+1, m.opts.MaxRooms)
	}
	game, sopts, err := m.opts.NewRoom(name)
	if err != nil {
		return fmt.Errorf("rooms: room %q: %w", name, err)
	}
	if sopts.Identity == nil {
		sopts.Identity = tokens.Identity
	}
	emptyFor := m.opts.EmptyFor
	if emptyFor < 0 {
		emptyFor = 0
	}
	r, err := newRoom(name, m.opts.Listener, game, sopts, roomHooks{onTick: m.opts.OnTick, onEnd: m.opts.OnEnd, draining: &m.draining}, emptyFor)
	if err != nil {
		return fmt.Errorf("rooms: room %q: %w", name, err)
	}
	if m.opts.OnOpen != nil {
		if err := m.opts.OnOpen(name, r.server); err != nil {
			r.server.Close()
			_ = r.listener.Close()
			return fmt.Errorf("rooms: room %q: OnOpen: %w", name, err)
		}
	}
	m.rooms[name] = r
	m.stats.Opened++
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		<-m.started
		r.run(m.ctx, m.ended)
	}()
	m.log.Info("ghostwire: room opened", "room", name, "rooms", len(m.rooms))
	return nil
}

// ended forgets a room whose goroutine returned.
func (m *Manager) ended(r *room) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rooms[r.name] == r {
		delete(m.rooms, r.name)
	}
	m.stats.Ended++
	m.log.Info("ghostwire: room ended", "room", r.name, "rooms", len(m.rooms))
}

// End ends a room (its game says the match is over): its server tells
// every client and closes. It reports whether the room was open.
func (m *Manager) End(name string) bool {
	m.mu.Lock()
	r := m.rooms[name]
	m.mu.Unlock()
	if r == nil {
		return false
	}
	r.stop()
	return true
}

// Drain admits nothing new from now on: no room opens, no connection is
// routed (a player's reconnection neither); the open rooms play on until
// they end, and a room with no connection ends at once, since nobody can
// join it any more: its match is over.
func (m *Manager) Drain() { m.draining.Store(true) }

// Shutdown drains the manager and gives its rooms until grace has passed
// (or ctx ends) to finish their matches (a room with no connection
// finishes at once); the rooms still open then are ended, each server
// telling its clients it is closing. It returns how
// many rooms finished by themselves and how many it ended. Run keeps
// going: cancel its context after Shutdown returns.
func (m *Manager) Shutdown(ctx context.Context, grace time.Duration) (finished, ended int) {
	m.Drain()
	m.mu.Lock()
	open := len(m.rooms)
	m.mu.Unlock()
	wait, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	_ = m.Wait(wait)
	m.mu.Lock()
	left := make([]*room, 0, len(m.rooms))
	for _, r := range m.rooms {
		left = append(left, r)
	}
	m.mu.Unlock()
	for _, r := range left {
		r.stop()
	}
	for _, r := range left {
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
	return open - len(left), len(left)
}

// Rooms returns the open rooms' stats, by name.
func (m *Manager) Rooms() []RoomStats {
	m.mu.Lock()
	rs := make([]*room, 0, len(m.rooms))
	for _, r := range m.rooms {
		rs = append(rs, r)
	}
	m.mu.Unlock()
	out := make([]RoomStats, len(rs))
	for i, r := range rs {
		out[i] = r.snapshot()
	}
	slices.SortFunc(out, func(a, b RoomStats) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Stats returns the routing counts.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.stats
	st.Rooms = len(m.rooms)
	st.Refused = make(map[string]uint64, len(m.stats.Refused))
	for k, v := range m.stats.Refused {
		st.Refused[k] = v
	}
	return st
}

// Run routes new connections to their rooms every 10 ms and runs the
// rooms, until ctx ends; then every room closes (telling its clients),
// the listener closes, and Run returns once every room's goroutine has.
// Call it once.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	m.ctx = ctx
	m.mu.Unlock()
	close(m.started)
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		m.route()
		select {
		case <-ctx.Done():
			m.wg.Wait()
			_ = m.opts.Listener.Close()
			return nil
		case <-t.C:
		}
	}
}

// Wait blocks until every room has ended (after Drain, the rooms finish
// their matches) or ctx ends.
func (m *Manager) Wait(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		m.mu.Lock()
		n := len(m.rooms)
		m.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// route hands every waiting connection to its room, polling the listener
// first when it is a transport.Poller (the rooms poll it too, each
// Update; before the first room opens, nothing else would).
func (m *Manager) route() {
	if p, ok := m.opts.Listener.(transport.Poller); ok {
		p.Poll()
	}
	for {
		c, ok := m.opts.Listener.Accept()
		if !ok {
			return
		}
		name, err := m.opts.Route(c)
		m.mu.Lock()
		reason := ""
		switch r := m.rooms[name]; {
		case m.draining.Load():
			reason = RefusedDraining
		case err != nil:
			reason = RefusedNoClaims
		case r == nil && !m.opts.OpenOnDemand:
			reason = RefusedUnknownRoom
		case r == nil:
			if m.openLocked(name) != nil {
				reason = RefusedUnknownRoom
			} else if !m.rooms[name].listener.offer(c) {
				reason = RefusedRoomBusy
			}
		case !r.listener.offer(c):
			reason = RefusedRoomBusy
		}
		if reason != "" {
			m.stats.Refused[reason]++
		} else {
			m.stats.Routed++
		}
		m.mu.Unlock()
		if reason != "" {
			_ = c.Close()
		}
	}
}
