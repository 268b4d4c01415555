package game

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
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
	until   uint32
	dx, dy  float32
	others  *generic.Filter1[Position]
	own     *generic.Filter1[Position]
	started bool
	// Moving counts the sampled inputs whose move vector is not zero on
	// the wire.
	Moving uint64
}

// NewBot returns a bot with its own seed that stops at virtual time stopAt
// of clock.
func NewBot(seed uint64, clock gw.TimeSource, stopAt time.Duration) *Bot {
	return &Bot{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		clock:  clock,
		stopAt: stopAt,
		others: generic.NewFilter1[Position]().With(generic.T[components.Interpolated]()),
		own:    generic.NewFilter1[Position]().With(generic.T[components.Predicted]()),
	}
}

// Input samples the bot's command for a tick.
func (b *Bot) Input(w *gw.World, tick uint32) components.InputCommand {
	var cmd components.InputCommand
	if b.clock.Now() >= b.stopAt {
		return cmd
	}
	if !b.started || int32(tick-b.until) >= 0 {
		b.started = true
		b.mode = botMode(b.rng.IntN(3))
		b.until = tick + 30 + uint32(b.rng.IntN(90))
		a := b.rng.Float64() * 2 * math.Pi
		b.dx, b.dy = float32(math.Cos(a)), float32(math.Sin(a))
	}
	switch b.mode {
	case wander:
		cmd.MoveX, cmd.MoveY = b.dx, b.dy
	case chase:
		cmd.MoveX, cmd.MoveY = b.towardNearest(w)
	}
	if x, y := netsync.QuantizeMove(cmd.MoveX, cmd.MoveY); x != 0 || y != 0 {
		b.Moving++
	}
	return cmd
}

// towardNearest returns the unit vector from the bot's player to the
// nearest other player it sees, or the wander direction when alone.
func (b *Bot) towardNearest(w *gw.World) (float32, float32) {
	q := b.own.Query(w.Arche())
	if !q.Next() {
		return 0, 0
	}
	me := *q.Get()
	q.Close()
	best := float32(math.MaxFloat32)
	var tx, ty float32
	found := false
	o := b.others.Query(w.Arche())
	for o.Next() {
		p := o.Get()
		if d := length(p.X-me.X, p.Y-me.Y); d < best {
			best, tx, ty, found = d, p.X, p.Y, true
		}
	}
	if !found || best < 1e-3 {
		return b.dx, b.dy
	}
	return (tx - me.X) / best, (ty - me.Y) / best
}
