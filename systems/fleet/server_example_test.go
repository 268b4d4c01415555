package fleet_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/agones/agonestest"
	"github.com/ghostwire/ghostwire/systems/fleet"
	"github.com/ghostwire/ghostwire/systems/rooms"
	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// A dedicated server's life on Agones, against the fake sidecar: Ready,
// a room counted, the public address learnt for the tokens, and a drain
// when the process is told to stop (main cancels the context on SIGTERM),
// ending with Shutdown.
func ExampleServer() {
	sidecar := agonestest.New(nil, "203.0.113.10", 7654, map[string]int64{"rooms": 16})
	web := httptest.NewServer(sidecar)
	defer web.Close()
	sdk, err := agones.New(agones.Options{BaseURL: web.URL}) // in a pod: agones.Options{}
	if err != nil {
		panic(err)
	}
	// In a pod: bind the container port, public := fleet.AgonesAddress(ctx, sdk, "default").
	ln, err := udp.Listen(udp.Options{BindAddress: "127.0.0.1:0", PrivateKey: key, ProtocolID: protocolID})
	if err != nil {
		panic(err)
	}
	schema, err := testgame.NewSchema()
	if err != nil {
		panic(err)
	}
	srv, err := fleet.New(fleet.Options{
		Rooms: rooms.Options{Listener: ln, NewRoom: func(string) (*systems.Game, systems.ServerOptions, error) {
			return schema.Game(), systems.ServerOptions{ReconnectGrace: 30 * time.Second}, nil
		}},
		Tokens: &tokens.Options{Key: key, ProtocolID: protocolID, Secret: secret},
		Agones: sdk,
		Port:   "default",
	})
	if err != nil {
		panic(err)
	}
	// Serve srv.Tokens() to the matchmaker and srv.Metrics() to the
	// operator (metrics.Serve); here, the room is opened by hand.
	if err := srv.Rooms().Open("arena-1"); err != nil {
		panic(err)
	}
	ctx, sigterm := context.WithCancel(context.Background()) // main: signal.NotifyContext(ctx, syscall.SIGTERM)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for gs := sidecar.GameServer(); gs.Status.State != "Ready" || gs.Status.Counters["rooms"].Count != 1 ||
			ln.PublicAddress() == ln.Addr(); gs = sidecar.GameServer() {
			<-tick.C
		}
		fmt.Println("ready, tokens name", srv.PublicAddress())
		sigterm()
	}()
	report, err := srv.Run(ctx)
	if err != nil {
		panic(err)
	}
	gs := sidecar.GameServer()
	fmt.Printf("drained (%s): %d room finished, %d ended; the game server is %s, rooms %d of %d\n", report.Reason,
		report.Finished, report.Ended, gs.Status.State, gs.Status.Counters["rooms"].Count, gs.Status.Counters["rooms"].Capacity)
	// Output:
	// ready, tokens name 203.0.113.10:7654
	// drained (signal): 1 room finished, 0 ended; the game server is Shutdown, rooms 0 of 1
}
