// Package harness runs one ghostwire server and N clients in one process on
// virtual time, over an in-memory network whose links are conditioned
// (latency, jitter, loss, duplication, reordering) by a seeded random
// source. Minutes of play take seconds, nothing sleeps, and the same seed
// gives the same match. The project's tests, the arena example and a game's
// own tests use it.
package harness

import (
	"fmt"
	"log/slog"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
)

// ClientSpec describes one simulated client.
type ClientSpec struct {
	// Link is the client's connection quality, each direction separately.
	Link transport.Conditions
	// Options configure the client (input source, rollback policy, ...).
	Options systems.ClientOptions
	// Wrap, if set, wraps the client's end of the link before the client
	// uses it, so a test can drop, hold or inspect its datagrams beyond
	// what Link's random conditions do.
	Wrap func(transport.Conn) transport.Conn
	// Identity, if set, is the player the client is, as a token service
	// would have named it (tokens.Claims.Identity): the server's end of
	// its link carries it, and the harness's server reads it when
	// Options.Server.Identity is nil. A client added later with the same
	// Identity takes back the place of one whose connection was lost
	// (systems.ServerOptions.ReconnectGrace).
	Identity string
}

// Options configures a [Harness].
type Options struct {
	// Seed drives every random draw of the links.
	Seed uint64
	// Step is the virtual time advanced per step; 1 ms when zero. Allowed:
	// 100µs..50ms.
	Step time.Duration
	// FrameRate is how often clients run their frame stages, per second of
	// virtual time; 60 when zero. Allowed: 1..1000.
	FrameRate int
	// Game is the game the server and every client run. Required, with
	// its OnConnect.
	Game *systems.Game
	// Server configures the server.
	Server systems.ServerOptions
	// Clients lists the clients; each dials the server at the start.
	Clients []ClientSpec
	// SetupServer and SetupClient, if set, add what the Game does not
	// describe to the server and to client i once each is made (lag
	// compensation, a smoother, a test's probes).
	SetupServer func(s *systems.Server) error
	SetupClient func(i int, c *systems.Client) error
	// SyncTest, when not zero, is the determinism check's rollback depth
	// for the server and every client whose own options' SyncTest is zero:
	// each real world is rolled back and replayed every tick (see
	// systems.ClientOptions.SyncTest and systems.ServerOptions.SyncTest).
	SyncTest int
	// Logger is given to the server and clients that have none; nil
	// discards their logs (a simulation is measured, not read).
	Logger *slog.Logger
	// OnServerTick, if set, is called after each step whose server Update
	// ran a tick, with the wall time the server's Updates took since the
	// previous such call (receiving, the tick, sending): the server's cost
	// per tick, for measuring. It does not change the simulation; leaving
	// it nil saves two clock reads per step.
	OnServerTick func(wall time.Duration)
}

// Harness is a running simulation.
type Harness struct {
	Time    *gw.VirtualTime
	Net     *transport.MemoryNetwork
	Server  *systems.Server
	Clients []*systems.Client
	stalled []time.Duration // per client: no Update or Frame before this time
	ln      *identityListener
	opts    Options
	frame   time.Duration
	nextFrm time.Duration
	coder   codec.Coder // for CheckOwnState
	// serverWall adds up the server's Update wall time since its last
	// tick, for Options.OnServerTick.
	serverWall time.Duration
}

// New builds the server and the clients and connects every client's link.
// It errors naming the value on a bad option.
func New(opts Options) (*Harness, error) {
	if opts.Game == nil {
		return nil, fmt.Errorf("harness: Options.Game is required")
	}
	if opts.Step == 0 {
		opts.Step = time.Millisecond
	}
	if opts.FrameRate == 0 {
		opts.FrameRate = 60
	}
	if opts.Step < 100*time.Microsecond || opts.Step > 50*time.Millisecond {
		return nil, fmt.Errorf("harness: step %v outside 100µs..50ms", opts.Step)
	}
	if opts.FrameRate < 1 || opts.FrameRate > 1000 {
		return nil, fmt.Errorf("harness: frame rate %d outside 1..1000", opts.FrameRate)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Server.Logger == nil {
		opts.Server.Logger = opts.Logger
	}
	if opts.Server.SyncTest == 0 {
		opts.Server.SyncTest = opts.SyncTest
	}
	if opts.Server.Identity == nil {
		opts.Server.Identity = identityOf
	}
	h := &Harness{Time: &gw.VirtualTime{}, opts: opts, frame: time.Second / time.Duration(opts.FrameRate)}
	h.Net = transport.NewMemoryNetwork(h.Time, opts.Seed)
	l, err := h.Net.Listen("server")
	if err != nil {
		return nil, err
	}
	h.ln = &identityListener{Listener: l}
	if h.Server, err = systems.NewServer(h.Time, h.ln, opts.Game, opts.Server); err != nil {
		return nil, err
	}
	if opts.SetupServer != nil {
		if err := opts.SetupServer(h.Server); err != nil {
			return nil, err
		}
	}
	for i, spec := range opts.Clients {
		if err := h.AddClient(spec); err != nil {
			return nil, fmt.Errorf("harness: client %d: %w", i, err)
		}
	}
	return h, nil
}

// AddClient dials one more client now.
func (h *Harness) AddClient(spec ClientSpec) error {
	conn, err := h.Net.Dial("server", spec.Link)
	if err != nil {
		return err
	}
	if spec.Identity != "" {
		h.ln.tag(spec.Identity)
	}
	if spec.Wrap != nil {
		conn = spec.Wrap(conn)
	}
	if spec.Options.Logger == nil {
		spec.Options.Logger = h.opts.Logger
	}
	if spec.Options.SyncTest == 0 {
		spec.Options.SyncTest = h.opts.SyncTest
	}
	c, err := systems.NewClient(h.Time, conn, h.opts.Game, spec.Options)
	if err != nil {
		return err
	}
	if h.opts.SetupClient != nil {
		if err := h.opts.SetupClient(len(h.Clients), c); err != nil {
			return err
		}
	}
	h.Clients = append(h.Clients, c)
	h.stalled = append(h.stalled, 0)
	return nil
}

// Stall stops calling client i's Update and Frame for d of virtual time
// from now, while the server, the network and the other clients go on: a
// loading hitch, a debugger or a closed laptop lid. A later call replaces
// the end of the stall. It panics when i is not a client's index.
func (h *Harness) Stall(i int, d time.Duration) {
	h.stalled[i] = h.Time.Now() + d
}

// isStalled reports whether client i is stalled now.
func (h *Harness) isStalled(i int) bool { return h.Time.Now() < h.stalled[i] }

// Step advances virtual time by one step and updates the server, then every
// client in order, then runs client frames that are due. Stalled clients
// are left out (see [Harness.Stall]).
func (h *Harness) Step() {
	h.Time.Advance(h.opts.Step)
	h.updateServer()
	for i, c := range h.Clients {
		if !h.isStalled(i) {
			c.Update()
		}
	}
	if now := h.Time.Now(); now >= h.nextFrm {
		for i, c := range h.Clients {
			if !h.isStalled(i) {
				c.Frame()
			}
		}
		h.nextFrm += h.frame
		if h.nextFrm <= now {
			h.nextFrm = now + h.frame
		}
	}
}

// updateServer updates the server, timing it for Options.OnServerTick.
func (h *Harness) updateServer() {
	if h.opts.OnServerTick == nil {
		h.Server.Update()
		return
	}
	tick, start := h.Server.World().Tick(), time.Now()
	h.Server.Update()
	h.serverWall += time.Since(start)
	if h.Server.World().Tick() != tick {
		h.opts.OnServerTick(h.serverWall)
		h.serverWall = 0
	}
}

// Run steps through d of virtual time.
func (h *Harness) Run(d time.Duration) {
	end := h.Time.Now() + d
	for h.Time.Now() < end {
		h.Step()
	}
}

// RunUntil steps until cond holds or limit of virtual time has passed; it
// reports whether cond held.
func (h *Harness) RunUntil(cond func() bool, limit time.Duration) bool {
	end := h.Time.Now() + limit
	for !cond() {
		if h.Time.Now() >= end {
			return false
		}
		h.Step()
	}
	return true
}
