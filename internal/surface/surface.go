// Package surface reads ghostwire's packages from source and writes what
// review needs to see of them: the listing of the public API (every
// exported declaration of every package outside internal/ and examples/,
// one line each, in docs/api.txt) and the package table of
// docs/architecture.md (exported names and imports per package). Both are
// checked by tests, so a change to the public surface or to an import
// arrow shows in the diff that makes it. It also checks the layering rule
// (see Layers).
package surface

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Package is one package of the module.
type Package struct {
	// Dir is the package's directory relative to the module root, in
	// slash form ("systems/lagcomp"); "." for the root.
	Dir string
	// Public is false under internal/.
	Public bool
	// API lists the exported declarations, one per line, sorted (see
	// declLines for the forms); Names counts the exported names.
	API   []string
	Names int
	// Imports lists the module's own packages the non-test files import,
	// by Dir, sorted.
	Imports []string
}

// Module is the packages of one Go module, sorted by Dir.
type Module struct {
	Path     string // the module path from go.mod
	Packages []Package
}

// Scan parses the Go files of the module rooted at root (examples/
// included, for the layering rule): every directory
// but hidden ones, testdata, nested modules (a directory with its own
// go.mod, such as examples/) and directories without non-test Go files.
func Scan(root string) (*Module, error) {
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	m := &Module{Path: mod}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel != "." {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		p, ok, err := parseDir(path, rel, mod)
		if err != nil || !ok {
			return err
		}
		m.Packages = append(m.Packages, p)
		return nil
	})
	slices.SortFunc(m.Packages, func(a, b Package) int { return strings.Compare(a.Dir, b.Dir) })
	return m, err
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("surface: %s has no module line", gomod)
}

// isInternal reports whether a package directory is under an internal/
// directory.
func isInternal(dir string) bool {
	return dir == "internal" || strings.HasPrefix(dir, "internal/") || strings.Contains(dir, "/internal/") || strings.HasSuffix(dir, "/internal")
}

// parseDir parses the non-test Go files of one directory; ok is false
// when it has none.
func parseDir(path, rel, mod string) (p Package, ok bool, err error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return p, false, err
	}
	p = Package{Dir: rel, Public: !isInternal(rel)}
	fset := token.NewFileSet()
	imports := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(path, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return p, false, err
		}
		if !buildable(f) {
			continue
		}
		ok = true
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if ip == mod {
				imports["."] = true
			} else if d, found := strings.CutPrefix(ip, mod+"/"); found {
				imports[d] = true
			}
		}
		if !p.Public {
			continue
		}
		for _, decl := range f.Decls {
			lines, names := declLines(fset, decl)
			p.API = append(p.API, lines...)
			p.Names += names
		}
	}
	for d := range imports {
		p.Imports = append(p.Imports, d)
	}
	slices.Sort(p.Imports)
	slices.Sort(p.API)
	return p, ok, nil
}

// buildable reports whether a file is part of a normal build: files for
// ignore, a browser tag or js/wasm only are left out (a js/wasm twin
// declares the same API as its native file).
func buildable(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if expr, ok := strings.CutPrefix(c.Text, "//go:build "); ok {
				return !strings.Contains(expr, "ignore") && !strings.Contains(expr, "browser") &&
					!(strings.Contains(expr, "js") && !strings.Contains(expr, "!js"))
			}
		}
	}
	return true
}

// declLines returns the listing lines of one declaration and how many
// exported names it declares. The forms are
//
//	func Name[T any](x int) error
//	method (*Recv) Name(x int) error
//	type Name struct
//	type Name struct, Field int
//	type Name interface, Method(x int) error
//	type Name int
//	const Name Type
//	var Name Type
//
// with parameter names and comments as written, bodies left out.
func declLines(fset *token.FileSet, decl ast.Decl) (lines []string, names int) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil, 0
		}
		sig := node(fset, d.Type)
		sig = strings.TrimPrefix(sig, "func")
		if d.Type.TypeParams != nil {
			// printer puts the type parameters after "func".
			return []string{"func " + d.Name.Name + sig}, 1
		}
		if d.Recv == nil {
			return []string{"func " + d.Name.Name + sig}, 1
		}
		recv := d.Recv.List[0].Type
		if !ast.IsExported(receiverName(recv)) {
			return nil, 0
		}
		return []string{"method (" + node(fset, recv) + ") " + d.Name.Name + sig}, 1
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				names++
				lines = append(lines, typeLines(fset, s)...)
			case *ast.ValueSpec:
				kind := "var"
				if d.Tok == token.CONST {
					kind = "const"
				}
				for _, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					names++
					line := kind + " " + n.Name
					if s.Type != nil {
						line += " " + node(fset, s.Type)
					}
					lines = append(lines, line)
				}
			}
		}
	}
	return lines, names
}

// typeLines lists a type: its head, and for a struct or an interface one
// line per exported field or method.
func typeLines(fset *token.FileSet, s *ast.TypeSpec) []string {
	head := "type " + s.Name.Name
	if s.TypeParams != nil {
		var params []string
		for _, f := range s.TypeParams.List {
			var names []string
			for _, n := range f.Names {
				names = append(names, n.Name)
			}
			params = append(params, strings.Join(names, ", ")+" "+node(fset, f.Type))
		}
		head += "[" + strings.Join(params, ", ") + "]"
	}
	if s.Assign.IsValid() {
		head += " ="
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		lines := []string{head + " struct"}
		for _, f := range t.Fields.List {
			typ := node(fset, f.Type)
			if len(f.Names) == 0 {
				if ast.IsExported(receiverName(f.Type)) {
					lines = append(lines, head+" struct, embedded "+typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					lines = append(lines, head+" struct, "+n.Name+" "+typ)
				}
			}
		}
		return lines
	case *ast.InterfaceType:
		lines := []string{head + " interface"}
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				lines = append(lines, head+" interface, embedded "+node(fset, m.Type))
				continue
			}
			for _, n := range m.Names {
				if n.IsExported() {
					lines = append(lines, head+" interface, "+n.Name+strings.TrimPrefix(node(fset, m.Type), "func"))
				}
			}
		}
		return lines
	}
	return []string{head + " " + node(fset, s.Type)}
}

// node prints an AST node on one line, comments left out.
func node(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, n); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// receiverName strips pointers, type parameters and package qualifiers
// from a type expression and returns its name.
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// Listing returns the public API listing: a header, then per public
// package of the framework (examples/ left out: they are programs built on
// it) its import path and its declarations, indented.
func Listing(m *Module) string {
	var b strings.Builder
	b.WriteString("# The public API of " + m.Path + ", one exported declaration a line.\n")
	b.WriteString("# Generated by `go run ./internal/surface/cmd/surface`; a test fails when it is stale.\n")
	for _, p := range m.Packages {
		if !p.Public || len(p.API) == 0 || p.Dir == Examples || strings.HasPrefix(p.Dir, Examples+"/") {
			continue
		}
		fmt.Fprintf(&b, "\npkg %s (%d names)\n", importPath(m.Path, p.Dir), p.Names)
		for _, l := range p.API {
			b.WriteString("\t" + l + "\n")
		}
	}
	return b.String()
}

func importPath(mod, dir string) string {
	if dir == "." {
		return mod
	}
	return mod + "/" + dir
}
