// Command jsclient is the browser side of TestWasmClient: built for
// GOOS=js GOARCH=wasm and run under Node, it dials the URL in its first
// argument, sends datagrams, and prints what the server echoes.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/websocket"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := websocket.Dial(ctx, url, websocket.Options{})
	if err != nil {
		return err
	}
	for _, size := range []int{1, 100, transport.MaxDatagramSize} {
		p := make([]byte, size)
		p[0] = byte(size)
		if err := conn.Send(p); err != nil {
			return err
		}
	}
	fmt.Println("oversized:", conn.Send(make([]byte, transport.MaxDatagramSize+1)))
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	buf := make([]byte, transport.MaxDatagramSize)
	for received := 0; received < 3; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if n, ok := conn.Receive(buf); ok {
			fmt.Printf("echo of %d bytes, first byte %d\n", n, buf[0])
			received++
		}
	}
	if err := conn.Close(); err != nil {
		return err
	}
	fmt.Printf("stats: %+v\n", conn.Stats())
	return nil
}
