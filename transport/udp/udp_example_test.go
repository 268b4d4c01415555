package udp_test

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"time"

	"github.com/ghostwire/ghostwire/transport/udp"
)

// The whole flow on loopback: a server listens, a backend makes a token
// naming the server's public address, a client connects with it, and a
// payload goes each way.
func Example() {
	var key [udp.KeySize]byte // in production: a secret shared by backend and servers
	copy(key[:], "a 32-byte key from configuration")
	const protocolID = 0x6768_6f73_7477_6972

	server, err := udp.Listen(udp.Options{BindAddress: "127.0.0.1:0", PrivateKey: key, ProtocolID: protocolID})
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()

	// Backend: authenticate the player, then make their token.
	now := time.Now()
	token, _, err := udp.MakeConnectToken(udp.TokenParams{
		PrivateKey:      key,
		ProtocolID:      protocolID,
		ClientID:        42,
		ServerAddresses: []netip.AddrPort{server.PublicAddress()},
		Create:          now,
		Expire:          now.Add(30 * time.Second),
		TimeoutSeconds:  10,
	})
	if err != nil {
		log.Fatal(err)
	}

	// Client: connect with the token.
	client, err := udp.Dial(token, udp.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.WaitConnected(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("client:", client.State())

	// Both sides poll once per tick of a 60 Hz game loop.
	tick := time.NewTicker(time.Second / 60)
	defer tick.Stop()

	// Server: accept the connection.
	var conn *udp.ServerConn
	for ; conn == nil && ctx.Err() == nil; <-tick.C {
		if c, ok := server.Accept(); ok {
			conn = c.(*udp.ServerConn)
		}
	}
	fmt.Println("server: client", conn.ClientID())

	// One payload each way, resent each tick until it arrives: UDP may lose it.
	buf := make([]byte, 1200)
	var up, down string
	for ; (up == "" || down == "") && ctx.Err() == nil; <-tick.C {
		if up == "" {
			_ = client.Send([]byte("input"))
		}
		if down == "" {
			_ = conn.Send([]byte("snapshot"))
		}
		if n, ok := conn.Receive(buf); ok {
			up = string(buf[:n])
		}
		if n, ok := client.Receive(buf); ok {
			down = string(buf[:n])
		}
	}
	fmt.Println("server got:", up)
	fmt.Println("client got:", down)
	// Output:
	// client: connected
	// server: client 42
	// server got: input
	// client got: snapshot
}
