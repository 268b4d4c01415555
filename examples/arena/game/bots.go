package game

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// botMode is what a bot is doing.
type botMode uint8

const (
	wander botMode = iota // walk in a random direction
	chase                 // walk toward the nearest other player
	stop                  // stand still
)

// BotRocketShare is the share of an honest bot's shots that are rockets
// when its launcher is ready (Bot.Rockets).
const BotRocketShare = 0.3

// Bot produces a player's input from a seeded random source and what its
// client sees: it wanders, chases the nearest player as rendered, or stops,
// switching at random. From StopAt on it stands still, so a run can check
// that every client converges to the server. It is an InputSource: it runs
// once per tick, never in replay, so its own fields may hold state.
type Bot struct {
	rng     *rand.Rand
	clock   gw.TimeSource
	stopAt  time.Duration
	mode    botMode
	until   gw.Tick
	dx, dy  float32
	others  *generic.Filter2[Position, Health]
	own     *generic.Filter2[Position, Health]
	started bool
	aim     float32
	ready   gw.Tick // tick the weapon is ready again
	// shot is the latest shot's tick (coded) and origin, repeated in
	// every command (Command.Shot).
	shot, shotX, shotY float32
	// Moving counts the sampled inputs whose move vector is not zero on
	// the wire.
	Moving uint64
	// Fired counts trigger pulls: every one at a living target in view,
	// aimed at where this client draws it.
	Fired uint64
	// Cheat is the cheat this bot plays (CheatNone: honest).
	// CheatShots counts its trigger pulls that cheated, CheatHits those
	// the server confirmed as hits: the hits cheating gained.
	Cheat                 string
	CheatShots, CheatHits uint64
	// Rockets lets an honest bot fire a rocket instead of a shot, now and
	// then (BotRocketShare of its shots when its launcher is ready);
	// Launched counts them. The choice draws from a source of its own,
	// so a bot without rockets plays as it did before they existed.
	Rockets  bool
	Launched uint64
	launch   *rand.Rand
	// Aim is how the bot aims; the zero value aims perfectly.
	Aim        Aim
	aimer      aimer
	cheatTicks map[gw.Tick]bool
	past       map[ecs.Entity]*[BacktrackTicks + 1]Position
}

// NewBot returns a bot with its own seed that stops at virtual time stopAt
// of clock.
func NewBot(seed uint64, clock gw.TimeSource, stopAt time.Duration) *Bot {
	return &Bot{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		clock:  clock,
		stopAt: stopAt,
		others: generic.NewFilter2[Position, Health]().With(generic.T[components.Interpolated]()),
		own:    generic.NewFilter2[Position, Health]().With(generic.T[components.Predicted]()),
		aimer:  aimer{rng: rand.New(rand.NewPCG(seed^0x6a09e667f3bcc908, seed))},
		launch: rand.New(rand.NewPCG(seed^0xbb67ae8584caa73b, seed)),
	}
}

// Input samples the bot's command for a tick: a move by its current mode,
// and, when its weapon is ready and a living player is in view, a shot at
// where its client draws that player (exactly, or as Aim says: after a
// reaction time, with an error).
func (b *Bot) Input(w *gw.World, tick gw.Tick) Command {
	cmd := Command{Aim: b.aim, Shot: b.shot, OriginX: b.shotX, OriginY: b.shotY}
	if b.clock.Now() >= b.stopAt {
		return cmd
	}
	me, alive, respawn, launcher, armed := b.me(w)
	if !b.started || !tick.Before(b.until) {
		if !b.started {
			b.ready = tick // ready now: the zero tick may lie ahead, ticks wrap
		}
		b.started = true
		b.mode = botMode(b.rng.IntN(3))
		b.until = tick.Add(30 + b.rng.IntN(90))
		a := b.rng.Float64() * 2 * math.Pi
		b.dx, b.dy = float32(math.Cos(a)), float32(math.Sin(a))
	}
	if b.Cheat == CheatBacktrack {
		b.remember(w, tick)
	}
	te, target, seen := b.nearest(w, me, true)
	switch b.mode {
	case wander:
		cmd.MoveX, cmd.MoveY = b.dx, b.dy
	case chase:
		if seen {
			d := length(target.X-me.X, target.Y-me.Y)
			cmd.MoveX, cmd.MoveY = (target.X-me.X)/d, (target.Y-me.Y)/d
		} else {
			cmd.MoveX, cmd.MoveY = b.dx, b.dy
		}
	}
	if b.Cheat == CheatOrigin { // it hugs the pillars, to shoot around them
		px, py := nearestPillar(me)
		if d := length(px-me.X, py-me.Y); d > 1e-3 {
			cmd.MoveX, cmd.MoveY = (px-me.X)/d, (py-me.Y)/d
		}
	}
	ready := !tick.Before(b.ready)
	origin, aim, cheat := me, target, false
	switch b.Cheat {
	case CheatFireRate:
		// A shot the honest schedule would have fired is no cheat.
		cheat, ready = !ready, true
	case CheatDeadshot:
		// Once its respawn is due the server has it alive again: firing
		// then is no cheat, whatever this client still shows.
		cheat, alive = !alive && tick.Before(respawn), true
	case CheatBacktrack:
		if p, ok := b.past[te]; ok && seen {
			then := tick.Add(-BacktrackTicks) // the tick the cheat claims to have seen
			aim, cheat = p[int(uint32(then)%uint32(len(p)))], true
		}
	case CheatOrigin:
		if _, hidden, ok := b.nearest(w, me, false); ok && ready {
			if o, ok := forgeOrigin(me, hidden.X, hidden.Y); ok {
				origin, aim, seen, cheat = o, hidden, true, true
			}
		}
	}
	var inView ecs.Entity
	if seen {
		inView = te
	}
	reacted := b.aimer.sees(b.Aim, inView, b.clock.Now())
	if alive && seen && ready && reacted {
		b.aim = float32(math.Atan2(float64(aim.Y-origin.Y), float64(aim.X-origin.X)) + b.aimer.miss(b.Aim))
		cmd.Aim = b.aim
		if b.Rockets && armed && b.Cheat == CheatNone && !tick.Before(launcher) && b.launch.Float64() < BotRocketShare {
			cmd.Rocket = 1
			b.ready = tick.Add(FireInterval)
			b.Launched++
			return b.moved(cmd)
		}
		cmd.Fire = 1
		cmd.ShotFrom(tick, origin.X, origin.Y)
		b.shot, b.shotX, b.shotY = cmd.Shot, cmd.OriginX, cmd.OriginY
		if !cheat || b.Cheat != CheatFireRate {
			b.ready = tick.Add(FireInterval + b.aimer.pause(b.Aim))
		}
		b.Fired++
		if cheat || b.Cheat == CheatBacktrack { // every view it sends is backtracked
			b.markCheat(tick)
		}
	}
	return b.moved(cmd)
}

// moved counts cmd if it moves on the wire, and returns it.
func (b *Bot) moved(cmd Command) Command {
	if x, y := clampMove(axis.Quantize(cmd.MoveX), axis.Quantize(cmd.MoveY)); x != 0 || y != 0 {
		b.Moving++
	}
	return cmd
}

// me returns the bot's own player position, whether it is alive, when it
// respawns if not, and when its launcher is ready (as this client
// predicts it) if it has one (armed).
func (b *Bot) me(w *gw.World) (pos Position, alive bool, respawn, ready gw.Tick, armed bool) {
	a := w.Arche()
	id := ecs.ComponentID[Launcher](a) // before the query locks the world
	q := b.own.Query(a)
	if !q.Next() {
		return pos, false, 0, 0, false // an exhausted query has closed itself
	}
	p, h := q.Get()
	pos, alive, respawn = *p, h.Alive(), h.Respawn
	if q.Has(id) {
		ready, armed = (*Launcher)(q.Query.Get(id)).Ready, true
	}
	q.Close()
	return pos, alive, respawn, ready, armed
}

// nearest returns the nearest living player this client draws in line of
// sight (or, without los, hidden from it).
func (b *Bot) nearest(w *gw.World, me Position, los bool) (ecs.Entity, Position, bool) {
	best := float32(math.MaxFloat32)
	var found Position
	var e ecs.Entity
	ok := false
	o := b.others.Query(w.Arche())
	for o.Next() {
		p, h := o.Get()
		if !h.Alive() {
			continue
		}
		d := length(p.X-me.X, p.Y-me.Y)
		if d < best && d > 1e-3 && d < ShotRange && LineOfSight(me.X, me.Y, p.X, p.Y) == los {
			best, found, e, ok = d, *p, o.Entity(), true
		}
	}
	return e, found, ok
}

// remember keeps where the backtracking cheat drew every other player on
// the last BacktrackTicks ticks.
func (b *Bot) remember(w *gw.World, tick gw.Tick) {
	if b.past == nil {
		b.past = map[ecs.Entity]*[BacktrackTicks + 1]Position{}
	}
	o := b.others.Query(w.Arche())
	for o.Next() {
		p, _ := o.Get()
		ring := b.past[o.Entity()]
		if ring == nil {
			ring = &[BacktrackTicks + 1]Position{}
			for i := range ring {
				ring[i] = *p
			}
			b.past[o.Entity()] = ring
		}
		ring[int(uint32(tick)%uint32(len(ring)))] = *p
	}
}

// markCheat notes a cheating shot of tick, whose confirmation says
// whether cheating gained a hit.
func (b *Bot) markCheat(tick gw.Tick) {
	b.CheatShots++
	if b.cheatTicks == nil {
		b.cheatTicks = map[gw.Tick]bool{}
	}
	if len(b.cheatTicks) >= 1024 { // unconfirmed for long: the client left
		clear(b.cheatTicks)
	}
	b.cheatTicks[tick] = true
}

// Confirmed takes the server's verdict of the shot of tick.
func (b *Bot) Confirmed(shot gw.Tick, hit bool) {
	if b.cheatTicks[shot] {
		delete(b.cheatTicks, shot)
		if hit {
			b.CheatHits++
		}
	}
}
