// Command sweep plays the arena over tick rates, links and client counts
// on virtual time and prints a Markdown table of what each match measured:
// interpolation delay, hit rate, mispredictions per client per second,
// extrapolation and convergence. docs/tuning-figures.md is its output.
//
//	go run ./examples/arena/cmd/sweep -clients 3,12
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

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rates := fs.String("tick-rates", "20,30,60,128,240", "tick rates, comma-separated (10..240 each)")
	clients := fs.String("clients", "3", "client counts, comma-separated (1..64 each)")
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
	fmt.Fprintln(stdout, "| tick rate | link | clients | interpolation delay (mean) | hits / shots | hit rate | mispredictions per client per s | extrapolated ticks per client per s | held ticks per client per s | max extrapolation | refused | converged at tick |")
	fmt.Fprintln(stdout, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
	for _, rate := range hz {
		for _, li := range ls {
			for _, n := range ns {
				row, err := play(rate, links[li], n, *duration, *seed)
				if err != nil {
					return err
				}
				fmt.Fprintln(stdout, row)
			}
		}
	}
	return nil
}

// play runs one match and formats its row.
func play(rate int, l link, clients int, d time.Duration, seed uint64) (string, error) {
	cfg := game.DefaultConfig()
	cfg.TickRate, cfg.Clients, cfg.Duration, cfg.Seed = rate, clients, d, seed
	cfg.RTT, cfg.Jitter, cfg.Loss, cfg.Dup, cfg.Reorder = l.RTT, l.Jitter, l.Loss, l.Dup, l.Reorder
	m, err := game.NewMatch(cfg)
	if err != nil {
		return "", fmt.Errorf("%d Hz, %s, %d clients: %w", rate, l.Name, clients, err)
	}
	r := m.Run(nil)
	var delay, extrap, held, maxExt float64
	var mispredicted uint64
	for _, c := range r.Clients {
		delay += c.InterpDelayMeanMS
		extrap += c.ExtrapolatedTicks
		held += c.HeldTicks
		maxExt = max(maxExt, c.MaxExtrapolation)
		mispredicted += c.Mispredictions
	}
	k, secs := float64(len(r.Clients)), d.Seconds()
	delay /= k
	interval := 1000 / float64(rate)
	s := r.Server.Shots
	hitRate := "–"
	if s.Fired > 0 {
		hitRate = fmt.Sprintf("%.0f %%", 100*float64(s.Hits)/float64(s.Fired))
	}
	conv := "no"
	if r.Converged {
		conv = "yes"
	}
	return fmt.Sprintf("| %d Hz | %s | %d | %.0f ms (%.1f intervals) | %d / %d | %s | %.2f | %.3f | %.3f | %.2f | %s | %s, %d |",
		rate, l.Name, clients, delay, delay/interval, s.Hits, s.Fired, hitRate,
		float64(mispredicted)/k/secs, extrap/k/secs, held/k/secs, maxExt, refusals(s.Verdicts), conv, r.ComparedTick), nil
}

// refusals lists the verdicts other than hits and misses, by reason in
// alphabetical order ("–" when none).
func refusals(v map[string]uint64) string {
	var out []string
	for _, reason := range slices.Sorted(maps.Keys(v)) {
		if reason != "hit" && reason != "miss" && v[reason] > 0 {
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
