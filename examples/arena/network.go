package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ghostwire/ghostwire/examples/arena/game"
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

// runNetwork runs the -serve or -connect process (or -genkey) until it is
// done or SIGINT or SIGTERM arrives; either way it writes its report.
func runNetwork(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runNetworkContext(ctx, args, stdout, stderr)
}

func runNetworkContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := game.DefaultConfig()
	cfg.RTT, cfg.Jitter, cfg.Loss = 0, 0, 0 // the network is real: nothing is simulated
	fs := flag.NewFlagSet("arena", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serve := fs.String("serve", "", "run a server bound to this UDP address (host:port; port 0 picks one)")
	public := fs.String("public", "", "the server's address as clients reach it, named in connect tokens (default: the -serve address)")
	connect := fs.String("connect", "", "run bot clients of the server at this UDP address (its public address)")
	keyFile := fs.String("key", "", "file holding the 32-byte private key shared by servers and token makers")
	tokens := fs.String("tokens", "", "-serve: also serve connect tokens over HTTP on this address; -connect: fetch tokens from this URL instead of making them with -key")
	genkey := fs.String("genkey", "", "write a new random 32-byte key to this file (which must not exist) and exit")
	maxClients := fs.Int("max-clients", 64, "-serve: client slots (1..64)")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "-connect: number of bot clients, each on its own connection (1..64)")
	duration := fs.Duration("duration", 0, "-serve: how long to serve (0: until SIGINT or SIGTERM); -connect: play before the bots stand still (1s..2h; default 30s)")
	fs.IntVar(&cfg.TickRate, "tick-rate", cfg.TickRate, "ticks per second (10..240), the same on server and clients")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the bots")
	fs.Var(rollbackFlag{&cfg.Rollback}, "rollback", "reconciliation policy: mismatch|always")
	fs.Var(onOffFlag{&cfg.LagComp}, "lagcomp", "judge shots at the shooter's view tick (on) or against the present (off)")
	fs.DurationVar(&cfg.MaxRewind, "max-rewind", cfg.MaxRewind, "lag-compensation window (one tick..2s)")
	fs.DurationVar(&cfg.InterpDelay, "interp-delay", cfg.InterpDelay, "interpolation delay of remote players (0 = adaptive, up to 1s)")
	report := fs.String("report", "", "write the JSON report to this file")
	quiet := fs.Bool("quiet", false, "no per-second lines, and only warnings in the log")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	level := slog.LevelInfo
	var out io.Writer = stdout
	if *quiet {
		level, out = slog.LevelWarn, nil
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	modes := 0
	for _, m := range []string{*serve, *connect, *genkey} {
		if m != "" {
			modes++
		}
	}
	if modes != 1 {
		return errors.New("give exactly one of -serve ADDR, -connect ADDR and -genkey FILE")
	}
	if *genkey != "" {
		if err := writeKeyFile(*genkey); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "arena: wrote a new key to %s\n", *genkey)
		if root, ok := gitWorkTree(*genkey); ok {
			fmt.Fprintf(stdout, "arena: warning: %s is inside the git work tree %s; keep it out of commits (the repository's .gitignore ignores *.key, yours may not)\n", *genkey, root)
		}
		return nil
	}
	if *serve != "" {
		if *maxClients < 1 || *maxClients > 64 {
			return fmt.Errorf("-max-clients %d: allowed range is 1..64", *maxClients)
		}
		if *duration < 0 || *duration > 24*time.Hour {
			return fmt.Errorf("-duration %v: allowed range is 0 (until a signal)..24h for -serve", *duration)
		}
		cfg.Clients = *maxClients
		return runServer(ctx, cfg, *serve, *public, *keyFile, *tokens, *duration, *report, out, stdout, log)
	}
	if *public != "" {
		return errors.New("-public is a -serve flag: a client connects to the server's public address with -connect")
	}
	cfg.Duration = 30 * time.Second
	if *duration != 0 {
		cfg.Duration = *duration
	}
	return runClients(ctx, cfg, *connect, *keyFile, *tokens, *report, out, stdout, log)
}

func runServer(ctx context.Context, cfg game.Config, bind, public, keyFile, tokens string, d time.Duration, report string,
	out, stdout io.Writer, log *slog.Logger) error {
	if keyFile == "" {
		return errors.New("-serve needs -key FILE: the 32-byte private key its connect tokens are made with (make one with -genkey FILE)")
	}
	key, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	o := serverOptions{Game: cfg, Bind: bind, Key: key, Tokens: tokens, Duration: d, Logger: log}
	if public != "" {
		if o.Public, err = resolveAddr("-public", public); err != nil {
			return err
		}
	}
	s, err := newArenaServer(o)
	if err != nil {
		return err
	}
	// Tests and scripts wait for these lines: print them whatever -quiet.
	fmt.Fprintf(stdout, "arena: serving on udp %v (public address %v)\n", s.listener.Addr(), s.listener.PublicAddress())
	if s.tokens != nil {
		fmt.Fprintf(stdout, "arena: connect tokens at %s\n", s.tokens.URL())
	}
	r := s.run(ctx, out)
	c, dr := r.Connections, r.Dropped
	fmt.Fprintf(stdout, "\nserver: %d ticks, %d connections (peak %d, %d open at the end, told the server is closing), %d B sent, %d B received\n",
		r.Server.Ticks, c.Accepted, c.Peak, c.OpenAtEnd, r.Server.BytesSent, r.Server.BytesReceived)
	fmt.Fprintf(stdout, "dropped: malformed %d, bad token %d, expired token %d, replayed %d, unknown client %d, server full %d, rate limited %d, timeout %d\n",
		dr.Malformed, dr.BadToken, dr.ExpiredToken, dr.Replayed, dr.UnknownClient, dr.ServerFull, dr.RateLimited, dr.Timeout)
	if report != "" {
		return writeReport(report, r)
	}
	return nil
}

func runClients(ctx context.Context, cfg game.Config, connect, keyFile, tokens, report string,
	out, stdout io.Writer, log *slog.Logger) error {
	server, err := resolveAddr("-connect", connect)
	if err != nil {
		return err
	}
	o := clientsOptions{Game: cfg, Server: server, Logger: log}
	switch {
	case tokens != "" && keyFile != "":
		return errors.New("give -key FILE (make tokens here) or -tokens URL (fetch them), not both")
	case tokens != "":
		if o.TokenURL, err = tokenURL(tokens); err != nil {
			return err
		}
	case keyFile != "":
		if o.Key, err = readKeyFile(keyFile); err != nil {
			return err
		}
	default:
		return errors.New("-connect needs -key FILE (the server's private key, to make connect tokens) or -tokens URL (a token endpoint)")
	}
	c, err := newArenaClients(ctx, o)
	if err != nil {
		return err
	}
	r := c.run(ctx, out)
	fmt.Fprintln(stdout)
	for _, cl := range r.Clients {
		fmt.Fprintf(stdout, "client %2d: rtt %5.1fms ahead %4.1f  mispredictions %4d rollbacks %4d  converged %v  %s\n",
			cl.ID, cl.RTTms, cl.AheadTicks, cl.Mispredictions, cl.Rollbacks, cl.Converged, cl.End)
	}
	fmt.Fprintf(stdout, "clean: %v  converged: %v\n", r.Clean, r.Converged)
	if report != "" {
		if err := writeReport(report, r); err != nil {
			return err
		}
	}
	if !r.Clean {
		return errors.New("a client's connection did not end cleanly (see its end in the summary)")
	}
	return nil
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
