// Package game is the arena: players are discs in a walled square, moved by
// inputs with acceleration and a speed cap, colliding with the walls and
// with each other, driven by seeded bots; they shoot a hitscan gun judged
// by lag compensation and fire rockets their clients predict, and push a
// ball their clients predict while near it; every kill reaches every
// client as a game message (the kill feed), and players chat. It shows how
// a game defines components, messages, a replication schema and
// prediction systems on ghostwire, and it is the end-to-end test bed of
// the framework.
package game

import (
	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// Position is a player's centre in arena units.
type Position struct{ X, Y float32 }

// Velocity is in units per second.
type Velocity struct{ X, Y float32 }

// Facing is where a player looks, in radians: its aim.
type Facing struct{ Yaw float32 }

// Health is a player's hit points; at 0 or below the player is dead until
// the server tick Respawn, when it reappears at a spawn point.
type Health struct {
	HP      int16
	Respawn gw.Tick
}

// Alive reports whether the player is alive.
func (h *Health) Alive() bool { return h.HP > 0 }

// Arena constants. The square spans [-HalfSize, HalfSize] on both axes.
const (
	HalfSize     = float32(10)
	Radius       = float32(0.5)
	MaxSpeed     = float32(6)  // units per second
	Acceleration = float32(40) // units per second², toward the wished velocity
	// PushPerTick caps how far collisions shove a player in one tick, so
	// a pile-up cannot fling anyone across the arena.
	PushPerTick = float32(0.1)
)

// MaxStep is the farthest a player can move in one tick at a tick rate:
// running at MaxSpeed plus the largest shove.
func MaxStep(tickRate int) float32 { return MaxSpeed/float32(tickRate) + PushPerTick }

// Wire forms: 1/256 unit for positions and velocities, 2^14 steps per
// turn for the facing, the health in the bits its range needs and the
// respawn tick in 32 bits (its size never grows with uptime).
var (
	coord = netsync.Range(-16, 16, 1.0/256)
	yaw   = netsync.Angle(14)
)

// Serialize is Position's wire form.
func (p *Position) Serialize(s *netsync.Stream) { s.Float(&p.X, coord); s.Float(&p.Y, coord) }

// Serialize is Velocity's wire form.
func (v *Velocity) Serialize(s *netsync.Stream) { s.Float(&v.X, coord); s.Float(&v.Y, coord) }

// Serialize is Facing's wire form.
func (f *Facing) Serialize(s *netsync.Stream) { s.Angle(&f.Yaw, yaw) }

// Serialize is Health's wire form.
func (h *Health) Serialize(s *netsync.Stream) {
	netsync.Int(s, &h.HP, -MaxHP, MaxHP)
	s.Tick(&h.Respawn)
}

// TeleportDistance is how far a player must jump between two ticks for
// interpolation to treat it as a teleport (a respawn): 30 ticks of running.
const TeleportDistance = 3

// Schema is the arena's replication schema: the player, replicating
// Position, Velocity, Facing, Health (server-owned: its client does not
// predict it) and Launcher; the crate, replicating Position and the Crate
// tag; the rocket, Position and Rocket (predicted by its shooter's client
// from the tick it is fired); and the ball, Position, Velocity and the
// Ball tag (interpolated, predicted by a client whose player is near it);
// and two message types, the kill feed's Kill and the Chat. Server and
// clients build it with this same function, so their wire IDs agree.
type Schema struct {
	*netsync.Schema
	Player, Crate, Rocket, Ball netsync.GhostTypeID
}

// NewSchema builds the schema. It errors only if a declaration is wrong,
// which a test of the arena would catch.
func NewSchema() (*Schema, error) { return newSchema(true) }

// newSchema builds the schema, with Health server-owned or, to measure
// what that saves (TestServerOwnedHealthNeverMispredicts), predicted like
// the other components.
func newSchema(healthServerOwned bool) (*Schema, error) {
	var b netsync.SchemaBuilder
	pos := netsync.Component[Position](&b)
	vel := netsync.Component[Velocity](&b)
	facing := netsync.Component[Facing](&b)
	health := netsync.Component[Health](&b)
	b.Interpolate(pos, netsync.Interpolation{
		Distance: netsync.Distance(func(a, b *Position) float32 { return length(b.X-a.X, b.Y-a.Y) }),
		Teleport: TeleportDistance,
	})
	b.Interpolate(facing, netsync.Interpolation{
		Blend: netsync.Lerp(func(a, b *Facing, t float32) Facing { return Facing{Yaw: netsync.LerpAngle(a.Yaw, b.Yaw, t)} }),
	})
	// A respawn (dead, then alive) is a teleport whatever the distance.
	b.Interpolate(health, netsync.Interpolation{Snap: true,
		Distance: netsync.Distance(func(a, b *Health) float32 {
			if !a.Alive() && b.Alive() {
				return 1
			}
			return 0
		}),
	})
	launcher := netsync.Component[Launcher](&b)
	player := b.GhostType("player", pos, vel, facing, health, launcher)
	// Only the server's shots and respawns change Health: the client
	// takes it as it arrives instead of mispredicting every hit. Its
	// prediction reads it (the dead do not move) and never writes it.
	if healthServerOwned {
		b.ServerOwned(player, health)
	}
	crate := b.GhostType("crate", pos, netsync.Component[Crate](&b))
	rocket := b.GhostType("rocket", pos, netsync.Component[Rocket](&b))
	ball := b.GhostType("ball", pos, vel, netsync.Component[Ball](&b))
	netsync.Input[Command](&b, netsync.InputRules[Command]{Validate: ValidateCommand})
	netsync.Message[Kill](&b, KillRules)
	netsync.Message[Chat](&b, ChatRules)
	s, err := b.Build()
	if err != nil {
		return nil, err
	}
	return &Schema{Schema: s, Player: player, Crate: crate, Rocket: rocket, Ball: ball}, nil
}

// SpawnPlayer is the arena's OnConnect: a player with full health, its
// launcher ready, a full magazine (server-only: see Magazine) and its
// hitboxes at the spawn point of its connection.
func (s *Schema) SpawnPlayer(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
	spawn := generic.NewMap7[Position, Velocity, Facing, Health, Launcher, Magazine, components.Hitboxes](w.Arche())
	p, hb := SpawnPoint(conn), PlayerHitboxes()
	return spawn.NewWith(&p, &Velocity{}, &Facing{}, &Health{HP: MaxHP}, &Launcher{Ready: w.Tick()}, &Magazine{Rockets: MagazineSize}, &hb), s.Player, nil
}
