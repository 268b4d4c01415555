package web

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// clientPackage is the import path of the page's WebAssembly client.
const clientPackage = "github.com/ghostwire/ghostwire/examples/arena/web/client"

// goTool returns the go command: the one on PATH (go run and go test put
// their own first), else the one of the Go installation this program was
// built with.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no go command on PATH nor at %s: the web client is built with the local Go toolchain", p)
	}
	return p, nil
}

// sourceDir is the directory of this package's source when it is on this
// machine (go run, go test), or "" (a binary built with -trimpath or moved
// elsewhere builds the client by import path from the working directory).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(file), "client")); err != nil {
		return ""
	}
	return filepath.Dir(file)
}

// clientBuild is how New builds the page's client: buildClient, or in this
// package's tests one build shared by every test.
var clientBuild = buildClient

// buildClient compiles the page's client for GOOS=js GOARCH=wasm into dir
// and returns the wasm binary and the Go installation's wasm_exec.js.
func buildClient(ctx context.Context, dir string) (wasm, execJS []byte, err error) {
	goCmd, err := goTool()
	if err != nil {
		return nil, nil, err
	}
	out := filepath.Join(dir, "client.wasm")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", out, clientPackage)
	if src := sourceDir(); src != "" {
		cmd = exec.CommandContext(ctx, goCmd, "build", "-o", out, ".")
		cmd.Dir = filepath.Join(src, "client")
	}
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("building the web client (%s): %w\n%s", strings.Join(cmd.Args, " "), err, msg)
	}
	root, err := exec.CommandContext(ctx, goCmd, "env", "GOROOT").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	execJS, err = os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return nil, nil, fmt.Errorf("wasm_exec.js of the Go installation: %w", err)
	}
	wasm, err = os.ReadFile(out)
	if err != nil {
		return nil, nil, err
	}
	return wasm, execJS, nil
}
