// Command surface writes docs/api.txt (the listing of ghostwire's public
// API) and the package table of docs/architecture.md from the source, and
// checks the layering rule. Run it from the module root after changing an
// exported name or an import:
//
//	go run ./internal/surface/cmd/surface
//
// With -check it writes nothing and exits 1 when either file is stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ghostwire/ghostwire/internal/surface"
)

func main() {
	check := flag.Bool("check", false, "report stale files instead of writing them")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "surface:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	m, err := surface.Scan(".")
	if err != nil {
		return err
	}
	if err := surface.CheckLayers(m); err != nil {
		return err
	}
	arch, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		return err
	}
	doc, err := surface.Splice(string(arch), surface.Table(m))
	if err != nil {
		return err
	}
	files := map[string]string{"docs/api.txt": surface.Listing(m), "docs/architecture.md": doc}
	for path, want := range files {
		have, _ := os.ReadFile(path)
		if string(have) == want {
			continue
		}
		if check {
			return fmt.Errorf("%s is stale: run go run ./internal/surface/cmd/surface", path)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", path)
	}
	return nil
}
