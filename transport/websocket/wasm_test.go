//go:build !js

package websocket

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/longtest"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/internal/conntest"
)

// TestWasmClient builds testdata/jsclient for GOOS=js GOARCH=wasm and runs
// it under Node, whose WebSocket stands in for a browser's, against a
// native server that echoes every datagram: Dial, Send, Receive and Close
// through the WebSocket library's browser implementation. Long tier: the
// wasm build takes a minute with a cold build cache.
func TestWasmClient(t *testing.T) {
	longtest.Skip(t)
	const slow = 2 * time.Minute // building and starting wasm on a loaded machine
	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	node, err := exec.LookPath("node")
	require.NoError(t, err, "Node runs the wasm client")
	goroot, err := exec.Command(goTool, "env", "GOROOT").Output()
	require.NoError(t, err)
	wasm := filepath.Join(t.TempDir(), "jsclient.wasm")
	build := exec.Command(goTool, "build", "-o", wasm, "./testdata/jsclient")
	build.Env = append(build.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	ln, url := serve(t, ListenerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()
	// Node 20 has its WebSocket behind this flag.
	run := exec.CommandContext(ctx, node, "--experimental-websocket",
		filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec_node.js"), wasm, url)
	type result struct {
		out []byte
		err error
	}
	ran := make(chan result, 1)
	go func() {
		out, err := run.CombinedOutput()
		ran <- result{out, err}
	}()

	var server transport.Conn
	conntest.Poll(t, slow, func() bool {
		var ok bool
		server, ok = ln.Accept()
		return ok
	})
	defer server.Close()
	buf := make([]byte, transport.MaxDatagramSize)
	echoed := 0
	settle(t, func() bool {
		if n, ok := server.Receive(buf); ok {
			require.NoError(t, server.Send(buf[:n]))
			echoed++
		}
		return echoed == 3
	})
	res := <-ran
	require.NoError(t, res.err, "%s", res.out)
	assert.Equal(t, ""+
		"oversized: transport: datagram of 1201 bytes exceeds MaxDatagramSize 1200\n"+
		"echo of 1 bytes, first byte 1\n"+
		"echo of 100 bytes, first byte 100\n"+
		"echo of 1200 bytes, first byte 176\n"+
		"stats: {Sent:3 SentBytes:1301 Received:3 ReceivedBytes:1301 Lost:0 Duplicated:0 Reordered:0 Dropped:0 Truncated:0}\n",
		string(res.out))
	settle(t, func() bool { return server.Send([]byte{1}) == transport.ErrClosed })
}
