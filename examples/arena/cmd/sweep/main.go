// Command sweep plays the arena over tick rates, links and client counts
// on virtual time and prints a Markdown page of what each match measured:
// interpolation delay, hit rate and refusals, mispredictions per client
// per second, extrapolation and holds, and the tick at which convergence
// was compared. docs/tuning-figures.md is its output with the defaults,
// the grid:
//
//	go run ./examples/arena/cmd/sweep > docs/tuning-figures.md
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/examples/arena/game"
)

// link is one network condition of the sweep.
type link struct {
	Name               string
	RTT, Jitter        time.Duration
	Loss, Dup, Reorder float64 // percent
}

// links are the four links.
var links = []link{
	{Name: "clean"},
	{Name: "50 ms / 1 %", RTT: 50 * time.Millisecond, Loss: 1},
	{Name: "200 ms / ±40 ms / 8 % / 3 % dup / 5 % reorder", RTT: 200 * time.Millisecond, Jitter: 40 * time.Millisecond, Loss: 8, Dup: 3, Reorder: 5},
	{Name: "400 ms / ±80 ms / 20 %", RTT: 400 * time.Millisecond, Jitter: 80 * time.Millisecond, Loss: 20},
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(2)
	}
}

// match is what one match measured, per client and second where it says.
type match struct {
	rate, clients int
	link          link
	delayMS       float64 // mean over the match and the clients
	hits, shots   uint64
	refused       string
	mispredicted  float64 // per client per second
	extrapolated  float64 // ticks per client per second
	held          float64 // ticks per client per second
	maxExt        float64 // ticks
	converged     bool
	compared      uint32
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rates := fs.String("tick-rates", "20,30,60,128,240", "tick rates, comma-separated (10..240 each)")
	clients := fs.String("clients", "1,3,12", "client counts, comma-separated (1..64 each)")
	linkList := fs.String("links", "0,1,2,3", "links by index, comma-separated (0 clean, 1 50 ms/1 %, 2 200 ms/40 ms/8 %, 3 400 ms/80 ms/20 %)")
	duration := fs.Duration("duration", 20*time.Second, "simulated play per match (1s..2h)")
	seed := fs.Uint64("seed", 1, "seed of the links and the bots")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	hz, err := ints("tick-rates", *rates, 10, 240)
	if err != nil {
		return err
	}
	ns, err := ints("clients", *clients, 1, 64)
	if err != nil {
		return err
	}
	ls, err := ints("links", *linkList, 0, len(links)-1)
	if err != nil {
		return err
	}
	var ms []match
	for _, rate := range hz {
		for _, li := range ls {
			for _, n := range ns {
				m, err := play(rate, links[li], n, *duration, *seed)
				if err != nil {
					return err
				}
				ms = append(ms, m)
			}
		}
	}
	page(stdout, args, ms, *duration, *seed)
	return nil
}

// page prints the Markdown page: what it is, the delay rule's figures at
// 20, 30 and 60 Hz (each match's largest client count), and every match.
func page(w io.Writer, args []string, ms []match, d time.Duration, seed uint64) {
	cmd := strings.TrimSpace("go run ./examples/arena/cmd/sweep " + strings.Join(args, " "))
	fmt.Fprintf(w, `# Tuning figures: tick rate × link

Produced by `+"`%s`"+`: every match is %v of
simulated play on virtual time (then the bots stand still until nothing in
flight would change the result), seed %d, the arena's defaults otherwise
(lag compensation on, window 750 ms, 1 s respawn, a shot every 15 ticks),
the players alone: no ball and no rockets (-ball off -rockets off), whose
ghosts the figures would mix with the players'.
The same command prints the same page on any machine. docs/tuning.md
explains the interpolation delay rule behind the figures.

`, cmd, d, seed)
	fmt.Fprintln(w, "## The interpolation delay at 20, 30 and 60 Hz")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The delay the clients adapted to (mean over the match and the clients), the part of it above the floor of two send intervals (the measured arrival spread), and how often remote players were shown past their newest state (extrapolated) or held at the 4-tick cap, per client per second.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| tick rate | link | clients | delay | intervals | above two intervals | extrapolated ticks per client per s | held ticks per client per s |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range ms {
		if m.rate != 20 && m.rate != 30 && m.rate != 60 {
			continue
		}
		interval := 1000 / float64(m.rate)
		fmt.Fprintf(w, "| %d Hz | %s | %d | %.0f ms | %.2f | %.0f ms | %.3f | %.3f |\n", m.rate, m.link.Name, m.clients,
			m.delayMS, m.delayMS/interval, m.delayMS-2*interval, m.extrapolated, m.held)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Every match")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Hits are the shots the server judged hits among all the bots fired (every one aimed at a player its client drew); refused lists the verdicts other than hit by reason.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| tick rate | link | clients | interpolation delay (mean) | hits / shots | hit rate | refused | mispredictions per client per s | extrapolated ticks per client per s | held ticks per client per s | max extrapolation | converged at tick |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
	for _, m := range ms {
		fmt.Fprintln(w, m.row())
	}
}

// row formats the match as a row of the full table.
func (m match) row() string {
	interval := 1000 / float64(m.rate)
	hitRate := "–"
	if m.shots > 0 {
		hitRate = fmt.Sprintf("%.0f %%", 100*float64(m.hits)/float64(m.shots))
	}
	conv := "no"
	if m.converged {
		conv = "yes"
	}
	return fmt.Sprintf("| %d Hz | %s | %d | %.0f ms (%.1f intervals) | %d / %d | %s | %s | %.2f | %.3f | %.3f | %.2f | %s, %d |",
		m.rate, m.link.Name, m.clients, m.delayMS, m.delayMS/interval, m.hits, m.shots, hitRate, m.refused,
		m.mispredicted, m.extrapolated, m.held, m.maxExt, conv, m.compared)
}

// play runs one match.
func play(rate int, l link, clients int, d time.Duration, seed uint64) (match, error) {
	cfg := game.DefaultConfig()
	cfg.TickRate, cfg.Clients, cfg.Duration, cfg.Seed = rate, clients, d, seed
	cfg.RTT, cfg.Jitter, cfg.Loss, cfg.Dup, cfg.Reorder = l.RTT, l.Jitter, l.Loss, l.Dup, l.Reorder
	cfg.Ball, cfg.Rockets = false, false
	gm, err := game.NewMatch(cfg)
	if err != nil {
		return match{}, fmt.Errorf("%d Hz, %s, %d clients: %w", rate, l.Name, clients, err)
	}
	r := gm.Run(nil)
	m := match{rate: rate, clients: clients, link: l, converged: r.Converged, compared: r.ComparedTick,
		hits: r.Server.Shots.Hits, shots: r.Server.Shots.Fired, refused: refusals(r.Server.Shots.Verdicts)}
	var mispredicted uint64
	for _, c := range r.Clients {
		m.delayMS += c.InterpDelayMeanMS
		m.extrapolated += c.ExtrapolatedTicks
		m.held += c.HeldTicks
		m.maxExt = max(m.maxExt, c.MaxExtrapolation)
		mispredicted += c.Mispredictions
	}
	k, secs := float64(len(r.Clients)), d.Seconds()
	m.delayMS /= k
	m.extrapolated /= k * secs
	m.held /= k * secs
	m.mispredicted = float64(mispredicted) / k / secs
	return m, nil
}

// refusals lists the verdicts other than hits, by reason in alphabetical
// order ("–" when none).
func refusals(v map[string]uint64) string {
	var out []string
	for _, reason := range slices.Sorted(maps.Keys(v)) {
		if reason != "hit" && v[reason] > 0 {
			out = append(out, fmt.Sprintf("%d %s", v[reason], reason))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, ", ")
}

// ints parses a comma-separated list of integers in lo..hi, naming the
// flag and the value on error.
func ints(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < lo || v > hi {
			return nil, fmt.Errorf("-%s %q: each value must be an integer in %d..%d", name, f, lo, hi)
		}
		out = append(out, v)
	}
	return out, nil
}
