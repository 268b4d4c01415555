package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/fleet"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// networkModes are the flags that turn the arena into a process of a real
// network game instead of the headless match.
var networkModes = []string{"serve", "connect", "genkey"}

// isNetworkRun reports whether args ask for -serve, -connect or -genkey.
func isNetworkRun(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name := strings.TrimLeft(a, "-")
		if len(a)-len(name) < 1 || len(a)-len(name) > 2 {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		for _, m := range networkModes {
			if name == m {
				return true
			}
		}
	}
	return false
}

// networkArgs are the flags of -serve, -connect and -genkey.
type networkArgs struct {
	cfg                                         game.Config
	serve, public, connect, key, tokens, genkey string
	tokenSecret                                 string
	maxClients                                  int
	duration                                    time.Duration
	report                                      string
	quiet                                       bool
	// The fleet member's (-serve) and the room a client joins (-connect).
	rooms   int
	metrics string
	agones  bool
	grace   time.Duration
	room    string
	record  string // -serve: -record
}

// networkFlags defines the network modes' flags into a.
func networkFlags(a *networkArgs) *flag.FlagSet {
	a.cfg = game.DefaultConfig()
	cfg := &a.cfg
	cfg.RTT, cfg.Jitter, cfg.Loss = 0, 0, 0 // the network is real: nothing is simulated
	fs := newFlagSet()
	fs.StringVar(&a.serve, "serve", "", "run a server bound to this UDP address (host:port; port 0 picks one)")
	fs.StringVar(&a.public, "public", "", "the server's address as clients reach it, named in connect tokens (default: the -serve address)")
	fs.StringVar(&a.connect, "connect", "", "run bot clients of the server at this UDP address (its public address)")
	fs.StringVar(&a.key, "key", "", "file holding the 32-byte private key shared by servers and token makers")
	fs.StringVar(&a.tokens, "tokens", "", "-serve: also serve connect tokens over HTTP on this address; -connect: fetch tokens from this URL instead of making them with -key")
	fs.StringVar(&a.tokenSecret, "token-secret", "", "file holding the token endpoint's shared secret (16..1024 bytes of text), required with -tokens: the server's endpoint serves only callers presenting it")
	fs.StringVar(&a.genkey, "genkey", "", "write a new random 32-byte key to this file (which must not exist) and exit")
	fs.IntVar(&a.maxClients, "max-clients", 64, "client slots of each room (1..64)")
	fs.IntVar(&a.rooms, "rooms", 1, fmt.Sprintf("rooms this server runs behind its one UDP port, each an arena match waiting for players, named arena-1..arena-N (1..%d)", maxArenaRooms))
	fs.StringVar(&a.metrics, "metrics", "", "serve /metrics (Prometheus), /healthz and /readyz on this address (host:port; port 0 picks one)")
	fs.BoolVar(&a.agones, "agones", false, "run as an Agones game server through the sidecar at localhost:$AGONES_SDK_HTTP_PORT (9358): the public address from it, Ready, health pings, a rooms counter, Shutdown after the drain")
	fs.DurationVar(&a.grace, "grace", fleet.DefaultGrace, "on SIGTERM, SIGINT or Agones' Shutdown, the drain's time: rooms with players play on until the grace less a sixth, then every client is told the server is closing (1s..1h; at most the pod's terminationGracePeriodSeconds)")
	fs.StringVar(&a.record, "record", "", "-serve: record each room's match to this file (docs/replays.md); with -rooms above 1, FILE-arena-N.EXT per room")
	fs.StringVar(&a.room, "room", roomName(1), "the room the bots join, named in their tokens (a -serve process's arena-1..arena-N)")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "number of bot clients, each on its own connection (1..64)")
	fs.DurationVar(&a.duration, "duration", 0, "-serve: how long to serve (0..24h; 0: until SIGINT or SIGTERM); -connect: play before the bots stand still (1s..2h; 0: 30s)")
	fs.IntVar(&cfg.TickRate, "tick-rate", cfg.TickRate, "ticks per second (10..240), the same on server and clients")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the bots")
	fs.Var(rollbackFlag{&cfg.Rollback}, "rollback", "reconciliation policy: mismatch|always")
	fs.Var(onOffFlag{&cfg.LagComp}, "lagcomp", "judge shots at the shooter's view tick (on) or against the present (off)")
	fs.DurationVar(&cfg.MaxRewind, "max-rewind", cfg.MaxRewind, "lag-compensation window (one tick..2s)")
	fs.DurationVar(&cfg.InterpDelay, "interp-delay", cfg.InterpDelay, "interpolation delay of remote players (0 = adaptive, up to 1s)")
	fs.Var(inputDelayFlag{&cfg.InputDelay}, "input-delay", fmt.Sprintf("-connect: ticks each client's input waits before it applies (0..%d), or auto: adaptive from the measured RTT and jitter (0..4)", systems.MaxInputDelay))
	fs.Var(aimFlag{&cfg.BotAim}, "bot-aim", "how the bots aim: perfect (fire at once, never miss) or human (a reaction time, misses)")
	fs.StringVar(&a.report, "report", "", "write the JSON report to this file")
	fs.BoolVar(&a.quiet, "quiet", false, "no per-second lines, and only warnings in the log")
	return fs
}

// runNetwork runs the -serve or -connect process (or -genkey) until it is
// done or ctx ends; either way it writes its report.
func runNetwork(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a networkArgs
	fs := networkFlags(&a)
	if ok, err := parse(fs, args, stdout); !ok {
		return err
	}
	cfg := a.cfg
	level := slog.LevelInfo
	var out io.Writer = stdout
	if a.quiet {
		level, out = slog.LevelWarn, nil
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	modes := 0
	for _, m := range []string{a.serve, a.connect, a.genkey} {
		if m != "" {
			modes++
		}
	}
	if modes != 1 {
		return errors.New("give exactly one of -serve ADDR, -connect ADDR and -genkey FILE")
	}
	if a.genkey != "" {
		if err := writeKeyFile(a.genkey); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "arena: wrote a new key to %s\n", a.genkey)
		if root, ok := gitWorkTree(a.genkey); ok {
			fmt.Fprintf(stdout, "arena: warning: %s is inside the git work tree %s; keep it out of commits (the repository's .gitignore ignores *.key, yours may not)\n", a.genkey, root)
		}
		return nil
	}
	if a.serve != "" {
		switch {
		case a.maxClients < 1 || a.maxClients > 64:
			return fmt.Errorf("-max-clients %d: allowed range is 1..64", a.maxClients)
		case a.duration < 0 || a.duration > 24*time.Hour:
			return fmt.Errorf("-duration %v: allowed range is 0 (until a signal)..24h for -serve", a.duration)
		case a.rooms < 1 || a.rooms > maxArenaRooms:
			return fmt.Errorf("-rooms %d: allowed range is 1..%d", a.rooms, maxArenaRooms)
		case a.grace < time.Second || a.grace > fleet.MaxGrace:
			return fmt.Errorf("-grace %v: allowed range is 1s..1h", a.grace)
		case a.agones && a.public != "":
			return errors.New("-public with -agones: the public address is the one Agones assigns the game server, learnt from its sidecar")
		case isSet(fs, "room"):
			return errors.New("-room is a -connect flag: a server runs -rooms rooms, arena-1..arena-N")
		}
		cfg.Clients = a.maxClients
		return runServer(ctx, cfg, a, out, stdout, log)
	}
	for _, f := range []string{"public", "rooms", "metrics", "agones", "grace", "record"} {
		if isSet(fs, f) {
			return fmt.Errorf("-%s is a -serve flag: a client connects to the server's public address with -connect", f)
		}
	}
	cfg.Duration = 30 * time.Second
	if a.duration != 0 {
		cfg.Duration = a.duration
	}
	o, err := clientsFromFlags(cfg, a.connect, a.key, a.tokens, a.tokenSecret, log)
	if err != nil {
		return err
	}
	if err := (&tokens.Claims{Room: a.room, Identity: "-"}).Check(); err != nil {
		return fmt.Errorf("-room %q: %w", a.room, err)
	}
	o.Room = a.room
	return runClients(ctx, o, a.report, out, stdout)
}

// runServer runs the -serve process: the fleet member until its drain is
// over, then its summary and report.
func runServer(ctx context.Context, cfg game.Config, a networkArgs, out, stdout io.Writer, log *slog.Logger) error {
	if a.key == "" {
		return errors.New("-serve needs -key FILE: the 32-byte private key its connect tokens are made with (make one with -genkey FILE)")
	}
	key, err := readKeyFile(a.key)
	if err != nil {
		return err
	}
	o := serverOptions{Game: cfg, Bind: a.serve, Key: key, Tokens: a.tokens, Rooms: a.rooms, Metrics: a.metrics, Agones: a.agones,
		Grace: a.grace, Duration: a.duration, Logger: log, Record: a.record}
	if a.tokens != "" {
		if a.tokenSecret == "" {
			return errors.New("-tokens needs -token-secret FILE: the secret a caller of the token endpoint presents (make one with: head -c 24 /dev/urandom | base64 > FILE)")
		}
		if o.TokenSecret, err = readSecretFile(a.tokenSecret); err != nil {
			return err
		}
	}
	if a.public != "" {
		if o.Public, err = resolveAddr("-public", a.public); err != nil {
			return err
		}
	}
	s, err := newArenaServer(ctx, o)
	if err != nil {
		return err
	}
	// Tests and scripts wait for these lines: print them whatever -quiet.
	fmt.Fprintf(stdout, "arena: serving on udp %v (public address %v)\n", s.listener.Addr(), s.listener.PublicAddress())
	fmt.Fprintf(stdout, "arena: %d rooms, arena-1..arena-%d, of up to %d clients each\n", a.rooms, a.rooms, cfg.Clients)
	if s.tokens != nil {
		fmt.Fprintf(stdout, "arena: connect tokens at %s\n", s.tokens.URL())
	}
	if s.metrics != nil {
		fmt.Fprintf(stdout, "arena: metrics at http://%s/metrics\n", s.metrics.Addr())
	}
	r, runErr := s.run(ctx, out)
	c, dr, d := r.Connections, r.Dropped, r.Drain
	fmt.Fprintf(stdout, "\nserver: %d ticks, %d connections (peak %d, %d open at the end, told the server is closing), %d B sent, %d B received\n",
		r.Server.Ticks, c.Accepted, c.Peak, c.OpenAtEnd, r.Server.BytesSent, r.Server.BytesReceived)
	fmt.Fprintf(stdout, "dropped: malformed %d, bad token %d, expired token %d, replayed %d, unknown client %d, server full %d, rate limited %d, timeout %d\n",
		dr.Malformed, dr.BadToken, dr.ExpiredToken, dr.Replayed, dr.UnknownClient, dr.ServerFull, dr.RateLimited, dr.Timeout)
	fmt.Fprintf(stdout, "drain (%s): %.1fs of a %.0fs grace, %d rooms finished, %d ended at the grace; refused while draining: %d connections\n",
		d.Reason, d.Seconds, d.GraceS, d.Finished, d.Ended, c.Refused["draining"])
	for _, rr := range r.Rooms {
		fmt.Fprintf(stdout, "room %s: %d ticks, %d clients at the end (peak %d), %d reconnects, update p50 %.0fµs p99 %.0fµs max %.0fµs, cpu %.2fs, shots %d hits %d kills %d\n",
			rr.Name, rr.Ticks, rr.ClientsAtEnd, rr.Peak, rr.Reconnects, rr.TickP50US, rr.TickP99US, rr.TickMaxUS, rr.CPUSeconds,
			rr.Server.Shots.Fired, rr.Server.Shots.Hits, rr.Server.Shots.Kills)
		if rec := rr.Recording; rec != nil {
			fmt.Fprintf(stdout, "room %s: recording %s, %d bytes (%.0f B per player per minute)%s\n", rr.Name, rec.File, rec.Bytes,
				rec.BytesPerPlayerMinute, map[bool]string{true: "; error: " + rr.RecordingError}[rr.RecordingError != ""])
		}
	}
	if ag := r.Agones; ag != nil {
		fmt.Fprintf(stdout, "agones: public address %s, %d calls (%d retried), %d health pings (%d failed), rooms counter %d of %d\n",
			ag.PublicAddress, ag.Calls, ag.Retries, ag.HealthPings, ag.HealthFailed, ag.RoomsCount, ag.RoomsCapacity)
	}
	if a.report != "" {
		if err := writeReport(a.report, r); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}

// clientsFromFlags checks the -connect flags and turns them into the
// clients' options: the server's address, and the key to make tokens with
// or the endpoint to fetch them from.
func clientsFromFlags(cfg game.Config, connect, keyFile, tokens, secretFile string, log *slog.Logger) (clientsOptions, error) {
	server, err := resolveAddr("-connect", connect)
	if err != nil {
		return clientsOptions{}, err
	}
	o := clientsOptions{Game: cfg, Server: server, Logger: log}
	switch {
	case tokens != "" && keyFile != "":
		return o, errors.New("give -key FILE (make tokens here) or -tokens URL (fetch them), not both")
	case tokens != "" && secretFile == "":
		return o, errors.New("-tokens URL needs -token-secret FILE: the token endpoint's shared secret")
	case tokens != "":
		if o.TokenURL, err = tokenURL(tokens); err == nil {
			o.TokenSecret, err = readSecretFile(secretFile)
		}
	case keyFile != "":
		o.Key, err = readKeyFile(keyFile)
	default:
		err = errors.New("-connect needs -key FILE (the server's private key, to make connect tokens) or -tokens URL (a token endpoint)")
	}
	return o, err
}

// runClients runs the -connect process: the bots play until the match is
// over, every connection ended or ctx ends; then it prints the summary
// (and why no client connected, if none did) and writes the report.
func runClients(ctx context.Context, o clientsOptions, report string, out, stdout io.Writer) error {
	c, err := newArenaClients(ctx, o)
	if err != nil {
		return err
	}
	if out != nil {
		fmt.Fprintf(out, "arena: connecting %d clients to %v\n", len(c.bots), o.Server)
	}
	r := c.run(ctx, out)
	fmt.Fprintln(stdout)
	for _, cl := range r.Clients {
		fmt.Fprintf(stdout, "client %2d: rtt %5.1fms ahead %4.1f  mispredictions %4d rollbacks %4d  hits confirmed %4d  converged %v  %s\n",
			cl.ID, cl.RTTms, cl.AheadTicks, cl.Mispredictions, cl.Rollbacks, cl.ConfirmedHits, cl.Converged, cl.End)
	}
	fmt.Fprintf(stdout, "clean: %v  converged: %v\n", r.Clean, r.Converged)
	unanswered := 0
	for _, b := range c.bots {
		if b.noAnswer {
			unanswered++
		}
	}
	if unanswered > 0 {
		fmt.Fprint(stdout, noAnswerCauses(o, unanswered))
	}
	if report != "" {
		if err := writeReport(report, r); err != nil {
			return err
		}
	}
	switch {
	case unanswered == len(c.bots):
		return fmt.Errorf("no answer from the server at %v to any client's handshake (likely causes above)", o.Server)
	case !r.Clean:
		return errors.New("a client's connection did not end cleanly (see its end in the summary)")
	}
	return nil
}

// noAnswerCauses explains a handshake nobody answered. A netcode 1.02
// server answers nothing to a connect token it cannot open (another key,
// another protocol ID, another address): by design it tells an attacker
// nothing, and so the client cannot tell a wrong key from no server.
func noAnswerCauses(o clientsOptions, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "arena: %d of %d clients got no answer from %v to their handshake within %ds. The likely causes:\n",
		n, o.Game.Clients, o.Server, cmp.Or(o.TokenTimeout, tokenTimeout))
	fmt.Fprintf(&b, "  - no server runs at %v (start one with -serve), or it is down;\n", o.Server)
	if o.TokenURL == "" {
		b.WriteString("  - the server's key is not this -key file's: a netcode 1.02 server silently ignores connect tokens made\n" +
			"    with another key (by design: it tells an attacker nothing), so a client cannot tell a wrong key from no server;\n")
	}
	fmt.Fprintf(&b, "  - %v is not the server's public address (its -public, which every token names), or the server is\n"+
		"    another game or version (another protocol ID): such tokens are ignored the same way;\n", o.Server)
	fmt.Fprintf(&b, "  - a firewall or security group drops UDP to port %d.\n", o.Server.Port())
	b.WriteString("  The server's report counts the tokens it ignored (dropped.bad_token); see docs/network.md.\n")
	return b.String()
}

// resolveAddr resolves a host:port flag value to an address.
func resolveAddr(flagName, s string) (netip.AddrPort, error) {
	a, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%s %s: %w", flagName, s, err)
	}
	ap := netip.AddrPortFrom(a.AddrPort().Addr().Unmap(), a.AddrPort().Port())
	if !ap.IsValid() || ap.Port() == 0 || ap.Addr().IsUnspecified() {
		return netip.AddrPort{}, fmt.Errorf("%s %s: want a specific IP and a port, such as 203.0.113.7:40000", flagName, s)
	}
	return ap, nil
}
