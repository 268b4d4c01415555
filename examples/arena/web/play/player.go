// Package play is the arena's playing client, shared by the page's
// WebAssembly client, the web server's bots and the tests: a systems.Client
// with the arena's prediction systems, correction smoothing, input from a
// person's controls (or a bot), the kill feed and the chat (Say), and a
// View of what to draw.
package play

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport"
)

// TickRate is the arena's tick rate on the web: the web server and every
// client use it.
const TickRate = 60

// Options configures a Player. The zero value is a person's client with an
// adaptive interpolation delay.
type Options struct {
	// InterpDelay fixes the interpolation delay of the other players; 0
	// adapts it. Allowed: 0..1s.
	InterpDelay time.Duration
	// Input, if set, samples the input instead of the controls (a bot).
	Input func(w *gw.World, tick gw.Tick) game.Command
	// Logger receives the client's connection events; slog.Default() when
	// nil.
	Logger *slog.Logger
	// Chat, if set, says a bot's lines of chat on this client (the
	// arena's -chat); a person's come through Say.
	Chat *game.Chatter
}

// Controls are what a person holds down: the move axes (each -1, 0 or 1)
// and the point aimed at, in arena units.
type Controls struct {
	MoveX, MoveY float32
	AimX, AimY   float32
}

// Player is one client of the arena. Its methods are safe for concurrent
// use: a page's event handlers set the controls while its loop steps.
type Player struct {
	mu       sync.Mutex
	clock    gw.TimeSource
	client   *systems.Client
	smoother *systems.Smoother
	controls Controls
	fire     systems.Latch
	launch   systems.Latch
	aim      float32
	shot     game.Command // the latest shot's tick and origin, repeated by every command (game.Command.ShotFrom)
	ownQ     *generic.Filter2[game.Position, game.Health]
	remote   *generic.Filter4[game.Position, game.Facing, game.Health, components.Ghost]
	ghostOf  *generic.Filter1[components.Ghost]
	bodies   generic.Map3[game.Position, game.Facing, game.Health]
	timeline timeline
	shots    shots
	rockets  rockets
	ball     ballView
	kills    killFeed
	chat     chatLog
}

// New connects a Player over conn, reading time from clock. It errors
// naming the value on a bad option.
func New(clock gw.TimeSource, conn transport.Conn, opts Options) (*Player, error) {
	schema, err := game.NewSchema()
	if err != nil {
		return nil, err
	}
	p := &Player{
		clock:   clock,
		ownQ:    generic.NewFilter2[game.Position, game.Health]().With(generic.T[components.Predicted]()),
		remote:  generic.NewFilter4[game.Position, game.Facing, game.Health, components.Ghost]().With(generic.T[components.Interpolated]()),
		ghostOf: generic.NewFilter1[components.Ghost]().With(generic.T2[game.Health, components.Predicted]()...),
	}
	in := systems.InputFunc(p.sample)
	if opts.Input != nil {
		in = systems.InputFunc(opts.Input)
	}
	var before own
	c, err := systems.NewClient(clock, conn, game.NewGame(schema, TickRate, nil, nil), systems.ClientOptions{
		Input:              in,
		InterpolationDelay: opts.InterpDelay,
		OnMisprediction: func(_ gw.Tick, _ components.GhostID, d netsync.FieldDiff) {
			p.timeline.mispredicted(d)
		},
		BeforeCorrection: func(w *gw.World) { before = p.own(w) },
		AfterCorrection: func(w *gw.World) {
			after := p.own(w)
			if !before.ok || !after.ok {
				p.timeline.corrected(0, false)
				return
			}
			d := math.Hypot(float64(after.pos.X-before.pos.X), float64(after.pos.Y-before.pos.Y))
			// A respawn is a teleport the client could not predict (the
			// server's respawn system runs there alone), not a
			// misprediction to correct.
			p.timeline.corrected(d, !before.alive && after.alive || d >= game.TeleportDistance)
		},
		// Step holds the lock while the client receives the verdicts.
		OnConfirm: func(w *gw.World, shot gw.Tick, hit bool, reason string, target ecs.Entity, _ uint8) {
			p.shots.confirm(p.clock.Now(), shot, hit, reason, p.targetPosition(w, target))
			p.timeline.confirmed(hit)
		},
		// And while the server's despawns remove rockets.
		OnDespawn: func(w *gw.World, e ecs.Entity, g components.Ghost) {
			p.rockets.despawned(w, e, g.Type == uint16(schema.Rocket), p.clock.Now())
		},
		Logger: opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("play: %w", err)
	}
	p.client = c
	p.bodies = generic.NewMap3[game.Position, game.Facing, game.Health](c.World().Arche())
	p.rockets, p.ball = newRockets(c.World()), newBallView(c.World())
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(func(w *gw.World) { p.rockets.note(w, p.clock.Now()) }))
	// The kill feed and the chat arrive while Step holds the lock.
	if err := systems.Handle(c.World(), func(_ *gw.World, _ systems.Envelope, k *game.Kill) { p.kills.add(p.clock.Now(), k) }); err != nil {
		return nil, fmt.Errorf("play: %w", err)
	}
	if err := systems.Handle(c.World(), func(_ *gw.World, _ systems.Envelope, m *game.Chat) { p.chat.add(m) }); err != nil {
		return nil, fmt.Errorf("play: %w", err)
	}
	if opts.Chat != nil {
		c.Schedule().Add(gw.StagePresentation, opts.Chat)
	}
	game.NewBallSwitch(c) // the ball is predicted while the player is near it
	p.smoother, err = systems.NewSmoother(c, systems.SmoothingOptions{Position: func(a *ecs.World, e ecs.Entity) [3]float32 {
		pos := (*game.Position)(a.Get(e, ecs.ComponentID[game.Position](a)))
		return [3]float32{pos.X, pos.Y, 0}
	}})
	if err != nil {
		return nil, fmt.Errorf("play: %w", err)
	}
	return p, nil
}

// Client returns the underlying client, to read its state and stats.
func (p *Player) Client() *systems.Client { return p.client }

// Close leaves the server at once (see systems.Client.Close), so it drops
// the player without waiting for its timeout, and closes the connection.
// Later Steps do nothing. Close is idempotent.
func (p *Player) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.client.Close()
}

// SetControls sets what the person holds down.
func (p *Player) SetControls(c Controls) {
	p.mu.Lock()
	p.controls = c
	p.mu.Unlock()
}

// Fire pulls the trigger on the next sampled tick.
func (p *Player) Fire() { p.fire.Press() }

// Rocket fires a rocket on the next sampled tick, if the launcher is
// ready then (game.RocketCooldown) and the player alive; the server may
// still refuse it for an empty magazine, and the client then removes it.
func (p *Player) Rocket() { p.launch.Press() }

// Step runs one frame: the network, the due ticks, interpolation and
// presentation.
func (p *Player) Step() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.client.Update()
	p.client.Frame()
	p.timeline.sample(p.clock.Now(), p.client.Stats())
}

// sample is the person's input of a tick: the held move axes, the aim at
// the pointed spot from where the player stands, and the trigger. Step
// holds the lock while the client samples.
func (p *Player) sample(w *gw.World, tick gw.Tick) game.Command {
	c := p.controls
	cmd := game.Command{MoveX: c.MoveX, MoveY: c.MoveY, Aim: p.aim, Shot: p.shot.Shot, OriginX: p.shot.OriginX, OriginY: p.shot.OriginY}
	if c.MoveX != 0 && c.MoveY != 0 {
		cmd.MoveX, cmd.MoveY = c.MoveX*math.Sqrt2/2, c.MoveY*math.Sqrt2/2
	}
	o := p.own(w)
	me := o.pos
	if o.ok && (c.AimX != me.X || c.AimY != me.Y) {
		p.aim = float32(math.Atan2(float64(c.AimY-me.Y), float64(c.AimX-me.X)))
		cmd.Aim = p.aim
	}
	if cmd.Fire = p.fire.Take(); cmd.Fire.Pressed() && o.ok {
		cmd.ShotFrom(tick, me.X, me.Y)
		p.shot = cmd
		p.timeline.shots++
		p.shots.fire(tick, me.X, me.Y, cmd.Aim)
	}
	cmd.Rocket = p.launch.Take()
	return cmd
}

// own is the client's own (predicted) player, when ok.
type own struct {
	pos       game.Position
	alive, ok bool
}

// own returns the client's own player.
func (p *Player) own(w *gw.World) own {
	q := p.ownQ.Query(w.Arche())
	if !q.Next() {
		return own{}
	}
	pos, h := q.Get()
	o := own{pos: *pos, alive: h.Alive(), ok: true}
	q.Close()
	return o
}

// confirmed returns the own player's position at the newest snapshot's
// tick as the client's history holds it: the server's state, which a
// client that does not predict would draw.
func (p *Player) confirmed(e ecs.Entity, st systems.ClientStats) (game.Position, bool) {
	if st.SnapshotsReceived == 0 {
		return game.Position{}, false
	}
	return gw.ValueAt[game.Position](p.client.World().History(), st.NewestSnapshot, e)
}
