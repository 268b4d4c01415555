package game

import (
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// Endpoints is the arena's game on endpoints no harness owns: a server, or
// bot clients, each built by the caller over a network of its choice and on
// a clock of its choice (the arena's -serve and -connect processes run on
// real time over UDP). It installs exactly the systems a Match installs, so
// both play the same game. It is not safe for concurrent use: call it from
// the goroutine that updates the endpoints.
type Endpoints struct {
	m *Match
}

// NewEndpoints validates cfg (see Config.Validate) and builds the schema.
// clock is what the bots and the presentation read: the bots stand still
// from cfg.Duration on it. cfg.Clients only caps how many players AddPlayer
// may add; the link settings (RTT, Loss, ...) are not used, since the
// caller's network is real.
func NewEndpoints(cfg Config, clock gw.TimeSource) (*Endpoints, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	schema, err := NewSchema()
	if err != nil {
		return nil, err
	}
	return &Endpoints{m: &Match{Config: cfg, Schema: schema, stopAt: cfg.Duration, clock: clock}}, nil
}

// Game returns the arena both ends run: the schema, the tick rate, the
// physics, the server's respawns, the player's spawn on connect and its
// removal on disconnect.
func (e *Endpoints) Game() *systems.Game { return e.m.game() }

// ServerOptions returns the server's options. The caller may set the
// fields the game leaves zero (MaxClients, Timeout, Logger).
func (e *Endpoints) ServerOptions() systems.ServerOptions { return e.m.serverOptions() }

// SetupServer adds lag compensation, the shots and the crates to a server
// made with Game and ServerOptions. Call it once.
func (e *Endpoints) SetupServer(s *systems.Server) error { return e.m.setupServer(s) }

// AddPlayer adds a bot player and returns its index and the options of the
// client that plays it: rollback policy, interpolation, input delay, the bot
// as input source and the hooks that measure corrections. It returns -1
// once cfg.Clients players were added.
func (e *Endpoints) AddPlayer() (int, systems.ClientOptions) {
	m := e.m
	if len(m.Players) >= m.Config.Clients {
		return -1, systems.ClientOptions{}
	}
	i := len(m.Players)
	m.Players = append(m.Players, &PlayerStats{})
	o := systems.ClientOptions{RollbackAlways: m.Config.Rollback == RollbackAlways,
		InterpolationDelay: m.Config.InterpDelay, InputDelay: m.Config.InputDelay}
	m.playerOptions(i, &o)
	return i, o
}

// SetupClient adds the measurements and the smoother to the client of
// player i, made with Game and the options AddPlayer returned. It panics when i is not a player's
// index.
func (e *Endpoints) SetupClient(i int, c *systems.Client) error { return e.m.setupClient(i, c) }

// ReportConfig echoes the settings in the report's form.
func (e *Endpoints) ReportConfig() ReportConfig { return e.m.reportConfig() }

// ServerReport reads the server's counters and shot verdicts.
func (e *Endpoints) ServerReport(s *systems.Server) ServerReport { return e.m.serverReport(s) }

// ClientReport reads player i's client counters and measurements, with
// byte rates over elapsed. Converged is false and FinalError 0: only a
// caller that sees the server's world can fill them (see FinalError). It
// panics when i is not a player's index.
func (e *Endpoints) ClientReport(i int, c *systems.Client, elapsed time.Duration) ClientReport {
	return e.m.clientReport(i, c, elapsed)
}
