package testgame

import (
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// Player is one client of a test match: its link and its input source (nil
// sends neutral input).
type Player struct {
	Link  transport.Conditions
	Input *systems.InputSource
	// Wrap, if set, wraps the client's connection (see
	// harness.ClientSpec.Wrap).
	Wrap func(transport.Conn) transport.Conn
}

// Game returns the test game for both ends: the server spawns a car per
// connection, server and clients predict with DriveSystem and ConeSystem,
// and each client honks at its own handbrake pulls (HornEffect), which
// the server counts and tells every client (Horns).
func (s *Schema) Game() *systems.Game {
	return &systems.Game{
		Schema:     s.Schema,
		TickRate:   TickRate,
		OnConnect:  s.Spawn,
		OnStart:    startHorns,
		Prediction: []func(*gw.World) gw.System{func(*gw.World) gw.System { return DriveSystem() }, s.ConeSystem},
		Effects:    []func(*gw.World) gw.System{HornEffect},
	}
}

// Options returns harness options for a match of the test game under seed,
// one client connecting per player.
func (s *Schema) Options(seed uint64, players ...Player) harness.Options {
	opts := harness.Options{Seed: seed, Game: s.Game()}
	for _, p := range players {
		opts.Clients = append(opts.Clients, harness.ClientSpec{Link: p.Link, Wrap: p.Wrap,
			Options: systems.ClientOptions{Input: p.Input}})
	}
	return opts
}

// Link returns symmetric conditions: half the round trip each way, with
// jitter and loss (a fraction, 0..1) on both.
func Link(rtt, jitter time.Duration, loss float64) transport.Conditions {
	l := transport.LinkConfig{Latency: rtt / 2, Jitter: jitter, Loss: loss}
	return transport.Conditions{Up: l, Down: l}
}
