package systems

import (
	"errors"
	"fmt"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// Game describes a game once, for both ends: what replicates (the schema:
// components, ghost types, the input type and its rules), the tick rate,
// the systems of each stage and the rule that spawns a connection's
// player. [NewServer], [NewClient] and harness.New take it and install its
// systems, so no system is listed twice and a server and its clients can
// never run different prediction code. What is not the same for every
// endpoint (a client's input source, its interpolation delay, a server's
// budget) stays in ServerOptions and ClientOptions; what a game needs
// beyond this (lag compensation, a smoother, its own metrics) it adds to
// Server.Schedule and Client.Schedule after creating the endpoint.
//
// The systems are given as constructors, each called once per world: a
// system that keeps arche filters or maps is bound to the first world it
// queries, and a server and its clients in one process (a test, the
// harness) are several worlds.
type Game struct {
	// Schema is the replication schema. Required.
	Schema *netsync.Schema
	// TickRate is the simulation rate of both ends, in ticks per second;
	// 60 when zero. Allowed: 1..1000. A client at another rate is refused.
	TickRate int
	// OnConnect creates the player of a new connection on the server and
	// returns its entity and ghost type; the server makes it a ghost owned
	// by conn (the client's Client.Player). An error refuses the
	// connection (the client sees RejectSpawn; the error stays in the
	// server's log). Required by NewServer.
	OnConnect func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error)
	// OnStart, if set, is called once by NewServer after the systems are
	// installed, to build the world the match starts with: server-owned
	// ghosts such as a ball or the map's crates (s.Ghosts().Spawn). An
	// error fails NewServer.
	OnStart func(s *Server) error
	// OnDisconnect, if set, is called on the server when a connection
	// ends, with the entities it owned (a slice valid during the call
	// only); the game removes them (or keeps them). Nil destroys them.
	OnDisconnect func(w *gw.World, conn components.ConnID, owned []ecs.Entity)
	// OnReconnect, if set, is called on the server when connection conn
	// took back the place of connection old, which had ended
	// (ServerOptions.ReconnectGrace): owned are old's entities, now conn's
	// (a slice valid during the call only), their ghosts' Owner already
	// conn. OnConnect is not called for conn, nor OnDisconnect for old:
	// the game moves what it keys by connection (a scoreboard, a team)
	// from old to conn here.
	OnReconnect func(w *gw.World, conn, old components.ConnID, owned []ecs.Entity)
	// Prediction makes the prediction systems, run in order in
	// gw.StagePrediction: on the server for every ghost, on each client for
	// the ghosts it predicts, again on every replay after a misprediction.
	// They read each player's input from its ghost and must be
	// deterministic (docs/troubleshooting.md).
	Prediction []func(w *gw.World) gw.System
	// Effects makes the client's side effects (sound, particles, hit
	// markers), run in gw.StagePrediction after the prediction systems the
	// first time a tick is predicted, never during a replay.
	Effects []func(w *gw.World) gw.System
	// Simulation makes the server-only rules (damage, scoring, respawn),
	// run in gw.StageSimulation after the prediction: never predicted,
	// never replayed. What they change in a replicated component reaches
	// the clients as a correction.
	Simulation []func(w *gw.World) gw.System
	// Presentation makes the client's per-frame systems (drawing, audio
	// mixing), run in gw.StagePresentation after the remote ghosts were
	// interpolated.
	Presentation []func(w *gw.World) gw.System
}

// check returns an error naming the first field of g that is wrong, and
// applies the defaults.
func (g *Game) check() (tickRate int, err error) {
	if g == nil {
		return 0, errors.New("systems: no Game given")
	}
	if g.Schema == nil {
		return 0, errors.New("systems: Game.Schema is required")
	}
	tickRate = g.TickRate
	if tickRate == 0 {
		tickRate = 60
	}
	if tickRate < 1 || tickRate > 1000 {
		return 0, fmt.Errorf("systems: Game.TickRate %d outside 1..1000", tickRate)
	}
	for name, list := range map[string][]func(*gw.World) gw.System{
		"Prediction": g.Prediction, "Effects": g.Effects, "Simulation": g.Simulation, "Presentation": g.Presentation,
	} {
		for i, f := range list {
			if f == nil {
				return 0, fmt.Errorf("systems: Game.%s[%d] is nil", name, i)
			}
		}
	}
	return tickRate, nil
}

// install adds the game's systems for one endpoint's world to its
// schedule: the prediction on both ends, then the server's simulation or
// the client's effects and presentation. It errors naming the constructor
// that returned nil.
func (g *Game) install(s *gw.Schedule, w *gw.World, server bool) error {
	add := func(name string, list []func(*gw.World) gw.System, stage gw.Stage, sideEffect bool) error {
		for i, f := range list {
			sys := f(w)
			if sys == nil {
				return fmt.Errorf("systems: Game.%s[%d] made a nil system", name, i)
			}
			if sideEffect {
				s.AddSideEffect(stage, sys)
			} else {
				s.Add(stage, sys)
			}
		}
		return nil
	}
	if err := add("Prediction", g.Prediction, gw.StagePrediction, false); err != nil {
		return err
	}
	if server {
		return add("Simulation", g.Simulation, gw.StageSimulation, false)
	}
	if err := add("Effects", g.Effects, gw.StagePrediction, true); err != nil {
		return err
	}
	return add("Presentation", g.Presentation, gw.StagePresentation, false)
}
