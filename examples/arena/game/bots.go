package game

import (
	"math"
	"math/rand/v2"
	"time"

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
	// Moving counts the sampled inputs whose move vector is not zero on
	// the wire.
	Moving uint64
	// Fired counts trigger pulls: every one at a living target in view,
	// aimed at where this client draws it.
	Fired uint64
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
	}
}

// Input samples the bot's command for a tick: a move by its current mode,
// and, when its weapon is ready and a living player is in view, a shot
// aimed exactly at where its client draws that player.
func (b *Bot) Input(w *gw.World, tick gw.Tick) Command {
	cmd := Command{Aim: b.aim}
	if b.clock.Now() >= b.stopAt {
		return cmd
	}
	me, alive := b.me(w)
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
	target, seen := b.nearest(w, me)
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
	if alive && seen && !tick.Before(b.ready) {
		b.aim = float32(math.Atan2(float64(target.Y-me.Y), float64(target.X-me.X)))
		cmd.Aim = b.aim
		cmd.Fire = 1
		cmd.OriginX, cmd.OriginY = me.X, me.Y
		b.ready = tick.Add(FireInterval)
		b.Fired++
	}
	if x, y := clampMove(axis.Quantize(cmd.MoveX), axis.Quantize(cmd.MoveY)); x != 0 || y != 0 {
		b.Moving++
	}
	return cmd
}

// me returns the bot's own player position and whether it is alive.
func (b *Bot) me(w *gw.World) (Position, bool) {
	q := b.own.Query(w.Arche())
	if !q.Next() {
		return Position{}, false // an exhausted query has closed itself
	}
	p, h := q.Get()
	pos, alive := *p, h.Alive()
	q.Close()
	return pos, alive
}

// nearest returns the nearest living player this client draws in line of
// sight.
func (b *Bot) nearest(w *gw.World, me Position) (Position, bool) {
	best := float32(math.MaxFloat32)
	var found Position
	ok := false
	o := b.others.Query(w.Arche())
	for o.Next() {
		p, h := o.Get()
		if !h.Alive() {
			continue
		}
		d := length(p.X-me.X, p.Y-me.Y)
		if d < best && d > 1e-3 && d < ShotRange && LineOfSight(me.X, me.Y, p.X, p.Y) {
			best, found, ok = d, *p, true
		}
	}
	return found, ok
}
