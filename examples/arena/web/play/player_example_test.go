package play_test

import (
	"fmt"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
)

// A person's client against the arena's server over a 100 ms link, on
// virtual time: hold a direction, let go, and read the view.
func ExamplePlayer() {
	clock := &gw.VirtualTime{}
	net := transport.NewMemoryNetwork(clock, 1)
	ln, _ := net.Listen("arena")
	schema, _ := game.NewSchema()
	server, _ := systems.NewServer(clock, ln, game.NewGame(schema, play.TickRate, schema.SpawnPlayer, nil), systems.ServerOptions{})

	link := transport.LinkConfig{Latency: 50 * time.Millisecond}
	conn, _ := net.Dial("arena", transport.Conditions{Up: link, Down: link})
	p, err := play.New(clock, conn, play.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	run := func(d time.Duration) {
		for end := clock.Now() + d; clock.Now() < end; {
			clock.Advance(4 * time.Millisecond)
			server.Update()
			p.Step()
		}
	}
	run(time.Second)
	p.SetControls(play.Controls{MoveY: 1, AimY: 10}) // W, pointing up
	run(500 * time.Millisecond)
	v := p.View()
	fmt.Printf("%s, running: predicted y %.2f, confirmed y %.2f\n", v.State, v.Own.Y, v.Confirmed.Y)
	p.SetControls(play.Controls{AimY: 10})
	run(time.Second)
	v = p.View()
	fmt.Printf("stopped: predicted y %.2f, confirmed y %.2f\n", v.Own.Y, v.Confirmed.Y)
	// Output:
	// connected, running: predicted y 2.64, confirmed y 1.82
	// stopped: predicted y 3.04, confirmed y 3.04
}
