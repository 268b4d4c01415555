package transport_test

import (
	"fmt"
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// A pair of Conns on a virtual clock: the datagram is in flight for the
// link's latency and becomes receivable exactly when the clock reaches it.
func ExampleMemoryNetwork_Pair() {
	clock := &testClock{}
	network := transport.NewMemoryNetwork(clock, 1)
	client, server, err := network.Pair(transport.Conditions{
		Up: transport.LinkConfig{Latency: 30 * time.Millisecond},
	})
	if err != nil {
		panic(err)
	}

	if err := client.Send([]byte("hello")); err != nil {
		panic(err)
	}
	buf := make([]byte, transport.MaxDatagramSize)
	for range 4 {
		n, ok := server.Receive(buf)
		fmt.Printf("%v: %v %q\n", clock.Now(), ok, buf[:n])
		clock.Advance(10 * time.Millisecond)
	}
	fmt.Printf("received %d datagram(s)\n", server.Stats().Received)
	// Output:
	// 0s: false ""
	// 10ms: false ""
	// 20ms: false ""
	// 30ms: true "hello"
	// received 1 datagram(s)
}

// A server listens at an address, clients dial it with their own link
// conditions, and the server accepts them in dial order without blocking.
func ExampleMemoryNetwork_Listen() {
	clock := &testClock{}
	network := transport.NewMemoryNetwork(clock, 1)
	listener, err := network.Listen("game")
	if err != nil {
		panic(err)
	}
	alice, _ := network.Dial("game", transport.Conditions{})
	if err := alice.Send([]byte("alice")); err != nil {
		panic(err)
	}

	buf := make([]byte, transport.MaxDatagramSize)
	for {
		conn, ok := listener.Accept()
		if !ok {
			break
		}
		n, _ := conn.Receive(buf)
		fmt.Printf("accepted %s\n", buf[:n])
	}

	_, err = network.Dial("lobby", transport.Conditions{})
	fmt.Println(err)
	// Output:
	// accepted alice
	// transport: no listener at address: "lobby"
}

// Pair and Dial refuse link conditions out of range, naming the first
// field and its value.
func ExampleLinkConfig() {
	network := transport.NewMemoryNetwork(&testClock{}, 1)
	_, _, err := network.Pair(transport.Conditions{Up: transport.LinkConfig{Latency: 50 * time.Millisecond, Loss: 20}})
	fmt.Println(err)
	// Output:
	// transport: invalid Conditions.Up.Loss = 20, want a value in [0, 1]
}
