package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/fleet"
	"github.com/ghostwire/ghostwire/systems/metrics"
	"github.com/ghostwire/ghostwire/systems/rooms"
	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// Limits of the -serve flags.
const (
	maxArenaRooms = 16 // -rooms: the rooms measured on one process (docs/operations.md)
	// reconnectGrace is how long a room holds the place of a player whose
	// connection was lost: its car stays, and a new token for the same
	// room and identity takes it back.
	reconnectGrace = 30 * time.Second
	// agonesAddressWait bounds the wait for the sidecar to say the game
	// server's public address before listening.
	agonesAddressWait = 30 * time.Second
)

// serverOptions configure the -serve process.
type serverOptions struct {
	Game   game.Config // TickRate, LagComp, MaxRewind, Seed; Clients is the maximum per room
	Bind   string      // -serve
	Public netip.AddrPort
	Key    [udp.KeySize]byte
	Tokens string // -tokens: the token endpoint's address, "" for none
	// TokenSecret is what a caller of the token endpoint presents.
	TokenSecret string
	// Rooms is how many rooms the process runs (-rooms), each an arena
	// match waiting for players, named roomName(1..Rooms).
	Rooms int
	// Metrics is the address of the operator's endpoints (-metrics), ""
	// for none.
	Metrics string
	// Agones runs the process as an Agones game server (-agones), through
	// the sidecar at localhost:$AGONES_SDK_HTTP_PORT.
	Agones bool
	// Grace is the drain's whole time (-grace); fleet.DefaultGrace when
	// zero.
	Grace      time.Duration
	Duration   time.Duration // 0: until the context ends
	Logger     *slog.Logger
	AddrRate   udp.Rate // zero: udp's default
	MaxPending int      // zero: udp's default
	// Record is -record: the file each room's match is recorded to
	// (recordPath), "" for none.
	Record string
}

// recordPath is the recording file of room name: file itself for a
// single room, else FILE-name.EXT.
func recordPath(file, name string, rooms int) string {
	if rooms == 1 {
		return file
	}
	ext := filepath.Ext(file)
	return strings.TrimSuffix(file, ext) + "-" + name + ext
}

// roomName is the name of the arena's room i (1-based), which tokens
// name in their claims.
func roomName(i int) string { return fmt.Sprintf("arena-%d", i) }

// arenaServer is the arena's -serve process: a fleet member
// (systems/fleet) running -rooms rooms of the arena behind one UDP port,
// each room the same game systems as the headless match on its own
// goroutine in real time, with a token endpoint, the operator's
// endpoints and Agones when asked.
type arenaServer struct {
	opts     serverOptions
	started  time.Time
	config   game.ReportConfig
	listener *udp.Listener
	conns    *trackedListener
	fleet    *fleet.Server
	tokens   *tokenServer // nil without -tokens
	metrics  net.Listener // nil without -metrics

	mu    sync.Mutex
	rooms map[string]*arenaRoom // the -rooms rooms, by name
}

// newArenaServer binds the UDP socket (with -agones, on the public
// address the sidecar gives), the token endpoint and the metrics
// endpoints if asked, and opens the rooms; ctx bounds the wait for the
// sidecar.
func newArenaServer(ctx context.Context, o serverOptions) (*arenaServer, error) {
	cfg := o.Game
	cfg.Duration = max(o.Duration, time.Second) // the server has no bots: only validated
	o.Game = cfg
	template, err := game.NewEndpoints(cfg, gw.NewRealTime())
	if err != nil {
		return nil, err
	}
	if o.Rooms < 1 || o.Rooms > maxArenaRooms {
		return nil, fmt.Errorf("-rooms %d: allowed range is 1..%d", o.Rooms, maxArenaRooms)
	}
	var sdk *agones.SDK
	if o.Agones {
		if sdk, err = agones.New(agones.Options{Logger: o.Logger}); err != nil {
			return nil, fmt.Errorf("-agones: %w", err)
		}
		if !o.Public.IsValid() {
			wait, cancel := context.WithTimeout(ctx, agonesAddressWait)
			o.Public, err = fleet.AgonesAddress(wait, sdk, "")
			cancel()
			if err != nil {
				return nil, fmt.Errorf("-agones: %w", err)
			}
		}
	}
	l, err := udp.Listen(udp.Options{BindAddress: o.Bind, PublicAddress: o.Public, PrivateKey: o.Key,
		ProtocolID: arenaProtocolID, MaxClients: cfg.Clients * o.Rooms, AddressRate: o.AddrRate, MaxPending: o.MaxPending,
		Polled: true, SendBatch: udp.MaxSendBatch, Logger: o.Logger})
	if err != nil {
		if errors.Is(err, udp.ErrInvalidOptions) && !o.Public.IsValid() {
			return nil, fmt.Errorf("-serve %s: %w (bound to every interface: give -public IP:PORT, the address clients reach)", o.Bind, err)
		}
		return nil, fmt.Errorf("-serve %s: %w", o.Bind, err)
	}
	s := &arenaServer{opts: o, started: time.Now(), config: template.ReportConfig(), listener: l, conns: &trackedListener{l: l},
		rooms: map[string]*arenaRoom{}}
	if err := s.start(sdk); err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

// start builds the fleet member, serves the token endpoint and listens
// for the metrics, then opens the rooms.
func (s *arenaServer) start(sdk *agones.SDK) error {
	o := s.opts
	var to *tokens.Options
	if o.Tokens != "" {
		to = &tokens.Options{Key: o.Key, ProtocolID: arenaProtocolID, Secret: o.TokenSecret, Life: tokenLife,
			Timeout: tokenTimeout, Rooms: s.isRoom}
	}
	var err error
	s.fleet, err = fleet.New(fleet.Options{
		Rooms: rooms.Options{Listener: s.conns, NewRoom: s.newRoom, MaxRooms: o.Rooms, EmptyFor: -1,
			OnOpen: s.roomOpened, OnEnd: s.roomEnded, Logger: o.Logger},
		Tokens: to, Agones: sdk, Grace: o.Grace, Logger: o.Logger,
	})
	if err != nil {
		return err
	}
	if o.Tokens != "" {
		if s.tokens, err = serveTokens(o.Tokens, s.fleet.Tokens(), o.Logger); err != nil {
			return err
		}
	}
	if o.Metrics != "" {
		if s.metrics, err = net.Listen("tcp", o.Metrics); err != nil {
			return fmt.Errorf("-metrics %s: %w", o.Metrics, err)
		}
	}
	for i := 1; i <= o.Rooms; i++ {
		if err := s.fleet.Rooms().Open(roomName(i)); err != nil {
			return err
		}
	}
	return nil
}

// abort releases what a failed start holds: the rooms opened wait for a
// Run, which ends them at once.
func (s *arenaServer) abort() {
	if s.fleet != nil {
		s.fleet.Drain()
		_, _ = s.fleet.Run(context.Background()) // closes the listener
	} else {
		_ = s.listener.Close()
	}
	if s.tokens != nil {
		s.tokens.close()
	}
	if s.metrics != nil {
		_ = s.metrics.Close()
	}
}

// isRoom says whether the token endpoint gives tokens for room: one of
// the -rooms rooms.
func (s *arenaServer) isRoom(room string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rooms[room] != nil
}

// newRoom is a room's game: the arena's, with the reconnect grace.
func (s *arenaServer) newRoom(name string) (*systems.Game, systems.ServerOptions, error) {
	g, err := game.NewEndpoints(s.opts.Game, gw.NewRealTime())
	if err != nil {
		return nil, systems.ServerOptions{}, err
	}
	so := g.ServerOptions()
	so.MaxClients, so.Logger, so.ReconnectGrace = s.opts.Game.Clients, s.opts.Logger, reconnectGrace
	room := &arenaRoom{name: name, game: g, rate: s.opts.Game.TickRate}
	game := g.Game()
	if s.opts.Record != "" {
		if so.Recorder, err = room.record(recordPath(s.opts.Record, name, s.opts.Rooms), game, s.opts.Game); err != nil {
			return nil, systems.ServerOptions{}, err
		}
	}
	s.mu.Lock()
	s.rooms[name] = room
	s.mu.Unlock()
	return game, so, nil
}

// room returns room name.
func (s *arenaServer) room(name string) *arenaRoom {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rooms[name]
}

// roomOpened sets a room's server up (rooms.Options.OnOpen).
func (s *arenaServer) roomOpened(name string, srv *systems.Server) error {
	r := s.room(name)
	if err := r.setup(srv); err != nil {
		s.mu.Lock()
		delete(s.rooms, name)
		s.mu.Unlock()
		return err
	}
	return nil
}

// roomEnded keeps a room's last report (rooms.Options.OnEnd).
func (s *arenaServer) roomEnded(st rooms.RoomStats, srv *systems.Server) {
	s.room(st.Name).ended(st, srv)
}

// sortedRooms returns the rooms by name.
func (s *arenaServer) sortedRooms() []*arenaRoom {
	s.mu.Lock()
	rs := make([]*arenaRoom, 0, len(s.rooms))
	for _, r := range s.rooms {
		rs = append(rs, r)
	}
	s.mu.Unlock()
	slices.SortFunc(rs, func(a, b *arenaRoom) int { return strings.Compare(a.name, b.name) })
	return rs
}

// run serves until the drain is over (ctx ends, the duration passes or
// Agones says Shutdown), printing a line per second to out (nil: none),
// then returns the report.
func (s *arenaServer) run(ctx context.Context, out io.Writer) (*serverReport, error) {
	if s.opts.Duration > 0 {
		t := time.AfterFunc(s.opts.Duration, s.fleet.Drain)
		defer t.Stop()
	}
	served := make(chan error, 1)
	stopMetrics := func() {}
	if s.metrics != nil {
		mctx, cancel := context.WithCancel(context.Background())
		go func() { served <- metrics.ServeListener(mctx, s.metrics, s.fleet.Metrics(), false) }()
		stopMetrics = func() { cancel(); <-served }
	}
	type ran struct {
		r   fleet.Report
		err error
	}
	done := make(chan ran, 1)
	go func() {
		r, err := s.fleet.Run(ctx)
		done <- ran{r, err}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last serverSecond
	for at := time.Second; ; at += time.Second {
		select {
		case res := <-done:
			stopMetrics() // /readyz said not ready since the drain began
			if s.tokens != nil {
				s.tokens.close()
			}
			return s.report(res.r), res.err
		case <-tick.C:
		}
		s.conns.prune()
		if out != nil {
			line := s.second(at, last)
			line.print(out)
			last = line
		}
	}
}

// serverSecond is the -serve process's per-second line: what the rooms
// see, added up. The clients' side (prediction, rollbacks) is in their
// own lines.
type serverSecond struct {
	at                 time.Duration
	rooms              int
	tick               gw.Tick // the furthest room's
	clients            int
	rtt                time.Duration // the packet layer's, averaged over the rooms with clients
	applied, missing   uint64        // inputs so far
	fired, hits, kills uint64        // shots judged so far
	bytesIn, bytesOut  uint64        // so far
	received, sent     float64       // bytes per second over the last second
}

// second reads the line of the second ending at at; last is the line
// before.
func (s *arenaServer) second(at time.Duration, last serverSecond) serverSecond {
	l := serverSecond{at: at}
	var rtt time.Duration
	withClients := 0
	for _, st := range s.fleet.Rooms().Rooms() {
		l.rooms++
		l.clients += st.Clients
		l.bytesIn, l.bytesOut = l.bytesIn+st.BytesIn, l.bytesOut+st.BytesOut
		r := s.room(st.Name)
		if r == nil {
			continue
		}
		snap := r.snapshot()
		l.tick = max(l.tick, snap.tick)
		l.applied += snap.stats.InputsApplied
		l.missing += snap.stats.InputsMissing
		l.fired += snap.report.Shots.Fired
		l.hits += snap.report.Shots.Hits
		l.kills += snap.report.Shots.Kills
		if st.Clients > 0 {
			rtt += snap.stats.LinkRTT
			withClients++
		}
	}
	if withClients > 0 {
		l.rtt = rtt / time.Duration(withClients)
	}
	if l.bytesIn >= last.bytesIn && l.bytesOut >= last.bytesOut { // a room that ended takes its bytes along
		l.received, l.sent = float64(l.bytesIn-last.bytesIn), float64(l.bytesOut-last.bytesOut)
	}
	return l
}

func (l serverSecond) print(w io.Writer) {
	fmt.Fprintf(w, "t=%4.0fs  rooms %2d  server tick %6d  clients %2d  rtt %4.1fms  inputs applied %7d missing %5d  shots %6d hits %6d kills %5d  received %6.1f KB/s  sent %7.1f KB/s\n",
		l.at.Seconds(), l.rooms, l.tick, l.clients, float64(l.rtt)/float64(time.Millisecond), l.applied, l.missing, l.fired, l.hits, l.kills,
		l.received/1024, l.sent/1024)
}
