//go:build !js

package webtransport_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/webtransport"
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

// A server with a development certificate serves WebTransport on a UDP
// port; a client that pins the certificate by hash (as the page does with
// serverCertificateHashes) dials it, and the two ends exchange datagrams,
// each polled once per tick.
func Example() {
	cert, err := webtransport.NewDevCertificate(24*time.Hour, "127.0.0.1")
	if err != nil {
		panic(err)
	}
	hash, _ := webtransport.CertificateHash(cert) // the page receives this
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer udp.Close() // after the Listener, which says goodbye through it
	listener, err := webtransport.NewListener(webtransport.ListenerOptions{Certificate: cert})
	if err != nil {
		panic(err)
	}
	defer listener.Close()
	go listener.Serve(udp, nil) // returns nil once the Listener is closed

	// In the browser, the same call runs under GOOS=js GOARCH=wasm.
	url := "https://" + udp.LocalAddr().String() + "/game"
	client, err := webtransport.Dial(context.Background(), url,
		webtransport.DialOptions{CertificateHashes: [][32]byte{hash}})
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
	fmt.Printf("accepted %d session(s)\n", listener.Stats().Accepted)
	// Output:
	// server received "hello"
	// client received "welcome"
	// accepted 1 session(s)
}
