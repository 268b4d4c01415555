package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp"
)

// serverOptions configure the -serve process.
type serverOptions struct {
	Game   game.Config // TickRate, LagComp, MaxRewind, Seed; Clients is the maximum
	Bind   string      // -serve
	Public netip.AddrPort
	Key    [udp.KeySize]byte
	Tokens string // -tokens: the token endpoint's address, "" for none
	// TokenSecret is what a caller of the token endpoint presents.
	TokenSecret string
	Duration    time.Duration // 0: until the context ends
	Logger      *slog.Logger
	AddrRate    udp.Rate // zero: udp's default
	MaxPending  int      // zero: udp's default
}

// arenaServer is the arena's server in real time over a UDP listener: the
// same game systems as the headless match, driven by a real clock.
type arenaServer struct {
	opts     serverOptions
	clock    gw.TimeSource
	game     *game.Endpoints
	listener *udp.Listener
	conns    *trackedListener
	server   *systems.Server
	tokens   *tokenServer
}

// newArenaServer binds the UDP socket (and the token endpoint, if asked)
// and builds the server world.
func newArenaServer(o serverOptions) (*arenaServer, error) {
	clock := gw.NewRealTime()
	cfg := o.Game
	cfg.Duration = max(o.Duration, time.Second) // the server has no bots: only validated
	g, err := game.NewEndpoints(cfg, clock)
	if err != nil {
		return nil, err
	}
	l, err := udp.Listen(udp.Options{BindAddress: o.Bind, PublicAddress: o.Public, PrivateKey: o.Key,
		ProtocolID: arenaProtocolID, MaxClients: cfg.Clients, AddressRate: o.AddrRate, MaxPending: o.MaxPending,
		Logger: o.Logger})
	if err != nil {
		if errors.Is(err, udp.ErrInvalidOptions) && !o.Public.IsValid() {
			return nil, fmt.Errorf("-serve %s: %w (bound to every interface: give -public IP:PORT, the address clients reach)", o.Bind, err)
		}
		return nil, fmt.Errorf("-serve %s: %w", o.Bind, err)
	}
	s := &arenaServer{opts: o, clock: clock, game: g, listener: l, conns: &trackedListener{l: l}}
	so := g.ServerOptions()
	so.MaxClients, so.Logger = cfg.Clients, o.Logger
	if s.server, err = systems.NewServer(clock, s.conns, g.Game(), so); err == nil {
		err = g.SetupServer(s.server)
	}
	if err == nil && o.Tokens != "" {
		s.tokens, err = startTokenServer(o.Tokens, o.Key, l.PublicAddress(), o.TokenSecret, o.Logger)
	}
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	return s, nil
}

// update reads the network and runs the ticks that are due.
func (s *arenaServer) update() {
	s.server.Update()
	s.conns.prune()
}

// run serves until ctx ends or the duration passes, printing a line per
// second to out (nil: none), then closes and returns the report.
func (s *arenaServer) run(ctx context.Context, out io.Writer) *serverReport {
	cfg := s.opts.Game
	frame := time.NewTicker(time.Second / time.Duration(4*cfg.TickRate))
	defer frame.Stop()
	nextLine := time.Second
	var last systems.ServerStats
	for {
		select {
		case <-ctx.Done():
			return s.close()
		case <-frame.C:
		}
		s.update()
		now := s.clock.Now()
		if out != nil && now >= nextLine {
			st := s.server.Stats()
			s.second(nextLine, st, last).print(out)
			nextLine, last = nextLine+time.Second, st
		}
		if s.opts.Duration > 0 && now >= s.opts.Duration {
			return s.close()
		}
	}
}

// serverSecond is the -serve process's per-second line: what the server
// sees. The clients' side (prediction, rollbacks) is in their own lines.
type serverSecond struct {
	at                 time.Duration
	tick               gw.Tick
	clients            int
	rtt                time.Duration // the packet layer's, averaged over the connections
	applied, missing   uint64        // inputs so far
	fired, hits, kills uint64        // shots judged so far
	received, sent     float64       // bytes per second over the last second
}

// second reads the line of the second ending at at; last is the server's
// stats of the line before.
func (s *arenaServer) second(at time.Duration, st, last systems.ServerStats) serverSecond {
	sh := s.game.ServerReport(s.server).Shots
	return serverSecond{at: at, tick: s.server.World().Tick(), clients: st.Connections, rtt: st.LinkRTT,
		applied: st.InputsApplied, missing: st.InputsMissing, fired: sh.Fired, hits: sh.Hits, kills: sh.Kills,
		received: float64(st.BytesReceived - last.BytesReceived), sent: float64(st.BytesSent - last.BytesSent)}
}

func (l serverSecond) print(w io.Writer) {
	fmt.Fprintf(w, "t=%4.0fs  server tick %6d  clients %2d  rtt %4.1fms  inputs applied %7d missing %5d  shots %6d hits %6d kills %5d  received %6.1f KB/s  sent %7.1f KB/s\n",
		l.at.Seconds(), l.tick, l.clients, float64(l.rtt)/float64(time.Millisecond), l.applied, l.missing, l.fired, l.hits, l.kills,
		l.received/1024, l.sent/1024)
}

// close tells every client the server is closing, twice over: the
// endpoint's disconnect message, then netcode's redundant disconnect
// packets as the listener closes. It returns the report.
func (s *arenaServer) close() *serverReport {
	open := s.conns.open()
	s.server.Close() // every client hears the endpoint's goodbye at once
	r := &serverReport{Report: game.Report{Config: s.game.ReportConfig(), Server: s.game.ServerReport(s.server),
		Clients: []game.ClientReport{}}}
	r.Config.DurationS, r.Config.SettleS = s.opts.Duration.Seconds(), 0 // 0: until a signal
	r.Connections.OpenAtEnd = len(open)
	_ = s.listener.Close()
	if s.tokens != nil {
		s.tokens.close()
		st := s.tokens.svc.Stats()
		r.Connections.TokensIssued, r.Connections.TokensRefused = st.Issued, st.Refused
	}
	s.conns.prune()
	c := s.conns.counts
	r.Connections.Accepted, r.Connections.Peak = c.accepted, c.peak
	r.Connections.Left, r.Connections.TimedOut, r.Connections.QueueFull = c.left, c.timedOut, c.queueFull
	st := s.listener.Stats()
	r.Dropped = droppedFrom(st)
	r.Netcode = netcodeFrom(st)
	r.Wall = game.WallReport{Seconds: s.clock.Now().Seconds(), SimSecondsPerSecond: 1}
	// The server has no client's view to compare with its own: whether
	// the clients converged is in their reports.
	r.Converged = true
	return r
}

// trackedListener hands the listener's connections to the systems server
// and keeps them, so that closing can say goodbye to each and the report
// can count how they ended. Ended connections are let go by prune.
type trackedListener struct {
	l      *udp.Listener
	live   []*udp.ServerConn
	counts struct {
		accepted                  uint64
		peak                      int
		left, timedOut, queueFull uint64
	}
}

var _ transport.Listener = (*trackedListener)(nil)

// Accept implements transport.Listener.
func (t *trackedListener) Accept() (transport.Conn, bool) {
	c, ok := t.l.Accept()
	if !ok {
		return nil, false
	}
	t.live = append(t.live, c.(*udp.ServerConn))
	t.counts.accepted++
	t.counts.peak = max(t.counts.peak, len(t.live))
	return c, true
}

// Close implements transport.Listener.
func (t *trackedListener) Close() error { return t.l.Close() }

// open returns the connections not ended yet.
func (t *trackedListener) open() []*udp.ServerConn {
	t.prune()
	return append([]*udp.ServerConn(nil), t.live...)
}

// prune forgets the connections that ended, counting why.
func (t *trackedListener) prune() {
	kept := t.live[:0]
	for _, c := range t.live {
		switch err := c.Err(); {
		case err == nil:
			kept = append(kept, c)
		case errors.Is(err, udp.ErrPeerDisconnected), errors.Is(err, udp.ErrLocalClose):
			t.counts.left++ // the client said goodbye, or the game ended the connection
		case errors.Is(err, udp.ErrTimedOut):
			t.counts.timedOut++
		case errors.Is(err, udp.ErrQueueFull):
			t.counts.queueFull++
		}
	}
	clear(t.live[len(kept):])
	t.live = kept
}
