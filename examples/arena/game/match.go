package game

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
	"github.com/ghostwire/ghostwire/systems/replay"
	"github.com/ghostwire/ghostwire/transport"
)

// RollbackPolicy says when the clients roll back on a new snapshot.
type RollbackPolicy uint8

const (
	// RollbackOnMismatch rolls back only when the prediction at the
	// snapshot's tick differs from the server's state. The default.
	RollbackOnMismatch RollbackPolicy = iota
	// RollbackAlways rolls back on every new snapshot
	// (systems.ClientOptions.RollbackAlways).
	RollbackAlways
)

// String returns "mismatch" or "always".
func (p RollbackPolicy) String() string {
	switch p {
	case RollbackOnMismatch:
		return "mismatch"
	case RollbackAlways:
		return "always"
	}
	return fmt.Sprintf("RollbackPolicy(%d)", uint8(p))
}

// Config is one match's settings; the arena's flags map onto it one to
// one. DefaultConfig gives the documented defaults.
type Config struct {
	Clients  int
	Duration time.Duration
	TickRate int
	RTT      time.Duration
	Jitter   time.Duration
	Loss     float64 // percent
	Dup      float64 // percent
	Reorder  float64 // percent
	Seed     uint64
	Rollback RollbackPolicy
	// LagComp judges shots at the shooter's view tick; off judges them
	// against the present.
	LagComp bool
	// MaxRewind is the lag-compensation window. The default, 750 ms,
	// covers the oldest view an honest client claims at 20 Hz on a 200 ms
	// / ±40 ms / 8 % loss link (under 600 ms in the sweep,
	// docs/tuning-figures.md), below Valve's 1 s.
	MaxRewind time.Duration
	// InterpDelay fixes the interpolation delay; 0 adapts it.
	InterpDelay time.Duration
	// InputDelay delays every client's input by a fixed or an adaptive
	// number of ticks (systems.InputDelay); none when zero.
	InputDelay systems.InputDelay
	// Cheaters is how many bots (the last ones) cheat, and Cheat how:
	// CheatBacktrack, CheatOrigin, CheatFireRate, CheatDeadshot, or
	// CheatAll to deal those out in turn.
	Cheaters int
	Cheat    string
	// BotAim is how the honest and cheating bots aim: AimPerfect (or "")
	// or AimHuman (see Aim).
	BotAim string
	// Crates is how many server-owned crates rest in the arena (see
	// Crate): 0..MaxCrates.
	Crates int
	// ViewRadius is how far from its player a client is sent ghosts
	// (systems.ServerOptions.Relevant): players and crates further away
	// are despawned there until they come close. 0 sends everything;
	// allowed 0..MaxViewRadius.
	ViewRadius float32
	// Ball puts the ball in the arena (SpawnBall): the clients predict it
	// while their player is near it (BallSwitch). Rockets makes the
	// honest bots fire rockets now and then (Bot.Rockets); with both
	// off, the bots play exactly the match they played before either
	// existed.
	Ball, Rockets bool
	// Chat makes every bot say a line of chat now and then (Chatter),
	// which the server relays to every client. Off by default: the
	// lines travel in the packets of the match, and with them off a
	// match is the one it was before chat existed, figures and all.
	Chat bool

	// Client, if set, adjusts one client's spec before it connects (tests
	// use it for misbehaving clients).
	Client func(i int, spec *harness.ClientSpec) `json:"-"`
	// Record, if set, receives the server's recording of the match
	// (package replay); Match.Recorder is then its recorder, which the
	// caller closes once the match is over.
	Record io.Writer `json:"-"`
	// SyncTest, when not zero, runs the determinism check of that depth on
	// the server world (see systems.ServerOptions.SyncTest): for tests, it
	// costs SyncTest replays per tick. Clients get theirs through Client.
	SyncTest int

	// healthPredicted declares Health predicted like the other components
	// instead of server-owned, to measure what that costs.
	healthPredicted bool
}

// DefaultConfig returns the defaults of the arena's command line.
func DefaultConfig() Config {
	return Config{Clients: 4, Duration: 30 * time.Second, TickRate: 60, RTT: 100 * time.Millisecond,
		Jitter: 10 * time.Millisecond, Loss: 1, Seed: 1, LagComp: true, MaxRewind: 750 * time.Millisecond, BotAim: AimPerfect,
		Ball: true, Rockets: true}
}

// Settle is how long the bots stand still at the end of a match: at least
// one second plus twice the RTT (and the jitter), so every correction has
// arrived before convergence is checked.
func (c Config) Settle() time.Duration {
	return time.Second + 2*(c.RTT+2*c.Jitter) + 250*time.Millisecond
}

// Validate returns an error naming the flag, its value and the allowed
// range for the first bad setting.
func (c Config) Validate() error {
	bad := func(flag string, v any, allowed string) error {
		return fmt.Errorf("-%s %v: allowed range is %s", flag, v, allowed)
	}
	switch {
	case c.Clients < 1 || c.Clients > 64:
		return bad("clients", c.Clients, "1..64")
	case c.Duration < time.Second || c.Duration > 2*time.Hour:
		return bad("duration", c.Duration, "1s..2h")
	case c.TickRate < 10 || c.TickRate > 240:
		return bad("tick-rate", c.TickRate, "10..240")
	case c.RTT < 0 || c.RTT > 2*time.Second:
		return bad("rtt", c.RTT, "0..2s")
	case c.Jitter < 0 || c.Jitter > c.RTT/2+50*time.Millisecond || c.Jitter > time.Second:
		return bad("jitter", c.Jitter, fmt.Sprintf("0..%v (RTT/2 + 50ms)", min(c.RTT/2+50*time.Millisecond, time.Second)))
	case !(c.Loss >= 0 && c.Loss <= 50):
		return bad("loss", c.Loss, "0..50 (percent)")
	case !(c.Dup >= 0 && c.Dup <= 50):
		return bad("dup", c.Dup, "0..50 (percent)")
	case !(c.Reorder >= 0 && c.Reorder <= 50):
		return bad("reorder", c.Reorder, "0..50 (percent)")
	case c.Rollback > RollbackAlways:
		return bad("rollback", c.Rollback, "mismatch|always")
	case c.MaxRewind < time.Second/time.Duration(max(c.TickRate, 1)) || c.MaxRewind > 2*time.Second:
		return bad("max-rewind", c.MaxRewind, "one tick..2s")
	case c.InterpDelay < 0 || c.InterpDelay > time.Second:
		return bad("interp-delay", c.InterpDelay, "0..1s (0 = adaptive)")
	case !c.InputDelay.Adaptive && (c.InputDelay.Ticks < 0 || c.InputDelay.Ticks > systems.MaxInputDelay):
		return bad("input-delay", c.InputDelay.Ticks, fmt.Sprintf("0..%d (ticks) or auto", systems.MaxInputDelay))
	case c.Cheaters < 0 || c.Cheaters > c.Clients:
		return bad("cheaters", c.Cheaters, fmt.Sprintf("0..%d (the clients)", c.Clients))
	case !validCheat(c.Cheat):
		return bad("cheat", c.Cheat, "backtrack|origin|firerate|deadshot|all")
	case !validAim(c.BotAim):
		return bad("bot-aim", c.BotAim, "perfect|human")
	case c.Crates < 0 || c.Crates > MaxCrates:
		return bad("crates", c.Crates, fmt.Sprintf("0..%d", MaxCrates))
	case !(c.ViewRadius >= 0 && c.ViewRadius <= MaxViewRadius): // NaN too
		return bad("view-radius", c.ViewRadius, fmt.Sprintf("0..%v (0 = everything)", MaxViewRadius))
	}
	return nil
}

// Link returns the conditions of every client's link: half the RTT each
// way, the jitter, loss, duplication and reordering in both directions.
func (c Config) Link() transport.Conditions {
	l := transport.LinkConfig{Latency: c.RTT / 2, Jitter: c.Jitter, Loss: c.Loss / 100, Duplicate: c.Dup / 100, Reorder: c.Reorder / 100}
	return transport.Conditions{Up: l, Down: l}
}

// Match is a running arena match: a server and bot clients in a harness.
type Match struct {
	Config  Config
	Schema  *Schema
	Harness *harness.Harness
	Players []*PlayerStats
	Shots   *ShotSystem
	// Armoury is the server's side of the rockets (magazines, splash).
	Armoury *Armoury
	// Recorder records the server's match when Config.Record is set.
	Recorder *replay.Recorder
	// OnJudge, if set before the server is set up, sees every shot the
	// lag compensator judges (lagcomp.Options.OnJudge): a replay's
	// kill-cam captures the scenes there.
	OnJudge func(c *lagcomp.Compensator, s lagcomp.Shot, v lagcomp.Verdict)
	stopAt  time.Duration
	clock   gw.TimeSource // what the bots and the presentation read
	// delaySum adds up each client's interpolation delay once per
	// simulated second, over seconds.
	delaySum []time.Duration
	seconds  int
	quiet    [2][]quietState // the server's players at serverQuiet's last call, and scratch
	// viewers maps each connection to its player on the server, for
	// Config.ViewRadius; posID is Position's ID in the server's world.
	viewers map[components.ConnID]ecs.Entity
	posID   ecs.ID
	// tickWall holds the server's wall time per tick while Run plays
	// (Wall.ServerTickUS); nil otherwise, so other drivers record nothing.
	tickWall []time.Duration
}

// quietState is what serverQuiet compares from one tick to the next.
type quietState struct {
	e ecs.Entity
	p Position
	v Velocity
}

// PlayerStats is what the arena measures on one client beyond the
// framework's counters.
type PlayerStats struct {
	Bot *Bot
	// Cheat is the cheat the player's bot plays (CheatNone: honest).
	Cheat string
	// Footsteps counts the footstep side effect: first-time predicted
	// ticks on which the player's own input moves it.
	Footsteps uint64
	// MaxCorrection is the largest jump of the own player's position that
	// a rollback caused, in arena units (respawn teleports excluded).
	MaxCorrection float64
	// MoveLatency is the most ticks between sampling the start of a move
	// and the first predicted tick that applied it: the input delay as
	// the player feels it (known for bots only); Presses counts the
	// starts. sampledAt holds the client's tick at each sample, by the
	// input's tick.
	MoveLatency int
	Presses     uint64
	sampledAt   [256]gw.Tick
	// ShotsFired counts the client's shot effect (muzzle flash): a side
	// effect of first-time predicted ticks whose input pulls the trigger.
	ShotsFired uint64
	// Confirmations counts the verdicts of this client's shots the server
	// confirmed to it (systems.ClientOptions.OnConfirm), ConfirmedHits
	// the hits among them (the hit markers); ConfirmsOutOfOrder those
	// whose shot was not after the previous confirmed one (never, if each
	// arrives once and in order).
	Confirmations, ConfirmedHits, ConfirmsOutOfOrder uint64
	lastConfirmed                                    gw.Tick
	// Rockets counts the client's launches: first-time predicted ticks
	// whose input fires a rocket from a ready launcher, the rocket's
	// sound (a side effect, once per rocket however often the tick is
	// replayed).
	Rockets uint64
	// MaxSpawnError is the largest distance, in arena units, between
	// where the client predicted one of its rockets and where the server
	// had it, at the tick of the snapshot whose ghost took the predicted
	// rocket over: read from the client's history before the correction
	// wrote the server's state there and after (0 when the snapshot
	// agreed and nothing was corrected). handedOver holds the rockets
	// already taken over, handing those read before the correction, at
	// the snapshot's tick handTick; client is the client measured.
	MaxSpawnError float64
	handedOver    map[ecs.Entity]bool
	handing       map[ecs.Entity]Position
	handTick      gw.Tick
	client        *systems.Client
	// Kills are the kill feed's messages this client received, in the
	// order received (compared with the server's by CheckKillFeed);
	// ChatHeard counts the lines of chat the server relayed to it, and
	// Chatter says its bot's lines (nil without Config.Chat).
	Kills     []KillRecord
	ChatHeard uint64
	Chatter   *Chatter
	// Ball switches the ball between predicted and interpolated on this
	// client (nil without a ball).
	Ball *BallSwitch
	// MaxRemoteStep is the largest per-tick step of a remote player drawn
	// on this client, over the largest step the game allows per tick
	// (MaxStep: running plus the largest shove; teleports excluded).
	MaxRemoteStep float64
	Smoother      *systems.Smoother
	before        Position
	prevMoving    bool
	remote        map[ecs.Entity]Position
	lastFrame     time.Duration
}

// NewMatch builds a match: the server, one bot client per Config.Clients,
// and the game's systems on every endpoint.
func NewMatch(cfg Config) (*Match, error) {
	m, err := newMatch(cfg)
	if err != nil {
		return nil, err
	}
	specs := make([]harness.ClientSpec, cfg.Clients)
	opts := harness.Options{
		Seed:        cfg.Seed,
		Game:        m.game(),
		Server:      m.serverOptions(),
		SetupServer: m.setupServer,
		SetupClient: m.setupClient,
		OnServerTick: func(d time.Duration) {
			if m.tickWall != nil {
				m.tickWall = append(m.tickWall, d)
			}
		},
	}
	for i := range specs {
		specs[i] = harness.ClientSpec{Link: cfg.Link(), Options: systems.ClientOptions{RollbackAlways: cfg.Rollback == RollbackAlways,
			InterpolationDelay: cfg.InterpDelay, InputDelay: cfg.InputDelay}}
		if cfg.cheatOf(i) == CheatBacktrack {
			specs[i].Options.ClaimView = backtrack
		}
		if cfg.Client != nil {
			cfg.Client(i, &specs[i])
		}
	}
	opts.Clients = nil
	if cfg.Record != nil {
		conf, err := cfg.Recording()
		if err != nil {
			return nil, err
		}
		if m.Recorder, err = replay.NewRecorder(cfg.Record, opts.Game, replay.RecorderOptions{Config: conf}); err != nil {
			return nil, err
		}
		opts.Server.Recorder = m.Recorder
	}
	h, err := harness.New(opts)
	if err != nil {
		return nil, err
	}
	m.Harness, m.clock = h, h.Time
	// The report checks every client's kill feed against the server's.
	KillFeedOf(h.Server.World()).Keep = true
	for i, spec := range specs {
		m.playerOptions(i, &spec.Options)
		if err := h.AddClient(spec); err != nil {
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
	}
	return m, nil
}

// newMatch is a match before its harness: the configuration checked,
// the schema, a PlayerStats per client.
func newMatch(cfg Config) (*Match, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	schema, err := newSchema(!cfg.healthPredicted)
	if err != nil {
		return nil, err
	}
	m := &Match{Config: cfg, Schema: schema, stopAt: cfg.Duration, Players: make([]*PlayerStats, cfg.Clients)}
	for i := range m.Players {
		m.Players[i] = &PlayerStats{}
	}
	return m, nil
}

// game is the arena for both ends of this match: its players spawn with
// spawnPlayer and leave the view radius's bookkeeping when they go.
func (m *Match) game() *systems.Game {
	g := NewGame(m.Schema, m.Config.TickRate, m.spawnPlayer, func(w *gw.World, conn components.ConnID, owned []ecs.Entity) {
		delete(m.viewers, conn)
		for _, e := range owned {
			w.Arche().RemoveEntity(e)
		}
	})
	g.OnReconnect = m.reconnect
	if !m.Config.Ball {
		g.OnStart = startMessages
	}
	return g
}

// serverOptions are the server's options: how far a fixed interpolation
// delay may go, the determinism check and the view radius.
func (m *Match) serverOptions() systems.ServerOptions {
	return systems.ServerOptions{
		// A player who fixes its interpolation delay has it counted
		// toward the view of its shots (0: the adaptive delay's default).
		MaxInterpolationDelay: m.Config.InterpDelay,
		SyncTest:              m.Config.SyncTest,
		Relevant:              m.relevant(),
		Importance:            m.importance(),
	}
}

// crateImportance is how much a crate matters beside a player, a rocket
// or the ball (1): a player's updates go four times as often as a
// crate's when the packet cannot hold both, and crates entering a
// player's scope wait their turn rather than go first.
const crateImportance = 0.25

// importance returns the server's importance hook: crates matter less
// than what fights; nil (everything alike) without crates.
func (m *Match) importance() func(w *gw.World, conn components.ConnID, e ecs.Entity) float32 {
	if m.Config.Crates == 0 {
		return nil
	}
	var crate ecs.ID // Crate's ID in the server's world, the only one asking
	known := false
	return func(w *gw.World, _ components.ConnID, e ecs.Entity) float32 {
		if !known {
			crate, known = ecs.ComponentID[Crate](w.Arche()), true
		}
		if w.Arche().Has(e, crate) {
			return crateImportance
		}
		return 1
	}
}

// relevant returns the server's relevancy hook for Config.ViewRadius: a
// ghost is in a connection's scope while within the radius of its
// player; nil (everything) when the radius is 0.
func (m *Match) relevant() func(w *gw.World, conn components.ConnID, e ecs.Entity) bool {
	r := m.Config.ViewRadius
	if r == 0 {
		return nil
	}
	return func(w *gw.World, conn components.ConnID, e ecs.Entity) bool {
		me, ok := m.viewers[conn]
		a := w.Arche()
		if !ok || !a.Alive(me) || !a.Has(e, m.posID) {
			return true
		}
		p, q := (*Position)(a.Get(me, m.posID)), (*Position)(a.Get(e, m.posID))
		dx, dy := p.X-q.X, p.Y-q.Y
		return dx*dx+dy*dy <= r*r
	}
}

// playerOptions gives client i a bot, unless o already has an input
// source, and the hooks that measure its corrections.
func (m *Match) playerOptions(i int, o *systems.ClientOptions) {
	ps := m.Players[i]
	ps.Cheat = m.Config.cheatOf(i)
	if o.Input == nil {
		ps.Bot = NewBot(m.Config.Seed*1000+uint64(i)+1, m.clock, m.stopAt)
		ps.Bot.Cheat = ps.Cheat
		ps.Bot.Aim = AimOf(m.Config.BotAim)
		ps.Bot.Rockets = m.Config.Rockets
		o.Input = systems.InputFunc(func(w *gw.World, tick gw.Tick) Command {
			ps.sampledAt[uint8(tick)] = w.Tick() // tick is the input's: the client's plus the input delay
			return ps.Bot.Input(w, tick)
		})
		if m.Config.Chat {
			ps.Chatter = NewChatter(m.Config.Seed*1000+uint64(i)+1, m.clock, m.stopAt)
		}
	}
	own := generic.NewFilter1[Position]().With(generic.T2[Health, components.Predicted]()...)
	ownPos := func(w *gw.World) (Position, bool) {
		q := own.Query(w.Arche())
		if !q.Next() {
			return Position{}, false
		}
		p := *q.Get()
		q.Close()
		return p, true
	}
	o.OnConfirm = func(_ *gw.World, shot gw.Tick, hit bool, _ string, _ ecs.Entity, _ uint8) {
		if ps.Confirmations > 0 && !shot.After(ps.lastConfirmed) {
			ps.ConfirmsOutOfOrder++
		}
		ps.Confirmations++
		ps.lastConfirmed = shot
		if hit {
			ps.ConfirmedHits++
		}
		if ps.Bot != nil {
			ps.Bot.Confirmed(shot, hit)
		}
	}
	hadOwn := false
	rockets := generic.NewFilter2[Position, components.Ghost]().With(generic.T2[Rocket, components.Predicted]()...)
	ps.handedOver, ps.handing = map[ecs.Entity]bool{}, map[ecs.Entity]Position{}
	o.BeforeCorrection = func(w *gw.World) {
		ps.before, hadOwn = ownPos(w)
		// The rockets the server's ghosts have taken over since the last
		// look: where the prediction had them at the snapshot's tick.
		var fresh []ecs.Entity
		q := rockets.Query(w.Arche())
		for q.Next() {
			if _, g := q.Get(); g.ID != 0 && !ps.handedOver[q.Entity()] {
				fresh = append(fresh, q.Entity())
			}
		}
		if len(fresh) == 0 || ps.client == nil {
			return
		}
		ps.handTick = ps.client.Stats().NewestSnapshot
		for _, e := range fresh {
			if p, ok := gw.ValueAt[Position](w.History(), ps.handTick, e); ok {
				ps.handing[e] = p
			}
		}
	}
	o.AfterCorrection = func(w *gw.World) {
		// A respawn is a teleport, not a correction to measure.
		if p, ok := ownPos(w); ok && hadOwn {
			if d := length(p.X-ps.before.X, p.Y-ps.before.Y); d < TeleportDistance {
				ps.MaxCorrection = max(ps.MaxCorrection, float64(d))
			}
		}
		for e, predicted := range ps.handing {
			if p, ok := gw.ValueAt[Position](w.History(), ps.handTick, e); ok {
				ps.MaxSpawnError = max(ps.MaxSpawnError, float64(length(p.X-predicted.X, p.Y-predicted.Y)))
			}
			ps.handedOver[e] = true
		}
		clear(ps.handing)
	}
}

// spawnPlayer creates a connection's player at its spawn point.
func (m *Match) spawnPlayer(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
	e, t, _ := m.Schema.SpawnPlayer(w, conn)
	if m.viewers == nil {
		m.viewers, m.posID = map[components.ConnID]ecs.Entity{}, ecs.ComponentID[Position](w.Arche())
	}
	m.viewers[conn] = e
	return e, t, nil
}

// setupServer installs the shared prediction systems, respawn, lag
// compensation and the trigger.
func (m *Match) setupServer(s *systems.Server) error {
	cfg := m.Config
	lc, err := lagcomp.New(s.World(), lagcomp.Options{
		TickRate:        cfg.TickRate,
		Window:          cfg.MaxRewind,
		Walls:           wallCorners(),
		Range:           ShotRange,
		MinShotInterval: FireInterval,
		MaxOriginError:  MaxOriginError,
		Schema:          m.Schema.Schema,
		Present:         !cfg.LagComp,
		Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
			p, f := lagcomp.Get[Position](r), lagcomp.Get[Facing](r)
			return [3]float32{p.X, p.Y, 0}, f.Yaw
		},
		// The dead are hidden: a shooter could not see them then.
		Visible: func(_ ecs.Entity, tg *lagcomp.Rewound) bool { return lagcomp.Get[Health](tg).Alive() },
		// The death rule: the default trade window.
		Alive: func(r *lagcomp.Rewound) bool { return lagcomp.Get[Health](r).Alive() },
		// Every verdict goes back to the shooter's client.
		Server:  s,
		OnJudge: m.OnJudge,
	})
	if err != nil {
		return err
	}
	for _, err := range []error{lagcomp.Register[Position](lc), lagcomp.Register[Facing](lc), lagcomp.Register[Health](lc)} {
		if err != nil {
			return err
		}
	}
	m.Shots = NewShotSystem(s.World(), lc)
	if err := m.spawnCrates(s); err != nil {
		return err
	}
	if m.Armoury, err = NewArmoury(s, cfg.TickRate); err != nil {
		return err
	}
	s.Schedule().Add(gw.StageHistory, lc)
	s.Schedule().Add(gw.StageHistory, m.Shots)
	return nil
}

// setupClient installs the shared prediction systems and the client-only
// side effects.
func (m *Match) setupClient(i int, c *systems.Client) error {
	ps := m.Players[i]
	own := generic.NewFilter2[Command, components.InputHeader]().With(generic.T2[Health, components.Predicted]()...)
	// The move latency: ticks between sampling the start of a move and the
	// predicted tick that applies it first (the input delay in use).
	c.Schedule().AddSideEffect(gw.StagePrePrediction, gw.SystemFunc(func(w *gw.World) {
		q := own.Query(w.Arche())
		for q.Next() {
			in, h := q.Get()
			moving := in.Moving()
			if moving && !ps.prevMoving {
				ps.Presses++
				if ps.Bot != nil {
					ps.MoveLatency = max(ps.MoveLatency, int(w.Tick().Sub(ps.sampledAt[uint8(h.Tick)])))
				}
			}
			ps.prevMoving = moving
		}
	}))
	// The footstep, the shot effect and the rocket's launch: side effects
	// that must fire once per tick, however often the tick is replayed. A
	// rocket fired this tick still carries its spawn request.
	alive := generic.NewFilter2[Command, Health]().With(generic.T[components.Predicted]())
	launched := generic.NewFilter1[Rocket]().With(generic.T[components.SpawnGhost]())
	c.Schedule().AddSideEffect(gw.StagePrediction, gw.SystemFunc(func(w *gw.World) {
		q := launched.Query(w.Arche())
		ps.Rockets += uint64(q.Count())
		q.Close()
	}))
	c.Schedule().AddSideEffect(gw.StagePostPrediction, gw.SystemFunc(func(w *gw.World) {
		q := alive.Query(w.Arche())
		for q.Next() {
			in, h := q.Get()
			if in.Moving() {
				ps.Footsteps++
			}
			if in.Fire.Pressed() && h.Alive() {
				ps.ShotsFired++
			}
		}
	}))
	sm, err := systems.NewSmoother(c, systems.SmoothingOptions{Position: func(a *ecs.World, e ecs.Entity) [3]float32 {
		p := (*Position)(a.Get(e, ecs.ComponentID[Position](a)))
		return [3]float32{p.X, p.Y, 0}
	}})
	if err != nil {
		return err
	}
	ps.Smoother = sm
	ps.client = c
	ps.Ball = NewBallSwitch(c)
	// The kill feed and the chat, as a page would show them.
	if err := systems.Handle(c.World(), func(_ *gw.World, e systems.Envelope, k *Kill) {
		ps.Kills = append(ps.Kills, KillRecord{Kill: *k, Tick: e.Tick})
	}); err != nil {
		return err
	}
	if err := systems.Handle(c.World(), func(*gw.World, systems.Envelope, *Chat) { ps.ChatHeard++ }); err != nil {
		return err
	}
	if ps.Chatter != nil {
		c.Schedule().Add(gw.StagePresentation, ps.Chatter)
	}
	// A rocket the server's ghost took over without a correction was
	// predicted right: its error is 0.
	rockets := generic.NewFilter1[components.Ghost]().With(generic.T2[Rocket, components.Predicted]()...)
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
		q := rockets.Query(w.Arche())
		for q.Next() {
			if q.Get().ID != 0 {
				ps.handedOver[q.Entity()] = true
			}
		}
		for e := range ps.handedOver {
			if !w.Arche().Alive(e) {
				delete(ps.handedOver, e)
			}
		}
	}))
	ps.remote = map[ecs.Entity]Position{}
	remote := generic.NewFilter2[Position, components.Interpolated]().With(generic.T[Health]())
	maxStep := float64(MaxStep(m.Config.TickRate))
	interval := time.Second / time.Duration(m.Config.TickRate)
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) {
		now := m.clock.Now()
		frame := float64(now-ps.lastFrame) / float64(interval)
		ps.lastFrame = now
		q := remote.Query(w.Arche())
		for q.Next() {
			p, in := q.Get()
			prev, seen := ps.remote[q.Entity()]
			ps.remote[q.Entity()] = *p
			if !seen || in.Teleported || frame <= 0 {
				continue
			}
			step := float64(length(p.X-prev.X, p.Y-prev.Y)) / (maxStep * frame)
			ps.MaxRemoteStep = max(ps.MaxRemoteStep, step)
		}
	}))
	return nil
}

func getPV(a *ecs.World, e ecs.Entity) (Position, Velocity) {
	m := generic.NewMap2[Position, Velocity](a)
	p, v := m.Get(e)
	return *p, *v
}

// autoInputDelay is the input delay -input-delay auto asks for: adaptive
// within systems.InputDelay's default bounds.
var autoInputDelay = systems.InputDelay{Adaptive: true, Max: 4}

// InputDelayFlag is an input delay as -input-delay takes it: its ticks,
// or "auto" for an adaptive one.
func InputDelayFlag(d systems.InputDelay) string {
	if d.Adaptive {
		return "auto"
	}
	return strconv.Itoa(d.Ticks)
}

// ParseInputDelay reads -input-delay's value: ticks (0..systems.MaxInputDelay)
// or "auto" (adaptive, 0..4 ticks).
func ParseInputDelay(s string) (systems.InputDelay, error) {
	if s == "auto" {
		return autoInputDelay, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > systems.MaxInputDelay {
		return systems.InputDelay{}, fmt.Errorf("%q is not an input delay (0..%d ticks, or auto)", s, systems.MaxInputDelay)
	}
	return systems.InputDelay{Ticks: n}, nil
}
