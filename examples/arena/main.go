// Command arena runs a headless ghostwire match: a server and bot clients
// over conditioned in-memory links, on virtual time as fast as the machine
// allows. It prints one line per simulated second and a summary, and can
// write a JSON report.
//
//	go run ./examples/arena -clients 8 -rtt 150ms -loss 5 -report report.json
//
// With -serve or -connect it is one side of a real network game over UDP
// instead (see network.go and docs/network.md).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/replay"
)

func main() {
	// Every mode ends cleanly on either signal: the headless match stops its
	// bots and reports, -serve and -connect say goodbye and report, -web
	// tells the pages it is closing.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "arena:", err)
		os.Exit(2)
	}
}

// rollbackFlag parses -rollback.
type rollbackFlag struct{ p *game.RollbackPolicy }

func (f rollbackFlag) String() string {
	if f.p == nil {
		return "mismatch"
	}
	return f.p.String()
}

func (f rollbackFlag) Set(s string) error {
	switch s {
	case "mismatch":
		*f.p = game.RollbackOnMismatch
	case "always":
		*f.p = game.RollbackAlways
	default:
		return fmt.Errorf("%q: allowed values are mismatch|always", s)
	}
	return nil
}

// onOffFlag parses -lagcomp.
type onOffFlag struct{ p *bool }

func (f onOffFlag) String() string {
	if f.p == nil || *f.p {
		return "on"
	}
	return "off"
}

func (f onOffFlag) Set(s string) error {
	switch s {
	case "on":
		*f.p = true
	case "off":
		*f.p = false
	default:
		return fmt.Errorf("%q: allowed values are on|off", s)
	}
	return nil
}

// percentFlag parses a percentage, refusing what is not a number.
type percentFlag struct{ p *float64 }

func (f percentFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

func (f percentFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number (percent, 0..50)", s)
	}
	*f.p = v
	return nil
}

// aimFlag parses -bot-aim.
type aimFlag struct{ p *string }

func (f aimFlag) String() string {
	if f.p == nil {
		return game.AimPerfect
	}
	return *f.p
}

func (f aimFlag) Set(s string) error {
	if s != game.AimPerfect && s != game.AimHuman {
		return fmt.Errorf("%q: allowed values are perfect|human", s)
	}
	*f.p = s
	return nil
}

// inputDelayFlag parses -input-delay: ticks or auto.
type inputDelayFlag struct{ p *systems.InputDelay }

func (f inputDelayFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return game.InputDelayFlag(*f.p)
}

func (f inputDelayFlag) Set(s string) error {
	d, err := game.ParseInputDelay(s)
	if err != nil {
		return err
	}
	*f.p = d
	return nil
}

// webOptions are -web's options from the parsed flags. The page's bots aim
// like people unless -bot-aim perfect says otherwise: a person must be
// able to win.
func webOptions(fs *flag.FlagSet, cfg game.Config, a *headlessArgs, log *slog.Logger) web.Options {
	perfect := isSet(fs, "bot-aim") && cfg.BotAim == game.AimPerfect
	return web.Options{Bots: cfg.Clients, Seed: cfg.Seed, PerfectAim: perfect, Chat: cfg.Chat, ServerSettings: a.webSettings, Logger: log,
		Transport: a.webTransport, CertFile: a.webCert, KeyFile: a.webKey}
}

// isSet reports whether the command line gave flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// radiusFlag reads a distance into a float32; Config.Validate checks its
// range.
type radiusFlag struct{ r *float32 }

func (f radiusFlag) String() string {
	if f.r == nil {
		return "0"
	}
	return strconv.FormatFloat(float64(*f.r), 'g', -1, 32)
}

func (f radiusFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return fmt.Errorf("%q is not a distance (0..%v)", s, game.MaxViewRadius)
	}
	*f.r = float32(v)
	return nil
}

// headlessArgs are the flags of the headless match and of -web.
type headlessArgs struct {
	cfg    game.Config
	report string
	quiet  bool
	// record and replay are -record and -replay.
	record, replay string
	web            string
	webSettings    bool
	// webTransport, webCert and webKey are -web-transport, -web-cert
	// and -web-key.
	webTransport, webCert, webKey string
}

// headlessFlags defines the headless match's flags (and -web's) into a.
func headlessFlags(a *headlessArgs) *flag.FlagSet {
	a.cfg = game.DefaultConfig()
	cfg := &a.cfg
	fs := newFlagSet()
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "number of bot clients (1..64)")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "simulated play before the bots stand still (1s..2h)")
	fs.IntVar(&cfg.TickRate, "tick-rate", cfg.TickRate, "ticks per second (10..240)")
	fs.DurationVar(&cfg.RTT, "rtt", cfg.RTT, "round-trip time of every link (0..2s)")
	fs.DurationVar(&cfg.Jitter, "jitter", cfg.Jitter, "one-way jitter, ± (0..RTT/2+50ms)")
	fs.Var(percentFlag{&cfg.Loss}, "loss", "packet loss in percent, each way (0..50)")
	fs.Var(percentFlag{&cfg.Dup}, "dup", "packet duplication in percent, each way (0..50)")
	fs.Var(percentFlag{&cfg.Reorder}, "reorder", "packet reordering in percent, each way (0..50)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the links and the bots")
	fs.Var(rollbackFlag{&cfg.Rollback}, "rollback", "reconciliation policy: mismatch|always")
	fs.Var(onOffFlag{&cfg.LagComp}, "lagcomp", "judge shots at the shooter's view tick (on) or against the present (off)")
	fs.DurationVar(&cfg.MaxRewind, "max-rewind", cfg.MaxRewind, "lag-compensation window (one tick..2s)")
	fs.DurationVar(&cfg.InterpDelay, "interp-delay", cfg.InterpDelay, "interpolation delay of remote players (0 = adaptive, up to 1s)")
	fs.Var(inputDelayFlag{&cfg.InputDelay}, "input-delay", fmt.Sprintf("ticks each client's input waits before it applies (0..%d), or auto: adaptive from the measured RTT and jitter (0..4)", systems.MaxInputDelay))
	fs.IntVar(&cfg.Cheaters, "cheaters", cfg.Cheaters, "how many bots (the last ones) cheat (0..clients)")
	fs.StringVar(&cfg.Cheat, "cheat", cfg.Cheat, "how the cheaters cheat: backtrack|origin|firerate|deadshot|all (dealt out in turn)")
	fs.IntVar(&cfg.Crates, "crates", cfg.Crates, fmt.Sprintf("server-owned crates at rest, shoved by players running into them (0..%d)", game.MaxCrates))
	fs.Var(aimFlag{&cfg.BotAim}, "bot-aim", "how the bots aim: perfect (fire at once, never miss: the lag compensator's steady load) or human (a reaction time, misses)")
	fs.Var(radiusFlag{&cfg.ViewRadius}, "view-radius", fmt.Sprintf("send each client only the ghosts within this distance of its player (0..%v; 0 = everything)", game.MaxViewRadius))
	fs.Var(onOffFlag{&cfg.Ball}, "ball", "a ball the players push, predicted by a client while its player is near it")
	fs.Var(onOffFlag{&cfg.Rockets}, "rockets", "the bots fire rockets now and then beside their hitscan shots: projectiles their client predicts, with splash damage")
	fs.Var(onOffFlag{&cfg.Chat}, "chat", "the bots say a line of chat now and then (every 5..15 s), which the server relays to every client")
	fs.StringVar(&a.report, "report", "", "write the JSON report to this file")
	fs.StringVar(&a.record, "record", "", "record the server's match to this file (docs/replays.md)")
	fs.StringVar(&a.replay, "replay", "", "replay the match recorded in this file with no network, check every state hash and report (the other match flags are ignored); with -web, serve it to a browser: timeline, kills, disputed shots and their kill-cams")
	fs.BoolVar(&a.quiet, "quiet", false, "no per-second lines")
	fs.StringVar(&a.web, "web", "", "serve the arena at this address (host:port) to play in a browser against -clients bots, in real time")
	fs.BoolVar(&a.webSettings, "web-settings", false, "-web: let pages switch the server's own settings (lag compensation, for every player)")
	fs.StringVar(&a.webTransport, "web-transport", web.TransportAuto, "-web: the page's transport: auto (WebTransport, else WebSocket), webtransport or websocket")
	fs.StringVar(&a.webCert, "web-cert", "", "-web: WebTransport's certificate (PEM) for production; without it, a development certificate the page trusts by hash")
	fs.StringVar(&a.webKey, "web-key", "", "-web: the private key (PEM) of -web-cert")
	return fs
}

// newFlagSet returns a flag set that prints nothing: run reports a bad
// flag in its error, and -h prints every mode's flags (printHelp).
func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("arena", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args into fs: false with a nil error after -h, which
// printed the help to stdout.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) (bool, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, printHelp(stdout)
		}
		return false, fmt.Errorf("%w (arena -h lists every mode and flag)", err)
	}
	if fs.NArg() > 0 {
		return false, fmt.Errorf("unexpected argument %q (arena -h lists every mode and flag)", fs.Arg(0))
	}
	return true, nil
}

// run runs the mode args ask for until it is done or ctx ends (main ends
// it on SIGINT and SIGTERM); every mode then ends cleanly, with its
// report.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if isNetworkRun(args) {
		return runNetwork(ctx, args, stdout, stderr)
	}
	var a headlessArgs
	fs := headlessFlags(&a)
	if ok, err := parse(fs, args, stdout); !ok {
		return err
	}
	cfg := a.cfg
	if a.web != "" && a.replay != "" {
		return serveReplay(ctx, a.replay, a.web, stdout)
	}
	if a.web != "" {
		if cfg.Clients < 0 || cfg.Clients > 32 {
			return fmt.Errorf("-clients %d: allowed range is 0..32 with -web", cfg.Clients)
		}
		return web.ListenAndServe(ctx, a.web, webOptions(fs, cfg, &a, slog.New(slog.NewTextHandler(stderr, nil))))
	}
	if a.replay != "" {
		return runReplay(a.replay, a.report, stdout)
	}
	var rec *os.File
	if a.record != "" {
		f, err := os.Create(a.record)
		if err != nil {
			return err
		}
		defer f.Close()
		rec, cfg.Record = f, f
	}
	m, err := game.NewMatch(cfg)
	if err != nil {
		return err
	}
	var onSecond func(game.Second)
	if !a.quiet {
		onSecond = func(s game.Second) { s.Print(stdout) }
	}
	r := m.RunContext(ctx, onSecond)
	if rec != nil {
		if err := m.Recorder.Close(); err != nil {
			return err
		}
		if err := rec.Close(); err != nil {
			return err
		}
		st := m.Recorder.Stats()
		r.Recording = &game.RecordingReport{File: a.record, Bytes: st.Bytes,
			BytesPerPlayerMinute: float64(st.Bytes) / float64(cfg.Clients) / (float64(st.Ticks) / float64(cfg.TickRate) / 60)}
	}
	printSummary(stdout, r)
	if err := writeJSON(a.report, r); err != nil {
		return err
	}
	if !r.Converged {
		return errors.New("a client did not converge to the server's state")
	}
	return nil
}

// writeJSON writes v as indented JSON to file, unless file is "".
func writeJSON(file string, v any) error {
	if file == "" {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// openRecording reads the recording in file (replay.Open's checks).
func openRecording(file string) (*replay.File, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return replay.Open(fh)
}

// runReplay replays the recording in file, prints the outcome and the
// hash check and writes the JSON report to report (unless ""); a hash
// that differs is an error after the report.
func runReplay(file, report string, w io.Writer) error {
	f, err := openRecording(file)
	if err != nil {
		return err
	}
	r, err := game.Replay(f)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replay of %s: %d bytes%s\n", file, r.Size, map[bool]string{true: " (truncated: replayed to its last complete second)"}[r.Truncated])
	printConfig(w, r.Config)
	printOutcome(w, r.Config, r.Server)
	if r.Mismatch == "" {
		fmt.Fprintf(w, "hash check: %d state hashes checked, every one equal to the recording's\n", r.Checked)
	} else {
		fmt.Fprintf(w, "hash check: %d state hashes checked; %s\n", r.Checked, r.Mismatch)
	}
	fmt.Fprintf(w, "replayed %d ticks at %.0f ticks per second\n", r.Server.Ticks, r.TicksPerSecond)
	if err := writeJSON(report, r); err != nil {
		return err
	}
	if r.Mismatch != "" {
		return errors.New("the replay differs from the recording")
	}
	return nil
}

// printConfig prints the match's settings line.
func printConfig(w io.Writer, c game.ReportConfig) {
	fmt.Fprintf(w, "\narena: %d clients, %.0fs play + %.2fs still, %d Hz, rtt %.0fms ±%.0fms, loss %g%%, dup %g%%, reorder %g%%, seed %d, rollback %s, lagcomp %s (%.0fms), bot aim %s\n",
		c.Clients, c.DurationS, c.SettleS, c.TickRate, c.RTTms, c.JitterMS, c.LossPct, c.DupPct, c.ReorderPct, c.Seed, c.Rollback, c.LagComp, c.MaxRewindMS, c.BotAim)
}

// printOutcome prints what the server's world decided: the lines a
// replay reproduces.
func printOutcome(w io.Writer, c game.ReportConfig, s game.ServerReport) {
	fmt.Fprintf(w, "outcome: %d ticks, %d kills in the kill feed\n", s.Ticks, s.Kills)
	sh := s.Shots
	fmt.Fprintf(w, "shots: %d fired, %d hits (%.1f%%), %d kills; the other mode would have hit %d; verdicts %v\n",
		sh.Fired, sh.Hits, pct(sh.Hits, sh.Fired), sh.Kills, sh.OtherModeHits, sh.Verdicts)
	ro := s.Rockets
	fmt.Fprintf(w, "rockets: %d fired, %d refused (empty magazine), %d exploded, %d players hurt, %d kills (ball %s, bots' rockets %s)\n",
		ro.Fired, ro.Refused, ro.Exploded, ro.Hits, ro.Kills, c.Ball, c.Rockets)
}

func printSummary(w io.Writer, r *game.Report) {
	c := r.Config
	printConfig(w, c)
	if r.InterruptedAtS > 0 {
		fmt.Fprintf(w, "interrupted: the bots stopped at %.0fs of play and stood still %.2fs\n", r.InterruptedAtS, r.SettledS)
	}
	s := r.Server
	fmt.Fprintf(w, "server: %d ticks, %d crates, inputs applied %d, missing %d, late %d, rejected %d, %d B sent, %d B received, %d ghosts deferred\n",
		s.Ticks, c.Crates, s.InputsApplied, s.InputsMissing, s.InputsLate, s.InputsRejected, s.BytesSent, s.BytesReceived, s.GhostsDeferred)
	printOutcome(w, c, s)
	ms := s.Messages
	fmt.Fprintf(w, "messages: %d sent, %d received, refused %s, %d connections dropped for refusals; kill feed %d kills (chat %s)\n",
		ms.Sent, ms.Received, refusals(ms.Refused), s.MessageDrops, s.Kills, c.Chat)
	for _, cl := range r.Clients {
		fmt.Fprintf(w, "client %2d: rtt %5.1fms ahead %4.1f  mispredictions %4d rollbacks %4d replayed %6d  max correction %.3f  final error %.4f  footsteps %d/%d moving inputs  down %.0f B/s up %.0f B/s\n",
			cl.ID, cl.RTTms, cl.AheadTicks, cl.Mispredictions, cl.Rollbacks, cl.ReplayedTicks, cl.MaxCorrection, cl.FinalError,
			cl.Footsteps, cl.MovingInputs, cl.BytesDownPerS, cl.BytesUpPerS)
		stale := ""
		if cl.MaxGhostStaleness != nil {
			stale = fmt.Sprintf(", ghosts at most %d ticks stale", *cl.MaxGhostStaleness)
		}
		fmt.Fprintf(w, "           interpolation delay %.0fms, extrapolated %.1f ticks (max %.2f), max remote step %.2f, %d shots fired%s\n",
			cl.InterpDelayMS, cl.ExtrapolatedTicks, cl.MaxExtrapolation, cl.MaxRemoteStep, cl.ShotsFired, stale)
		fmt.Fprintf(w, "           cheat %s: %d confirmed hits, %d cheating shots, %d hits gained by cheating\n",
			cl.Cheat, cl.ConfirmedHits, cl.CheatShots, cl.CheatHits)
		pr := cl.Projectiles
		fmt.Fprintf(w, "           rockets predicted %d, matched %d, unmatched removed %d, max spawn error %.3f; ball switched to predicted %d, to interpolated %d\n",
			pr.Predicted, pr.Matched, pr.UnmatchedRemoved, pr.MaxSpawnError, cl.Ball.SwitchedToPredicted, cl.Ball.SwitchedToInterpolated)
		fmt.Fprintf(w, "           messages %d sent, %d received, %d rate-limited, refused %s%s; chat %d said, %d heard; %s\n",
			cl.Messages.Sent, cl.Messages.Received, cl.Messages.RateLimited, refusals(cl.Messages.Refused), byServer(cl.Messages.RefusedByServer),
			cl.Chat.Said, cl.Chat.Heard, killFeed(cl.KillFeed))
	}
	fmt.Fprintf(w, "kill feed: every client received every kill exactly once and in order: %v\n", r.KillFeedExact)
	fmt.Fprintf(w, "converged: %v   (%.1f simulated seconds per wall second", r.Converged, r.Wall.SimSecondsPerSecond)
	if t := r.Wall.ServerTickUS; t != nil {
		fmt.Fprintf(w, "; server tick %.1f µs mean, %.1f µs p99", t.Mean, t.P99)
	}
	fmt.Fprintln(w, ")")
	if rec := r.Recording; rec != nil {
		fmt.Fprintf(w, "recording: %s, %d bytes (%.0f B per player per minute)\n", rec.File, rec.Bytes, rec.BytesPerPlayerMinute)
	}
}

// refusals writes refused messages by reason.
func refusals(r game.RefusalReport) string {
	return fmt.Sprintf("%d oversized, %d malformed, %d unknown, %d over rate", r.Oversized, r.Malformed, r.Unknown, r.OverRate)
}

// byServer writes what the server refused of a client's messages, when
// known.
func byServer(r *game.RefusalReport) string {
	if r == nil {
		return ""
	}
	return " (by the server: " + refusals(*r) + ")"
}

// killFeed writes a client's kill feed and its check, when known.
func killFeed(k game.KillFeedReport) string {
	switch {
	case k.ExactlyOnceInOrder == nil:
		return fmt.Sprintf("kill feed %d received", k.Received)
	case *k.ExactlyOnceInOrder:
		return fmt.Sprintf("kill feed %d of %d, each once and in order", k.Received, *k.Sent)
	}
	return fmt.Sprintf("kill feed %d received of %d sent: %s", k.Received, *k.Sent, k.Mismatch)
}

func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
