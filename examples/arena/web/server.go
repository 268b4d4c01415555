// Package web serves the arena in a browser: a person plays against bots
// in real time, through the same Go client code as the bots' compiled to
// WebAssembly, over WebTransport when the browser has it and WebSocket
// otherwise. The page shows the client's view beside the
// server's truth, with sliders that condition that connection's link on the
// server side, toggles for prediction, interpolation delay and lag
// compensation, and a live timeline of the client's netcode.
//
// The server builds the client with the local Go toolchain when it starts
// (GOOS=js GOARCH=wasm, into a temporary directory) and serves the Go
// installation's wasm_exec.js beside it; no binary lives in the repository.
//
//	go run ./examples/arena -web 127.0.0.1:8080
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlange-42/arche/ecs"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/websocket"
)

// Options configures a Server. The zero value serves a match without
// bots, seeded with 0.
type Options struct {
	// Bots is the number of bot players, 0..32.
	Bots int
	// PerfectAim makes the bots aim as the headless match's do: at once,
	// never missing. By default they aim like people (game.HumanAim), so
	// that a person playing the page can win a duel.
	PerfectAim bool
	// Chat makes the bots say a line of chat now and then (game.Chatter).
	Chat bool
	// Seed seeds the bots and the link conditioners.
	Seed uint64
	// Frame is the game loop's period; 2 ms when zero. Allowed: 1ms..50ms.
	Frame time.Duration
	// Logger receives the server's events; slog.Default() when nil.
	Logger *slog.Logger
	// ServerSettings lets a page switch the server's own settings (lag
	// compensation, for every player); off, the page shows them but
	// cannot change them. The arena's -web-settings.
	ServerSettings bool
	// ReadTimeout bounds reading a request, headers and body; 10 s when
	// zero. Allowed: 100ms..1m. The game's WebSocket and the spectator
	// stream live past it.
	ReadTimeout time.Duration
	// Transport is what the page uses: TransportAuto ("" too) tries
	// WebTransport and falls back to WebSocket, TransportWebTransport
	// uses only WebTransport, TransportWebSocket only WebSocket (the
	// server then serves no WebTransport). A page's ?transport= overrides
	// it for that page. The arena's -web-transport.
	Transport string
	// WebTransportAddr is the UDP address of WebTransport; 127.0.0.1:0
	// (a free loopback port) when empty. ListenAndServe and Serve use the
	// HTTP server's host and port when it is empty, falling back to a
	// free port of that host when the UDP port is taken.
	WebTransportAddr string
	// CertFile and KeyFile hold WebTransport's certificate and key (PEM),
	// for production; empty, the server makes a development certificate
	// that the page trusts by its hash (see transport/webtransport).
	CertFile, KeyFile string
}

// Server is the arena's web server: the game server, its bots, the built
// client and the page. Handler serves the page; Run runs the game.
type Server struct {
	opts   Options
	clock  gw.TimeSource
	game   *systems.Server
	schema *game.Schema
	shots  *game.ShotSystem
	// armoury is the server's side of the rockets: magazines and splash.
	armoury *game.Armoury
	// rewound and present are the two lag compensators; the shot system
	// judges with the one the page's toggle selects.
	rewound, present *lagcomp.Compensator
	lagComp          atomic.Bool
	bots             []*play.Player
	memory           transport.Listener
	ws               *websocket.Listener
	// wt serves WebTransport (nothing when Options.Transport is websocket,
	// or in a WebAssembly build: webtransport_server.go).
	wt         wtServer
	transports Transports

	wasm, execJS []byte

	// accepting serialises WebSocket handshakes and their hand-over: the
	// connection Accept returns right after a handshake is that
	// handshake's, and connections are queued (or refused when the queue
	// is full) in the order their handshakes completed.
	accepting sync.Mutex
	mu        sync.Mutex
	accepted  []transport.Conn
	open      []*linkConn // the pages' connections not known to be closed
	sessions  sessions
	conns     uint64
	// sessionsWT counts the connections of conns that came over
	// WebTransport.
	sessionsWT uint64

	refusedSockets uint64

	truth                      atomic.Pointer[[]byte]
	published                  bool
	lastTick                   gw.Tick
	truthOpen                  atomic.Int64
	truthStreams, truthRefused atomic.Uint64
	postsRefused               atomic.Uint64
	done                       chan struct{}

	serverStats atomic.Pointer[systems.ServerStats]
}

// Stats counts what the web server did.
type Stats struct {
	Server systems.ServerStats
	// WebTransport counts the pages' connections that came over
	// WebTransport; Sockets - WebTransport came over WebSocket.
	WebTransport uint64
	// Sockets counts the pages' connections accepted, SocketsRefused
	// those closed because the game loop had not yet taken the 64 before
	// them, SessionsEvicted the least recently used sessions forgotten
	// to make room (MaxSessions).
	Sockets, SocketsRefused uint64
	SessionsEvicted         uint64
	// Truth counts the spectator streams opened; TruthRefused those
	// refused because MaxTruthStreams were open.
	Truth, TruthRefused uint64
	// PostsRefused counts the state-changing requests refused: not JSON,
	// from another site, or server-wide settings while they are off.
	PostsRefused uint64
}

// Stats returns the counters; the game server's are those of its newest
// tick.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := Stats{Sockets: s.conns, WebTransport: s.sessionsWT, SocketsRefused: s.refusedSockets, SessionsEvicted: s.sessions.evicted}
	s.mu.Unlock()
	st.Truth, st.TruthRefused = s.truthStreams.Load(), s.truthRefused.Load()
	st.PostsRefused = s.postsRefused.Load()
	if ss := s.serverStats.Load(); ss != nil {
		st.Server = *ss
	}
	return st
}

// New builds the page's client (which takes a while the first time) and
// the game server with its bots. ctx bounds the build.
func New(ctx context.Context, opts Options) (*Server, error) {
	switch {
	case opts.Bots < 0 || opts.Bots > 32:
		return nil, fmt.Errorf("web: Bots %d: allowed range is 0..32", opts.Bots)
	case opts.Frame == 0:
		opts.Frame = 2 * time.Millisecond
	case opts.Frame < time.Millisecond || opts.Frame > 50*time.Millisecond:
		return nil, fmt.Errorf("web: Frame %v: allowed range is 1ms..50ms", opts.Frame)
	case opts.ReadTimeout != 0 && (opts.ReadTimeout < 100*time.Millisecond || opts.ReadTimeout > time.Minute):
		return nil, fmt.Errorf("web: ReadTimeout %v: allowed range is 100ms..1m", opts.ReadTimeout)
	}
	// A switch of its own: the one above stops at its first case that
	// holds, Frame's default included.
	switch {
	case opts.Transport != "" && opts.Transport != TransportAuto && opts.Transport != TransportWebTransport && opts.Transport != TransportWebSocket:
		return nil, fmt.Errorf("web: Transport %q: allowed are %q, %q and %q", opts.Transport, TransportAuto, TransportWebTransport, TransportWebSocket)
	case (opts.CertFile == "") != (opts.KeyFile == ""):
		return nil, fmt.Errorf("web: CertFile %q and KeyFile %q: give both or neither", opts.CertFile, opts.KeyFile)
	}
	if opts.Transport == "" {
		opts.Transport = TransportAuto
	}
	if opts.WebTransportAddr == "" {
		opts.WebTransportAddr = "127.0.0.1:0"
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	dir, err := os.MkdirTemp("", "ghostwire-web-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s := &Server{opts: opts, clock: gw.NewRealTime(), sessions: sessions{}, done: make(chan struct{})}
	s.lagComp.Store(true)
	// The build takes up to a minute on a cold cache: say so, and how long
	// it took, rather than wait in silence.
	opts.Logger.Info("web: building the page's WebAssembly client with the local Go toolchain")
	began := time.Now()
	if s.wasm, s.execJS, err = clientBuild(ctx, dir); err != nil {
		return nil, err
	}
	opts.Logger.Info("web: built the WebAssembly client", "took", time.Since(began).Round(time.Millisecond), "bytes", len(s.wasm))
	if err := s.setupGame(); err != nil {
		return nil, err
	}
	if err := s.setupWebTransport(opts.WebTransportAddr); err != nil {
		return nil, err
	}
	s.publish()
	return s, nil
}

// setupGame creates the game server on a listener that takes both the
// WebSocket connections and the bots' in-memory ones, installs the arena's
// systems and connects the bots.
func (s *Server) setupGame() error {
	schema, err := game.NewSchema()
	if err != nil {
		return err
	}
	s.schema = schema
	net := transport.NewMemoryNetwork(s.clock, s.opts.Seed)
	if s.memory, err = net.Listen("arena"); err != nil {
		return err
	}
	s.ws = websocket.NewListener(websocket.ListenerOptions{})
	s.game, err = systems.NewServer(s.clock, listener{s}, game.NewGame(schema, play.TickRate, schema.SpawnPlayer, nil), systems.ServerOptions{
		Logger: s.opts.Logger,
	})
	if err != nil {
		return err
	}
	if s.rewound, err = s.compensator(false); err != nil {
		return err
	}
	if s.present, err = s.compensator(true); err != nil {
		return err
	}
	s.shots = game.NewShotSystem(s.game.World(), s.rewound)
	if s.armoury, err = game.NewArmoury(s.game, play.TickRate); err != nil {
		return err
	}
	sc := s.game.Schedule()
	sc.Add(gw.StageHistory, s.rewound)
	sc.Add(gw.StageHistory, s.present)
	sc.Add(gw.StageHistory, s.shots)
	for i := range s.opts.Bots {
		conn, err := net.Dial("arena", transport.Conditions{})
		if err != nil {
			return err
		}
		bot := game.NewBot(s.opts.Seed*1000+uint64(i)+1, s.clock, time.Duration(1<<62))
		bot.Rockets = true
		if !s.opts.PerfectAim {
			bot.Aim = game.HumanAim
		}
		opts := play.Options{Input: bot.Input, Logger: s.opts.Logger}
		if s.opts.Chat {
			opts.Chat = game.NewChatter(s.opts.Seed*1000+uint64(i)+1, s.clock, time.Duration(1<<62))
		}
		p, err := play.New(s.clock, conn, opts)
		if err != nil {
			return err
		}
		s.bots = append(s.bots, p)
	}
	return nil
}

// compensator returns a lag compensator of the arena's rules, judging at
// the shooter's view (present false) or against the present.
func (s *Server) compensator(present bool) (*lagcomp.Compensator, error) {
	walls := make([][2][3]float32, len(game.Walls))
	for i, w := range game.Walls {
		walls[i] = [2][3]float32{w.Min, w.Max}
	}
	lc, err := lagcomp.New(s.game.World(), lagcomp.Options{
		TickRate:        play.TickRate,
		Window:          500 * time.Millisecond,
		Walls:           walls,
		Range:           game.ShotRange,
		MinShotInterval: game.FireInterval,
		MaxOriginError:  game.MaxOriginError,
		Schema:          s.schema.Schema,
		Present:         present,
		Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
			p, f := lagcomp.Get[game.Position](r), lagcomp.Get[game.Facing](r)
			return [3]float32{p.X, p.Y, 0}, f.Yaw
		},
		Visible: func(_ ecs.Entity, tg *lagcomp.Rewound) bool { return lagcomp.Get[game.Health](tg).Alive() },
		// Every verdict goes back to its shooter's page: its tracer and
		// hit marker. Only the compensator judging sends.
		Server: s.game,
	})
	if err != nil {
		return nil, err
	}
	for _, err := range []error{lagcomp.Register[game.Position](lc), lagcomp.Register[game.Facing](lc), lagcomp.Register[game.Health](lc)} {
		if err != nil {
			return nil, err
		}
	}
	return lc, nil
}

// listener is the game server's: the WebSocket connections, conditioned,
// and the bots' in-memory ones.
type listener struct{ s *Server }

func (l listener) Accept() (transport.Conn, bool) {
	l.s.mu.Lock()
	if len(l.s.accepted) > 0 {
		c := l.s.accepted[0]
		l.s.accepted = l.s.accepted[1:]
		l.s.mu.Unlock()
		return c, true
	}
	l.s.mu.Unlock()
	return l.s.memory.Accept()
}

func (l listener) Close() error {
	return errors.Join(l.s.ws.Close(), l.s.closeWebTransport(), l.s.memory.Close())
}

// Run runs the game loop until ctx ends: the server's and the bots'
// updates every Frame, then the spectator state. When it returns it closes
// the listeners, the pages' connections and the spectator streams, and returns
// nil. Call it once.
func (s *Server) Run(ctx context.Context) error {
	t := time.NewTicker(s.opts.Frame)
	defer t.Stop()
	defer s.closeAll()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if s.lagComp.Load() {
			s.shots.LC = s.rewound
		} else {
			s.shots.LC = s.present
		}
		s.game.Update()
		for _, b := range s.bots {
			b.Step()
		}
		s.publish()
	}
}

// closeAll ends what Run served. The game server tells every client it is
// closing first, so the pages show it at once instead of after their
// timeout.
// HTTPServer returns an http.Server of Handler with the timeouts a public
// listener needs: 5 s to send the headers, ReadTimeout to send the whole
// request, 10 s to take an answer, 60 s idle between requests, 8 KB of
// headers. A client that sends its body slowly is cut off at ReadTimeout.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: min(5*time.Second, s.opts.ReadTimeout),
		ReadTimeout: s.opts.ReadTimeout, WriteTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second,
		MaxHeaderBytes: 8 << 10, ErrorLog: slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn)}
}

func (s *Server) closeAll() {
	close(s.done)
	s.game.Close()
	listener{s}.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.open {
		c.Close()
	}
}

// ListenAndServe serves the arena at addr until ctx ends, logging where.
func ListenAndServe(ctx context.Context, addr string, opts Options) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("web: listening at %s: %w", addr, err)
	}
	return Serve(ctx, ln, opts)
}

// Serve serves the arena on ln until ctx ends, and closes ln.
// WebTransport, unless Options say otherwise, is served on UDP at ln's
// host and port, or at a free port of that host when that one is taken.
func Serve(ctx context.Context, ln net.Listener, opts Options) error {
	if opts.WebTransportAddr == "" {
		opts.WebTransportAddr = ln.Addr().String()
		if pc, err := net.ListenPacket("udp", opts.WebTransportAddr); err != nil {
			host, _, _ := net.SplitHostPort(opts.WebTransportAddr) // a listener's address always splits
			opts.WebTransportAddr = net.JoinHostPort(host, "0")
		} else {
			pc.Close()
		}
	}
	s, err := New(ctx, opts)
	if err != nil {
		ln.Close()
		return err
	}
	hs := s.HTTPServer()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	s.opts.Logger.Info("arena on the web: open the page", "url", "http://"+ln.Addr().String()+"/")
	runErr := s.Run(ctx)
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = hs.Shutdown(shut)
	if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	st := s.Stats()
	s.opts.Logger.Info("arena on the web: closed", "ticks", st.Server.Ticks, "page_connections", st.Sockets,
		"spectator_streams", st.Truth, "shots", s.shots.Stats.Fired, "hits", s.shots.Stats.Hits, "kills", s.shots.Stats.Kills,
		"rockets", s.armoury.Stats.Fired, "rockets_refused", s.armoury.Stats.Refused, "rocket_kills", s.armoury.Stats.Kills)
	return errors.Join(runErr, err)
}
