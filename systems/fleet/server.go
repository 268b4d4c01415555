package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/metrics"
	"github.com/ghostwire/ghostwire/systems/rooms"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// Limits of Options.
const (
	MaxHealthPeriod = 5 * time.Minute
	MaxGrace        = time.Hour
)

// DefaultGrace is Kubernetes' default terminationGracePeriodSeconds: the
// time between SIGTERM and SIGKILL.
const DefaultGrace = 30 * time.Second

// Options configure a Server.
type Options struct {
	// Rooms configure the process's rooms (rooms.New); Listener and
	// NewRoom are required. OnOpen and OnEnd, if set, run before the
	// server's own bookkeeping of a room (the Agones counter, the
	// report).
	Rooms rooms.Options
	// Tokens, if not nil, configure the token service a matchmaker calls
	// (Server.Tokens, an http.Handler to serve). A zero PublicAddress is
	// the listener's; on Agones it follows the game server's. Its Rooms
	// is wrapped: no room takes players once the server drains.
	Tokens *tokens.Options
	// Metrics configure the operator's endpoints (Server.Metrics, an
	// http.Handler to serve, metrics.Serve); their Sources are the rooms
	// and the token service. /readyz is ready from Ready (at once without
	// Agones) until the drain.
	Metrics metrics.Options
	// Agones, if not nil, is the sidecar of the Agones game server the
	// process is: Ready, Health, the counter, the watch and Shutdown go
	// through it. Nil: the process runs without Agones (a drain ends
	// Run, nothing else changes).
	Agones *agones.SDK
	// HealthPeriod is the fleet's spec.health.periodSeconds: a health ping
	// goes every half of it. agones.DefaultHealthPeriod when zero;
	// allowed 1 s..MaxHealthPeriod.
	HealthPeriod time.Duration
	// Counter is the Agones counter kept equal to the open rooms (declared
	// in the fleet's spec.counters); "rooms" when empty. The server owns
	// it: it sets the capacity to Rooms.MaxRooms as it starts and the
	// count to the rooms open, then adds +1 and −1; an allocation must not
	// change it too (no counterActions). A counter the fleet does not
	// declare is left alone, with a warning.
	Counter string
	// Port names the game server port whose public address tokens name
	// ("default" in docs/operations.md's manifest); the first port when
	// empty.
	Port string
	// Grace is the drain's whole time, from its start to Shutdown:
	// Kubernetes' terminationGracePeriodSeconds, DefaultGrace when zero;
	// allowed 1 s..MaxGrace. Margin is kept back from it for the
	// goodbyes, the last counter update, Shutdown and the process's own
	// closing: Grace/6 but at least a second (at most Grace/2) when zero;
	// allowed 0..Grace/2. The rooms get Grace − Margin to finish.
	Grace, Margin time.Duration
	// Clock is what the counter's retries wait on; nil is the real clock.
	// Tests pass the SDK's fake (agonestest.Clock).
	Clock agones.Clock
	// Logger receives the server's life (Ready, the public address, the
	// drain) at Info and the sidecar's failures at Warn; nil discards.
	Logger *slog.Logger
}

// publicSetter is a listener that learns its public address after it
// listens (udp.Listener).
type publicSetter interface {
	PublicAddress() netip.AddrPort
	SetPublicAddress(netip.AddrPort) error
}

// Server is a dedicated game server process: its rooms, token service,
// metrics and Agones life. Build it with New, open rooms (Rooms().Open)
// or let connections open them (Options.Rooms.OpenOnDemand), serve
// Tokens and Metrics over HTTP, and call Run. Its methods are safe for
// concurrent use.
type Server struct {
	opts    Options
	log     *slog.Logger
	rooms   *rooms.Manager
	tokens  *tokens.Service
	metrics *metrics.Handler
	public  publicSetter // nil when the listener's address is fixed
	count   *counter     // nil without Agones

	drainCtx   context.Context // ended when the drain starts
	startDrain context.CancelFunc
	drainOnce  sync.Once
	mu         sync.Mutex
	reason     Reason
	draining   bool
	finalRooms []rooms.RoomStats // the rooms that ended during the drain
	publicAddr netip.AddrPort    // the last address learnt from Agones
	ran        atomic.Bool
}

// New builds the server: the room manager, the token service and the
// metrics handler. It contacts nobody: Run does. It errors on options out
// of range, naming them, and as rooms.New and tokens.New do.
func New(opts Options) (*Server, error) {
	switch {
	case opts.HealthPeriod != 0 && (opts.HealthPeriod < time.Second || opts.HealthPeriod > MaxHealthPeriod):
		return nil, fmt.Errorf("fleet: HealthPeriod %v outside 1s..%v", opts.HealthPeriod, MaxHealthPeriod)
	case opts.Grace != 0 && (opts.Grace < time.Second || opts.Grace > MaxGrace):
		return nil, fmt.Errorf("fleet: Grace %v outside 1s..%v", opts.Grace, MaxGrace)
	case len(opts.Counter) > 63 || strings.ContainsAny(opts.Counter, "/?#% \t\n"):
		return nil, fmt.Errorf("fleet: Counter %q: want a counter name of at most 63 characters, without '/', '?', '#', '%%' or spaces", opts.Counter)
	}
	if opts.Grace == 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Margin < 0 || opts.Margin > opts.Grace/2 {
		return nil, fmt.Errorf("fleet: Margin %v outside 0..%v (half the grace %v)", opts.Margin, opts.Grace/2, opts.Grace)
	}
	if opts.Margin == 0 {
		opts.Margin = min(max(opts.Grace/6, time.Second), opts.Grace/2)
	}
	if opts.HealthPeriod == 0 {
		opts.HealthPeriod = agones.DefaultHealthPeriod
	}
	if opts.Counter == "" {
		opts.Counter = "rooms"
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	s := &Server{opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.drainCtx, s.startDrain = context.WithCancel(context.Background())
	s.public, _ = opts.Rooms.Listener.(publicSetter)
	ro := opts.Rooms
	ro.OnOpen, ro.OnEnd = s.opened, s.ended
	if ro.MaxRooms == 0 {
		ro.MaxRooms = 16 // rooms' default, which the counter's capacity needs to know
	}
	m, err := rooms.New(ro)
	if err != nil {
		return nil, err
	}
	s.rooms = m
	if opts.Tokens != nil {
		to := *opts.Tokens
		if !to.PublicAddress.IsValid() && s.public != nil {
			to.PublicAddress = s.public.PublicAddress()
		}
		user := to.Rooms
		to.Rooms = func(room string) bool { return !s.Draining() && (user == nil || user(room)) }
		if s.tokens, err = tokens.New(to); err != nil {
			return nil, err
		}
	}
	mo := opts.Metrics
	mo.Sources = metrics.Sources{Rooms: m, Tokens: s.tokens}
	s.metrics = metrics.NewHandler(mo)
	if opts.Agones != nil {
		s.count = &counter{sdk: opts.Agones, name: opts.Counter, capacity: int64(ro.MaxRooms), clock: opts.Clock, log: s.log,
			kick: make(chan struct{}, 1)}
	}
	return s, nil
}

// Rooms returns the room manager: to open and end rooms, and read their
// stats. Its Run, Drain and Shutdown are the Server's to call.
func (s *Server) Rooms() *rooms.Manager { return s.rooms }

// Tokens returns the token service (nil without Options.Tokens), an
// http.Handler to serve where the matchmaker reaches it.
func (s *Server) Tokens() *tokens.Service { return s.tokens }

// Metrics returns the operator's endpoints (/metrics, /healthz, /readyz),
// an http.Handler to serve (metrics.Serve).
func (s *Server) Metrics() *metrics.Handler { return s.metrics }

// Draining reports whether the drain has begun.
func (s *Server) Draining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// PublicAddress returns the address the server's tokens name: the one
// learnt from Agones, else the listener's (zero when the listener does
// not say).
func (s *Server) PublicAddress() netip.AddrPort {
	s.mu.Lock()
	a := s.publicAddr
	s.mu.Unlock()
	if !a.IsValid() && s.public != nil {
		a = s.public.PublicAddress()
	}
	return a
}

// Drain starts the drain now, as a SIGTERM would (ReasonDrain); Run then
// returns once it is over. Later calls, and other causes after the
// first, do nothing.
func (s *Server) Drain() { s.drain(ReasonDrain) }

// drain admits nothing new from now on and wakes Run; the first reason is
// kept.
func (s *Server) drain(why Reason) {
	s.drainOnce.Do(func() {
		s.rooms.Drain() // first: no room opens after the flag below, so finalRooms stays within MaxRooms
		s.mu.Lock()
		s.reason, s.draining = why, true
		s.metrics.SetReady(false)
		s.mu.Unlock()
		if s.count != nil {
			s.count.drain()
		}
		s.log.Info("ghostwire: draining", "reason", string(why), "rooms", len(s.rooms.Rooms()))
		s.startDrain()
	})
}

// opened counts a room that opened, after the game's own OnOpen.
func (s *Server) opened(name string, srv *systems.Server) error {
	if f := s.opts.Rooms.OnOpen; f != nil {
		if err := f(name, srv); err != nil {
			return err
		}
	}
	if s.count != nil {
		s.count.add(1)
	}
	return nil
}

// ended counts a room that ended, after the game's own OnEnd, and keeps
// its last stats for the report when it ended during the drain.
func (s *Server) ended(st rooms.RoomStats, srv *systems.Server) {
	if f := s.opts.Rooms.OnEnd; f != nil {
		f(st, srv)
	}
	s.mu.Lock()
	if s.draining {
		s.finalRooms = append(s.finalRooms, st)
	}
	s.mu.Unlock()
	if s.count != nil {
		s.count.add(-1)
	}
}

// watched follows the game server as Agones changes it: its public
// address, and the Shutdown state that starts the drain.
func (s *Server) watched(gs agones.GameServer) {
	if a, ok := gs.PublicAddress(s.opts.Port); ok {
		s.setPublic(a)
	}
	if gs.Status.State == "Shutdown" {
		s.drain(ReasonAgones)
	}
}

// setPublic gives a newly learnt public address to the listener and the
// token service.
func (s *Server) setPublic(a netip.AddrPort) {
	s.mu.Lock()
	same := s.publicAddr == a
	s.publicAddr = a
	s.mu.Unlock()
	if same {
		return
	}
	if s.public != nil {
		if err := s.public.SetPublicAddress(a); err != nil {
			s.log.Warn("ghostwire: the public address from Agones is unusable", "address", a, "err", err)
			return
		}
	}
	if s.tokens != nil {
		s.tokens.SetPublicAddress(a)
	}
	s.log.Info("ghostwire: public address from Agones", "address", a)
}

// Run runs the server until its drain is over, and returns the drain's
// report. It calls Ready at once (the listener listens since New), keeps
// the health pings, the counter and the public address going, and drains
// when ctx ends (main cancels it on SIGTERM), when Agones marks the game
// server Shutdown, on Drain, or when Ready fails. It returns Ready's or
// Shutdown's error, if any, with the report. Call it once.
func (s *Server) Run(ctx context.Context) (Report, error) {
	if !s.ran.CompareAndSwap(false, true) {
		return Report{}, errors.New("fleet: Run called twice")
	}
	life, endLife := context.WithCancel(context.WithoutCancel(ctx)) // health and watch: until Shutdown
	defer endLife()
	play, endPlay := context.WithCancel(context.WithoutCancel(ctx)) // the rooms
	defer endPlay()
	played := make(chan struct{})
	go func() {
		defer close(played)
		_ = s.rooms.Run(play)
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	counting, endCounting := context.WithCancel(life)
	defer endCounting()
	var readyErr error
	if sdk := s.opts.Agones; sdk != nil {
		_ = sdk.KeepHealthy(life, s.opts.HealthPeriod) // New checked the period, its only error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = sdk.Watch(life, s.watched)
		}()
		go func() {
			defer wg.Done()
			s.count.keep(counting)
		}()
		readyErr = s.ready(ctx)
	}
	if readyErr == nil {
		s.mu.Lock() // not after the drain said not ready
		s.metrics.SetReady(!s.draining)
		s.mu.Unlock()
	}
	select {
	case <-ctx.Done():
		s.drain(ReasonContext)
	case <-s.drainCtx.Done():
	}
	began := time.Now()
	_, endedAtGrace := s.rooms.Shutdown(context.Background(), s.opts.Grace-s.opts.Margin)
	routing := s.rooms.Stats()
	endPlay()
	<-played // the listener closed: every client got netcode's goodbye too
	var shutdownErr error
	if s.count != nil {
		endCounting() // keep's update in flight, if any, is cut short: finish sets the count whatever it did
		final, cancel := context.WithTimeout(context.Background(), s.opts.Margin)
		if err := s.count.finish(final); err != nil {
			s.log.Warn("ghostwire: the rooms counter's last update failed", "err", err)
		}
		shutdownErr = s.opts.Agones.Shutdown(final)
		cancel()
		if shutdownErr != nil {
			shutdownErr = fmt.Errorf("fleet: Shutdown: %w", shutdownErr)
		}
		s.log.Info("ghostwire: Shutdown", "err", shutdownErr)
	}
	endLife()
	wg.Wait()
	s.mu.Lock()
	// Shutdown counts the rooms open when it began: those that finished
	// between the drain's start and it are in finalRooms.
	r := Report{Reason: s.reason, Rooms: s.finalRooms, Finished: len(s.finalRooms) - endedAtGrace, Ended: endedAtGrace, Drain: time.Since(began),
		Routing: routing, PublicAddress: s.publicAddr}
	s.mu.Unlock()
	if s.count != nil {
		r.Agones = s.opts.Agones.Stats()
		r.Counter, r.CounterErrors = s.count.report()
	}
	return r, errors.Join(readyErr, shutdownErr)
}

// ready calls Ready, giving up when the drain starts first; a failure
// starts the drain.
func (s *Server) ready(ctx context.Context) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.drainCtx, cancel)
	defer stop()
	err := s.opts.Agones.Ready(rctx)
	switch {
	case err == nil:
		s.log.Info("ghostwire: Ready")
	case ctx.Err() != nil || s.Draining(): // the drain began first: Ready no longer matters
		err = nil
	default:
		s.log.Warn("ghostwire: Ready failed", "err", err)
		s.drain(ReasonReady)
		err = fmt.Errorf("fleet: Ready: %w", err)
	}
	return err
}

// realClock is time's own clock.
type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
