// Command surface prints the exported names of ghostwire's public packages
// per package and in total: go run ./internal/surface/cmd/surface [-v].
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ghostwire/ghostwire/internal/surface"
)

func main() {
	verbose := flag.Bool("v", false, "list every name")
	flag.Parse()
	pkgs, err := surface.Count(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "surface:", err)
		os.Exit(1)
	}
	total := 0
	for _, p := range pkgs {
		total += len(p.Names)
		fmt.Printf("%4d  %s\n", len(p.Names), p.Dir)
		if *verbose {
			fmt.Printf("      %s\n", strings.Join(p.Names, " "))
		}
	}
	fmt.Printf("%4d  total\n", total)
}
