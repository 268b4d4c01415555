package game_test

import (
	"fmt"
	"log"
	"log/slog"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
)

// The arena's game on endpoints the caller builds: here a server and two
// bot clients on a memory network and virtual time; the arena's -serve and
// -connect processes do the same on real time over UDP.
func ExampleEndpoints() {
	clock := &gw.VirtualTime{}
	cfg := game.DefaultConfig()
	cfg.Clients, cfg.Duration = 2, 3*time.Second
	g, err := game.NewEndpoints(cfg, clock)
	if err != nil {
		log.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)

	network := transport.NewMemoryNetwork(clock, 1)
	l, err := network.Listen("arena")
	if err != nil {
		log.Fatal(err)
	}
	so := g.ServerOptions()
	so.Logger = quiet
	server, err := systems.NewServer(clock, l, g.Game(), so)
	if err != nil {
		log.Fatal(err)
	}
	if err := g.SetupServer(server); err != nil {
		log.Fatal(err)
	}

	var clients []*systems.Client
	for i, o := g.AddPlayer(); i >= 0; i, o = g.AddPlayer() {
		conn, err := network.Dial("arena", transport.Conditions{})
		if err != nil {
			log.Fatal(err)
		}
		o.Logger = quiet
		c, err := systems.NewClient(clock, conn, g.Game(), o)
		if err != nil {
			log.Fatal(err)
		}
		if err := g.SetupClient(i, c); err != nil {
			log.Fatal(err)
		}
		clients = append(clients, c)
	}

	// The caller's loop: update every endpoint, run the clients' frames.
	for end := cfg.Duration + cfg.Settle(); clock.Now() < end; {
		clock.Advance(time.Millisecond)
		server.Update()
		for _, c := range clients {
			c.Update()
			if clock.Now()%(16*time.Millisecond) == 0 {
				c.Frame()
			}
		}
	}
	for i, c := range clients {
		_, same := game.FinalError(c, server)
		r := g.ClientReport(i, c, clock.Now())
		fmt.Printf("client %d: played %v, bit-identical to the server: %v\n", r.ID, r.MovingInputs > 0, same)
	}
	fmt.Println("connections:", server.Stats().Connections)
	// Output:
	// client 1: played true, bit-identical to the server: true
	// client 2: played true, bit-identical to the server: true
	// connections: 2
}
