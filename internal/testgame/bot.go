package testgame

import (
	"math/rand/v2"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// Bot drives a car from a seeded random source: it holds a steer, throttle
// and brake for half a second to two seconds, then picks new ones, and
// pulls the handbrake now and then. Its steer sometimes overshoots -1..1,
// as a badly calibrated pad does, so ValidateDrive has something to
// clamp. From tick StopAt on it lets go of everything, so a match can
// settle and its clients be compared with the server. It is sampled once
// per tick, never in replay, so its fields may hold state.
type Bot struct {
	rng    *rand.Rand
	stopAt gw.Tick
	drive  Drive
	until  gw.Tick
	begun  bool
	// Pulls counts the handbrake pulls the bot sampled.
	Pulls uint64
	// Overshoots counts the sampled inputs whose steer lay outside -1..1.
	Overshoots uint64
}

// NewBot returns a bot with its own seed that lets go at tick stopAt.
func NewBot(seed uint64, stopAt gw.Tick) *Bot {
	return &Bot{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), stopAt: stopAt}
}

// Input samples the bot's input for a tick.
func (b *Bot) Input(_ *gw.World, tick gw.Tick) Drive {
	if !tick.Before(b.stopAt) {
		return Drive{}
	}
	if !b.begun || !tick.Before(b.until) {
		b.begun = true
		b.until = tick.Add(30 + b.rng.IntN(90))
		b.drive = Drive{
			Steer:    b.rng.Float32()*2.5 - 1.25,
			Throttle: b.rng.Float32()*1.5 - 0.5,
		}
		if b.rng.IntN(4) == 0 {
			b.drive.Brake = b.rng.Float32()
		}
	}
	d := b.drive
	if b.rng.IntN(90) == 0 {
		d.Handbrake = 1
		b.Pulls++
	}
	if d.Steer < -1 || d.Steer > 1 {
		b.Overshoots++
	}
	return d
}

// Source returns the bot as a client's input source.
func (b *Bot) Source() *systems.InputSource { return systems.InputFunc(b.Input) }
