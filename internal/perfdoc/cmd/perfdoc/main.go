// Command perfdoc runs the benchmarks of docs/performance-figures.md and
// rewrites that file from their output:
//
//	go run ./internal/perfdoc/cmd/perfdoc [-out FILE] [-raw FILE] [-in FILE]
//
// Run it from the module root. It takes about three minutes on two cores
// and echoes the benchmark output to stderr as it comes. -raw also saves
// that output; -in renders from a saved output instead of running.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/internal/perfdoc"
)

func main() {
	out := flag.String("out", "docs/performance-figures.md", "the figures file to rewrite")
	raw := flag.String("raw", "", "also save the benchmark output here")
	in := flag.String("in", "", "render from this saved benchmark output instead of running")
	flag.Parse()
	if err := run(*out, *raw, *in); err != nil {
		fmt.Fprintln(os.Stderr, "perfdoc:", err)
		os.Exit(1)
	}
}

func run(out, raw, in string) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run from the module root (no go.mod here): %w", err)
	}
	start := time.Now().UTC()
	meta := perfdoc.Meta{Date: start.Format("2006-01-02 15:04 UTC"), Commit: commit(), Go: runtime.Version()}
	var output []byte
	if in != "" {
		b, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		output, meta.Took = b, "(rendered from "+in+")"
	} else {
		var all bytes.Buffer
		for _, s := range perfdoc.Suites {
			fmt.Fprintf(os.Stderr, "go %s\n", strings.Join(s.Args(), " "))
			cmd := exec.Command("go", s.Args()...)
			cmd.Stdout, cmd.Stderr = io.MultiWriter(&all, os.Stderr), os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("go %s: %w", strings.Join(s.Args(), " "), err)
			}
		}
		output, meta.Took = all.Bytes(), time.Since(start).Round(time.Second).String()
		if raw != "" {
			if err := os.WriteFile(raw, output, 0o644); err != nil {
				return err
			}
		}
	}
	r, err := perfdoc.Parse(bytes.NewReader(output))
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := perfdoc.Render(&page, r, meta); err != nil {
		return err
	}
	return os.WriteFile(out, page.Bytes(), 0o644)
}

// commit names the commit measured, "-dirty" when the tree has changes,
// or "unknown" outside git.
func commit() string {
	head, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(head))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "-dirty"
	}
	return c
}
