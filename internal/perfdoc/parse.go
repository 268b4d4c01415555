// Package perfdoc runs the benchmarks behind docs/performance-figures.md
// and renders that file from their `go test -bench` output, so the
// figures in the docs are never copied by hand: the command
// `go run ./internal/perfdoc/cmd/perfdoc` runs [Suites] and writes the
// file. It imports nothing of ghostwire.
package perfdoc

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Result is one benchmark line of `go test -bench` output.
type Result struct {
	// Pkg is the import path of the benchmark's package (the "pkg:" line
	// before it).
	Pkg string
	// Name is the benchmark's name without the -GOMAXPROCS suffix.
	Name string
	// Procs is that suffix (1 when absent).
	Procs int
	// N is the iteration count.
	N int64
	// Metrics maps each unit (ns/op, allocs/op, a b.ReportMetric unit) to
	// its value.
	Metrics map[string]float64
}

// Run is a parsed `go test -bench` output, possibly of several packages.
type Run struct {
	// CPU is the first "cpu:" line's model, GoOS and GoArch the first
	// "goos:" and "goarch:" lines'.
	CPU, GoOS, GoArch string
	// Results are the benchmark lines in the order they came.
	Results []Result
}

// Parse reads `go test -bench` output. Lines other than benchmark results
// and the goos, goarch, cpu and pkg headers are skipped (PASS, ok, logs).
// It errors naming the line for a benchmark line whose iteration count or
// metrics do not parse, or a benchmark that appears twice (a -count above
// 1: the figures take one run).
func Parse(r io.Reader) (*Run, error) {
	run := &Run{}
	pkg := ""
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(text, "pkg: "):
			pkg = strings.TrimPrefix(text, "pkg: ")
		case strings.HasPrefix(text, "cpu: ") && run.CPU == "":
			run.CPU = strings.TrimSpace(strings.TrimPrefix(text, "cpu: "))
		case strings.HasPrefix(text, "goos: ") && run.GoOS == "":
			run.GoOS = strings.TrimPrefix(text, "goos: ")
		case strings.HasPrefix(text, "goarch: ") && run.GoArch == "":
			run.GoArch = strings.TrimPrefix(text, "goarch: ")
		case strings.HasPrefix(text, "Benchmark"):
			res, ok, err := parseResult(text)
			if err != nil {
				return nil, fmt.Errorf("perfdoc: line %d %q: %w", line, text, err)
			}
			if !ok {
				continue // a benchmark's name alone: its logs follow, or it failed
			}
			res.Pkg = pkg
			if seen[res.Name] {
				return nil, fmt.Errorf("perfdoc: line %d: %s appears twice; run each benchmark once (-count 1)", line, res.Name)
			}
			seen[res.Name] = true
			run.Results = append(run.Results, res)
		}
	}
	return run, sc.Err()
}

// parseResult parses "BenchmarkX-2  100  12.5 ns/op  3 allocs/op ...";
// ok is false for a line holding only a name.
func parseResult(text string) (Result, bool, error) {
	f := strings.Fields(text)
	if len(f) < 2 {
		return Result{}, false, nil
	}
	res := Result{Name: f[0], Procs: 1, Metrics: map[string]float64{}}
	if i := strings.LastIndexByte(f[0], '-'); i > 0 {
		if p, err := strconv.Atoi(f[0][i+1:]); err == nil {
			res.Name, res.Procs = f[0][:i], p
		}
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Result{}, false, fmt.Errorf("iteration count %q: %w", f[1], err)
	}
	res.N = n
	if len(f)%2 != 0 {
		return Result{}, false, fmt.Errorf("%d fields after the count: want value-unit pairs", len(f)-2)
	}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false, fmt.Errorf("value %q of %s: %w", f[i], f[i+1], err)
		}
		res.Metrics[f[i+1]] = v
	}
	return res, true, nil
}

// Find returns the result named name (without the -GOMAXPROCS suffix).
func (r *Run) Find(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Name == name {
			return res, true
		}
	}
	return Result{}, false
}
