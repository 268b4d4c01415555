package surface

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A Layer is a group of packages (by Dir) at one level of the module.
type Layer struct {
	Name     string
	Packages []string
}

// Layers is ghostwire's layering from the bottom up. The rule: a package
// imports only packages listed before it, its own layer included, so
// imports point down. The foundation (ecs, components, transport) is
// public and knows nothing of replication; internal/ sits on it, below the
// public packages that use it, and never imports them (no hooks calling
// back up); the test helpers and tools at the top may import anything
// below them. A package missing from this list fails the layering test
// until it is placed.
var Layers = []Layer{
	{"foundation", []string{"ecs", "components", "transport", "transport/internal/ring", "transport/packet", "transport/udp", "transport/udp/tokens", "transport/websocket",
		"transport/webtransport"}},
	{"internal", []string{"internal/bitstream", "internal/raycast", "internal/fixedclock", "internal/correction",
		"internal/codec", "internal/protocol", "internal/control", "internal/ghostreg"}},
	{"public", []string{"netsync", "ghosts", "systems/lagcomp", "systems", "systems/harness", "systems/harness/serverbench",
		"systems/replay", "systems/agones", "systems/agones/agonestest", "systems/rooms", "systems/metrics", "systems/fleet"}},
	{"test helpers and tools", []string{"internal/fuzzing", "internal/longtest", "transport/internal/conntest", "internal/wiretest", "internal/testgame",
		"internal/perfdoc", "internal/perfdoc/cmd/perfdoc", "internal/surface", "internal/surface/cmd/surface", "scripts/netcodepeer"}},
}

// Examples is the directory of the example programs: every package under
// it sits above all of Layers and is built from the public API alone (see
// CheckExamples).
const Examples = "examples"

// rank returns the position of dir in Layers and its layer's name; ok is
// false when dir is not listed.
func rank(dir string) (pos int, layer string, ok bool) {
	if dir == Examples || strings.HasPrefix(dir, Examples+"/") {
		n := 0
		for _, l := range Layers {
			n += len(l.Packages)
		}
		return n, "examples", true
	}
	for _, l := range Layers {
		if i := slices.Index(l.Packages, dir); i >= 0 {
			return pos + i, l.Name, true
		}
		pos += len(l.Packages)
	}
	return 0, "", false
}

// CheckLayers returns an error listing every package of m missing from
// Layers and every import that points up or sideways to a package listed
// later; nil when the rule holds. Test files are not checked: a test may
// use any package (external test packages cannot form cycles).
func CheckLayers(m *Module) error {
	var bad []string
	for _, p := range m.Packages {
		pr, _, ok := rank(p.Dir)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is not placed in surface.Layers", p.Dir))
			continue
		}
		for _, im := range p.Imports {
			if ir, _, ok := rank(im); ok && ir >= pr && !sameLayerExample(p.Dir, im) {
				bad = append(bad, fmt.Sprintf("%s imports %s, which is not below it", p.Dir, im))
			}
		}
	}
	for _, l := range Layers {
		for _, d := range l.Packages {
			if !slices.ContainsFunc(m.Packages, func(p Package) bool { return p.Dir == d }) {
				bad = append(bad, fmt.Sprintf("surface.Layers lists %s, which has no Go files", d))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("surface: the layering rule does not hold:\n\t%s", strings.Join(bad, "\n\t"))
	}
	return nil
}

// sameLayerExample reports whether both packages are examples: an example
// program imports its own packages.
func sameLayerExample(a, b string) bool {
	_, la, _ := rank(a)
	_, lb, _ := rank(b)
	return la == "examples" && lb == "examples"
}

// CheckExamples returns an error naming every Go file under root's
// examples/ directory, test files included, that imports one of the
// module's internal packages: the examples are users, so whatever they
// need is public. It parses the imports only.
func CheckExamples(root, module string) error {
	var bad []string
	err := filepath.WalkDir(filepath.Join(root, Examples), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if d, ok := strings.CutPrefix(ip, module+"/"); ok && isInternal(d) {
				rel, _ := filepath.Rel(root, path)
				bad = append(bad, fmt.Sprintf("%s imports %s", filepath.ToSlash(rel), ip))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("surface: examples use internal packages; make what they need public:\n\t%s", strings.Join(bad, "\n\t"))
	}
	return nil
}

// Table returns the package table of docs/architecture.md: per package
// from the bottom up, its layer, exported names (public packages) and the
// module's packages it imports.
func Table(m *Module) string {
	var b strings.Builder
	b.WriteString("| layer | package | exported names | imports from ghostwire |\n")
	b.WriteString("| --- | --- | ---: | --- |\n")
	total := 0
	for _, l := range Layers {
		for _, d := range l.Packages {
			i := slices.IndexFunc(m.Packages, func(p Package) bool { return p.Dir == d })
			if i < 0 {
				continue
			}
			p := m.Packages[i]
			names := "internal"
			if p.Public {
				names = fmt.Sprint(p.Names)
				total += p.Names
			}
			imports := "nothing"
			if len(p.Imports) > 0 {
				imports = strings.Join(p.Imports, ", ")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", l.Name, d, names, imports)
		}
	}
	fmt.Fprintf(&b, "\n%d exported names in all (the whole listing is docs/api.txt).\n", total)
	return b.String()
}

// The markers around the generated part of docs/architecture.md.
const (
	BeginMarker = "<!-- BEGIN GENERATED by go run ./internal/surface/cmd/surface: do not edit -->\n"
	EndMarker   = "<!-- END GENERATED -->\n"
)

// Splice returns doc with the text between the markers replaced by table,
// or an error when the markers are missing.
func Splice(doc, table string) (string, error) {
	i := strings.Index(doc, BeginMarker)
	j := strings.Index(doc, EndMarker)
	if i < 0 || j < i {
		return "", fmt.Errorf("surface: the document has no %q ... %q block", strings.TrimSpace(BeginMarker), strings.TrimSpace(EndMarker))
	}
	return doc[:i+len(BeginMarker)] + table + doc[j:], nil
}
