package websocket

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// TestEndToEnd serves a page and the socket from one http.Server, as a game
// does, and exchanges datagrams both ways with a natively dialled client.
func TestEndToEnd(t *testing.T) {
	ln := NewListener(ListenerOptions{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<!doctype html><title>game</title>")
	})
	mux.Handle("GET /ws", ln)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer func() { require.NoError(t, ln.Close()) }()

	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, err)
	assert.Contains(t, string(page), "<title>game</title>", "the page is served beside the socket")

	// Dial's context bounds the handshake only: cancelling it afterwards
	// leaves the connection up.
	ctx, cancel := context.WithCancel(context.Background())
	client, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", Options{})
	cancel()
	require.NoError(t, err)
	server := accept(t, ln)

	buf := make([]byte, transport.MaxDatagramSize)
	for i := range 50 {
		require.NoError(t, client.Send([]byte{'c', byte(i)}))
		require.NoError(t, server.Send([]byte{'s', byte(i), byte(i)}))
	}
	var up, down [][]byte
	settle(t, func() bool {
		if n, ok := server.Receive(buf); ok {
			up = append(up, append([]byte(nil), buf[:n]...))
		}
		if n, ok := client.Receive(buf); ok {
			down = append(down, append([]byte(nil), buf[:n]...))
		}
		return len(up) == 50 && len(down) == 50
	})
	for i := range 50 {
		assert.Equal(t, []byte{'c', byte(i)}, up[i], "in order: WebSocket runs over TCP")
		assert.Equal(t, []byte{'s', byte(i), byte(i)}, down[i])
	}

	require.NoError(t, client.Close())
	settle(t, func() bool { return server.Send([]byte{1}) == transport.ErrClosed })
	require.NoError(t, server.Close())
	assert.Equal(t, ListenerStats{Accepted: 1}, ln.Stats())
}

func TestListenerMaxPendingRefusesAndCounts(t *testing.T) {
	ln, url := serve(t, ListenerOptions{MaxPending: 2})
	first := dial(t, url, Options{})
	// The server queues a connection just after the client's handshake
	// returns, so wait for it before the next dial to know the order.
	settle(t, func() bool { return ln.Stats().Pending == 1 })
	dial(t, url, Options{})
	settle(t, func() bool { return ln.Stats().Pending == 2 })

	_, err := Dial(context.Background(), url, Options{})
	require.Error(t, err, "a third handshake while two wait")
	assert.Contains(t, err.Error(), "503")
	assert.Equal(t, ListenerStats{Pending: 2, Refused: 1}, ln.Stats())

	server := accept(t, ln)
	t.Cleanup(func() { _ = server.Close() })
	require.NoError(t, server.Send([]byte("first")), "accepted in dial order")
	buf := make([]byte, 16)
	var n int
	settle(t, func() bool {
		var ok bool
		n, ok = first.Receive(buf)
		return ok
	})
	assert.Equal(t, "first", string(buf[:n]))

	dial(t, url, Options{}) // Accept made room
	settle(t, func() bool { return ln.Stats().Pending == 2 })
	assert.Equal(t, ListenerStats{Accepted: 1, Pending: 2, Refused: 1}, ln.Stats())
}

func TestListenerCountsFailedHandshakes(t *testing.T) {
	ln, url := serve(t, ListenerOptions{})
	resp, err := http.Get("http" + strings.TrimPrefix(url, "ws"))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusUpgradeRequired, resp.StatusCode, "a plain GET is no handshake")

	req, err := http.NewRequest(http.MethodGet, "http"+strings.TrimPrefix(url, "ws"), nil)
	require.NoError(t, err)
	for k, v := range map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": "https://elsewhere.example",
	} {
		req.Header.Set(k, v)
	}
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "another site's page may not connect")

	assert.Equal(t, ListenerStats{Failed: 2}, ln.Stats())
	_, ok := ln.Accept()
	assert.False(t, ok)
}

func TestListenerOriginPatterns(t *testing.T) {
	ln, url := serve(t, ListenerOptions{OriginPatterns: []string{"play.example"}})
	req, err := http.NewRequest(http.MethodGet, "http"+strings.TrimPrefix(url, "ws"), nil)
	require.NoError(t, err)
	for k, v := range map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": "https://play.example",
	} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
	server := accept(t, ln)
	require.NoError(t, server.Close())
}

func TestListenerClose(t *testing.T) {
	ln, url := serve(t, ListenerOptions{})
	unaccepted := dial(t, url, Options{})
	settle(t, func() bool { return ln.Stats().Pending == 1 })

	require.NoError(t, ln.Close())
	require.ErrorIs(t, ln.Close(), transport.ErrClosed)
	_, ok := ln.Accept()
	assert.False(t, ok)
	settle(t, func() bool { return unaccepted.Send([]byte{1}) == transport.ErrClosed })

	_, err := Dial(context.Background(), url, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	assert.Equal(t, ListenerStats{}, ln.Stats(), "a closed Listener refuses without counting a cap")
}

// TestServerTimeoutsDoNotEndConnections: a game's http.Server sensibly sets
// read and write timeouts for its pages; the sockets it upgrades must
// outlive them (net/http clears a connection's deadlines when the WebSocket
// library hijacks it).
func TestServerTimeoutsDoNotEndConnections(t *testing.T) {
	const timeout = 50 * time.Millisecond
	ln := NewListener(ListenerOptions{})
	srv := httptest.NewUnstartedServer(ln)
	srv.Config.ReadTimeout = timeout
	srv.Config.WriteTimeout = timeout
	srv.Start()
	t.Cleanup(func() {
		_ = ln.Close()
		srv.Close()
	})
	client := dial(t, "ws"+strings.TrimPrefix(srv.URL, "http"), Options{})
	server := accept(t, ln)
	t.Cleanup(func() { _ = server.Close() })

	// Keep datagrams flowing both ways until well past both timeouts.
	start := time.Now()
	buf := make([]byte, 16)
	var up, down int
	settle(t, func() bool {
		require.NoError(t, client.Send([]byte("ping")))
		require.NoError(t, server.Send([]byte("pong")))
		for _, c := range []struct {
			conn  transport.Conn
			count *int
		}{{server, &up}, {client, &down}} {
			if _, ok := c.conn.Receive(buf); ok {
				*c.count++
			}
		}
		return time.Since(start) > 6*timeout
	})
	require.NoError(t, client.Send([]byte("late")))
	require.NoError(t, server.Send([]byte("late")))
	assert.Equal(t, "late", string(receiveLast(t, server, "late")))
	assert.Equal(t, "late", string(receiveLast(t, client, "late")))
	assert.Positive(t, up)
	assert.Positive(t, down)
}

// receiveLast receives on c until it returns want.
func receiveLast(t *testing.T, c transport.Conn, want string) []byte {
	t.Helper()
	buf := make([]byte, transport.MaxDatagramSize)
	var n int
	settle(t, func() bool {
		var ok bool
		n, ok = c.Receive(buf)
		return ok && string(buf[:n]) == want
	})
	return buf[:n]
}
