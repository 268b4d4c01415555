// Command pong plays a match of pong between bots over a simulated
// 100 ms link, on virtual time, and prints the score each end sees:
//
//	go run ./examples/pong [-players 2] [-duration 60s] [-seed 1]
//
// It is the smallest complete ghostwire game: game.go is the game,
// netcode.go describes it once for both ends, and this file runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

func main() {
	players := flag.Int("players", 2, "bots playing, 2..4")
	duration := flag.Duration("duration", 60*time.Second, "virtual time played")
	seed := flag.Uint64("seed", 1, "the links' random seed")
	flag.Parse()
	if *players < 2 || *players > 4 {
		fmt.Fprintf(os.Stderr, "pong: -players %d: allowed range is 2..4\n", *players)
		os.Exit(2)
	}
	m, err := Play(*players, *duration, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pong:", err)
		os.Exit(1)
	}
	fmt.Print(m)
}

// Match is what a match ended with: the server's score and bounces, each
// client's prediction of the score at the server's last tick (clients run
// ahead of the server), mispredictions and bounce sounds.
type Match struct {
	Server         Score
	Bounces        uint64
	Clients        []Score
	Mispredictions []uint64
	Sounds         []Sounds
}

// Sounds counts a client's bounce sounds: played at once on a prediction,
// cancelled (the server had no such bounce) and played late (one the
// client did not predict). Played − Cancelled + Late is the bounces heard.
type Sounds struct{ Played, Cancelled, Late int }

// play plays a bounce's sound: here, counts it.
func (s *Sounds) play(ev systems.Event[Bounce]) {
	if ev.Late {
		s.Late++
	} else {
		s.Played++
	}
}

// cancel stops a bounce's sound the server did not have.
func (s *Sounds) cancel(systems.Event[Bounce]) { s.Cancelled++ }

func (m Match) String() string {
	s := fmt.Sprintf("server: left %d, right %d, %d bounces\n", m.Server.Left, m.Server.Right, m.Bounces)
	for i, c := range m.Clients {
		n := m.Sounds[i]
		s += fmt.Sprintf("client %d: left %d, right %d (%d mispredictions), %d bounces heard (%d predicted, %d cancelled, %d late)\n",
			i, c.Left, c.Right, m.Mispredictions[i], n.Played-n.Cancelled+n.Late, n.Played, n.Cancelled, n.Late)
	}
	return s
}

// Play runs a match of n bots for d of virtual time over 100 ms links
// with 1 % loss and reads the score on each end.
func Play(n int, d time.Duration, seed uint64) (Match, error) {
	game, err := NewGame()
	if err != nil {
		return Match{}, err
	}
	l := transport.LinkConfig{Latency: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.01}
	opts := harness.Options{Seed: seed, Game: game}
	for range n {
		opts.Clients = append(opts.Clients, harness.ClientSpec{Link: transport.Conditions{Up: l, Down: l},
			Options: systems.ClientOptions{Input: systems.InputFunc(bot)}})
	}
	h, err := harness.New(opts)
	if err != nil {
		return Match{}, err
	}
	m := Match{Sounds: make([]Sounds, n)}
	for i, c := range h.Clients { // each client's bounce sounds
		if err := systems.HandleEvent(c, systems.EventHandler[Bounce]{Play: m.Sounds[i].play, Cancel: m.Sounds[i].cancel}); err != nil {
			return Match{}, err
		}
	}
	h.Run(d)
	tick := h.Server.World().Tick()
	m.Server, m.Bounces = score(h.Server.World()), h.Server.Stats().EventsRaised
	for _, c := range h.Clients {
		q := generic.NewFilter1[Score]().Query(c.World().Arche())
		for q.Next() {
			predicted, _ := gw.ValueAt[Score](c.World().History(), tick, q.Entity())
			m.Clients = append(m.Clients, predicted)
		}
		m.Mispredictions = append(m.Mispredictions, c.Stats().Mispredictions)
	}
	return m, nil
}

// bot follows the ball with its paddle, aiming off by up to a paddle's
// height every few seconds, so points are scored.
func bot(w *gw.World, tick gw.Tick) Stick {
	var ball float32
	var own Paddle
	bq := generic.NewFilter1[Ball]().Query(w.Arche())
	for bq.Next() {
		ball = bq.Get().Y
	}
	pq := generic.NewFilter1[Paddle]().With(generic.T[components.InputHeader]()).Query(w.Arche())
	for pq.Next() {
		own = *pq.Get()
	}
	off := float32((int(tick/240)+int(own.Side)+3)%3-1) * 2.5
	return Stick{Dir: max(-0.6, min(0.6, ball+off-own.Y))}
}

// score reads the score on the ball of a world.
func score(w *gw.World) Score {
	var s Score
	q := generic.NewFilter1[Score]().Query(w.Arche())
	for q.Next() {
		s = *q.Get()
	}
	return s
}
