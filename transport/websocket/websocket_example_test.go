package websocket_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/websocket"
)

// poll calls ready once per tick, as a game loop would, until it returns
// true; it gives up after ten seconds.
func poll(ready func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for !ready() {
		select {
		case <-tick.C:
		case <-deadline:
			return false
		}
	}
	return true
}

// One http.Server serves the game's page and its socket; a client dials the
// socket and the two ends exchange datagrams, each polled once per tick.
func Example() {
	listener := websocket.NewListener(websocket.ListenerOptions{})
	defer listener.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "<!doctype html><script src=game.js></script>")
	})
	mux.Handle("GET /ws", listener)
	server := httptest.NewServer(mux) // a game would run http.ListenAndServe
	defer server.Close()

	// In the browser, the same call runs under GOOS=js GOARCH=wasm.
	url := "ws" + strings.TrimPrefix(server.URL, "http") + "/ws"
	client, err := websocket.Dial(context.Background(), url, websocket.Options{})
	if err != nil {
		panic(err)
	}
	defer client.Close()

	var conn transport.Conn
	poll(func() bool {
		var ok bool
		conn, ok = listener.Accept()
		return ok
	})
	defer conn.Close()

	buf := make([]byte, transport.MaxDatagramSize)
	if err := client.Send([]byte("hello")); err != nil {
		panic(err)
	}
	poll(func() bool {
		n, ok := conn.Receive(buf)
		if ok {
			fmt.Printf("server received %q\n", buf[:n])
		}
		return ok
	})
	if err := conn.Send([]byte("welcome")); err != nil {
		panic(err)
	}
	poll(func() bool {
		n, ok := client.Receive(buf)
		if ok {
			fmt.Printf("client received %q\n", buf[:n])
		}
		return ok
	})
	fmt.Printf("accepted %d connection(s)\n", listener.Stats().Accepted)
	// Output:
	// server received "hello"
	// client received "welcome"
	// accepted 1 connection(s)
}
