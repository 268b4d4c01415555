// Package surface counts the exported names of ghostwire's public
// packages: the types, functions, methods, constants and variables a game
// can use. Everything under internal/ and examples/ is left out, and so are
// the transports under transport/ (transport's own package counts).
package surface

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Package is one public package and its exported names.
type Package struct {
	Dir   string
	Names []string
}

// Count walks the module rooted at root and returns its public packages,
// sorted by directory, each with its exported names sorted.
func Count(root string) ([]Package, error) {
	var pkgs []Package
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if skip(rel, d.Name()) {
			return filepath.SkipDir
		}
		names, err := exported(path)
		if err != nil {
			return err
		}
		if len(names) > 0 {
			pkgs = append(pkgs, Package{Dir: rel, Names: names})
		}
		return nil
	})
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Dir < pkgs[j].Dir })
	return pkgs, err
}

// skip reports whether a directory holds no public API: hidden and test
// data folders, internal/, examples/, and the transports below transport/.
func skip(rel, name string) bool {
	if rel == "." {
		return false
	}
	if strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" || rel == "examples" {
		return true
	}
	return strings.HasPrefix(rel, "transport/")
}

// exported parses the non-test Go files of dir and lists their exported
// top-level names and exported methods (as Type.Method).
func exported(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			names = append(names, declNames(decl)...)
		}
	}
	sort.Strings(names)
	return names, nil
}

func declNames(decl ast.Decl) []string {
	var names []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		recv := receiverName(d.Recv.List[0].Type)
		if ast.IsExported(recv) {
			names = append(names, recv+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					names = append(names, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// receiverName strips pointers and type parameters from a receiver type.
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
