package packet_test

import (
	"fmt"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// A client and a server exchange messages over a memory link with 50 ms of
// latency each way. Each tick both ends read what arrived and flush. The
// server learns through OnAck which of its snapshot packets arrived: the
// baseline a delta-compressed snapshot would build on.
func ExampleConn() {
	clock := &testClock{}
	link := transport.LinkConfig{Latency: 50 * time.Millisecond}
	rawClient, rawServer, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{Up: link, Down: link})
	if err != nil {
		panic(err)
	}
	server, err := packet.NewConn(rawServer, clock, packet.Options{
		OnAck: func(s packet.Seq) { fmt.Printf("%v server: packet %d acked\n", clock.Now(), s) },
	})
	if err != nil {
		panic(err)
	}
	client, err := packet.NewConn(rawClient, clock, packet.Options{})
	if err != nil {
		panic(err)
	}

	seq, _ := server.SendUnreliable([]byte("snapshot 1"))
	fmt.Printf("snapshot 1 rides packet %d\n", seq)
	_ = server.SendReliable([]byte("match starts"))
	for range 11 {
		for {
			m, ok := client.Receive()
			if !ok {
				break
			}
			fmt.Printf("%v client: %s %q\n", clock.Now(), m.Channel, m.Data)
		}
		for {
			if _, ok := server.Receive(); !ok {
				break
			}
		}
		_ = client.Flush()
		_ = server.Flush()
		clock.Advance(10 * time.Millisecond)
	}
	fmt.Printf("server RTT %v\n", server.RTT())
	// Output:
	// snapshot 1 rides packet 0
	// 50ms client: reliable "match starts"
	// 50ms client: unreliable "snapshot 1"
	// 100ms server: packet 0 acked
	// server RTT 100ms
}

// Unreliable messages are never fragmented; a message too large for one
// packet is refused with its size and the limit.
func ExampleConn_SendUnreliable() {
	clock := &testClock{}
	raw, _, _ := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{})
	c, _ := packet.NewConn(raw, clock, packet.Options{})
	_, err := c.SendUnreliable(make([]byte, 1500))
	fmt.Println(err)
	// Output:
	// packet: unreliable message of 1500 bytes exceeds the limit of 1188 bytes
}
