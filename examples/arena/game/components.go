// Package game is the arena: players are discs in a walled square, moved by
// inputs with acceleration and a speed cap, colliding with the walls and
// with each other, driven by seeded bots. It shows how a game defines
// components, a replication schema and prediction systems on ghostwire, and
// it is the end-to-end test bed of the framework.
package game

import (
	"fmt"
	gw "github.com/ghostwire/ghostwire/ecs"
	"math"

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

// Wire precision: 1/256 unit for positions and velocities, 2^14 steps
// per turn for the facing.
var (
	posQuant = mustQuantizer(-16, 16, 1.0/256)
	velQuant = mustQuantizer(-16, 16, 1.0/256)
	yawQuant = mustAngle(14)
)

func mustAngle(bits int) netsync.AngleQuantizer {
	q, err := netsync.NewAngleQuantizer(bits)
	if err != nil {
		panic(err)
	}
	return q
}

// TeleportDistance is how far a player must jump between two ticks for
// interpolation to treat it as a teleport (a respawn): 30 ticks of running.
const TeleportDistance = 3

func mustQuantizer(lo, hi, res float32) netsync.Quantizer {
	q, err := netsync.NewQuantizer(lo, hi, res)
	if err != nil {
		panic(err)
	}
	return q
}

// Schema is the arena's replication schema: one ghost type, the player,
// replicating Position, Velocity, Facing and Health. Server and clients build it with
// this same function, so their wire IDs agree.
type Schema struct {
	*netsync.Schema
	Player netsync.GhostTypeID
}

// NewSchema builds the schema.
func NewSchema() *Schema {
	s := netsync.NewSchema()
	pos, err := s.AddComponent(netsync.NewCodec(
		func(w *netsync.BitWriter, p *Position) { posQuant.Write(w, p.X); posQuant.Write(w, p.Y) },
		func(r *netsync.BitReader, p *Position) error {
			x, _ := posQuant.Read(r)
			y, err := posQuant.Read(r)
			p.X, p.Y = x, y
			return err
		}))
	if err != nil {
		panic(err)
	}
	vel, err := s.AddComponent(netsync.NewCodec(
		func(w *netsync.BitWriter, v *Velocity) { velQuant.Write(w, v.X); velQuant.Write(w, v.Y) },
		func(r *netsync.BitReader, v *Velocity) error {
			x, _ := velQuant.Read(r)
			y, err := velQuant.Read(r)
			v.X, v.Y = x, y
			return err
		}))
	if err != nil {
		panic(err)
	}
	facing, err := s.AddComponent(netsync.NewCodec(
		func(w *netsync.BitWriter, f *Facing) { yawQuant.Write(w, f.Yaw) },
		func(r *netsync.BitReader, f *Facing) (err error) { f.Yaw, err = yawQuant.Read(r); return err }))
	if err != nil {
		panic(err)
	}
	health, err := s.AddComponent(netsync.NewCodec(
		func(w *netsync.BitWriter, h *Health) { w.WriteVarint(int64(h.HP)); w.WriteUvarint(uint64(h.Respawn)) },
		func(r *netsync.BitReader, h *Health) error {
			hp, _ := r.ReadVarint()
			at, err := r.ReadUvarint()
			if err != nil {
				return err
			}
			if hp < -MaxHP || hp > MaxHP || at > math.MaxUint32 {
				return fmt.Errorf("arena: health %d outside ±%d or respawn tick %d beyond uint32: %w", hp, MaxHP, at, netsync.ErrOutOfRange)
			}
			h.HP, h.Respawn = int16(hp), gw.Tick(at)
			return nil
		}))
	if err != nil {
		panic(err)
	}
	must(s.SetInterpolation(pos, netsync.Interpolation{
		Distance: netsync.Distance(func(a, b *Position) float32 { return length(b.X-a.X, b.Y-a.Y) }),
		Teleport: TeleportDistance,
	}))
	must(s.SetInterpolation(facing, netsync.Interpolation{
		Blend: netsync.Lerp(func(a, b *Facing, t float32) Facing { return Facing{Yaw: netsync.LerpAngle(a.Yaw, b.Yaw, t)} }),
	}))
	// A respawn (dead, then alive) is a teleport whatever the distance.
	must(s.SetInterpolation(health, netsync.Interpolation{Snap: true,
		Distance: netsync.Distance(func(a, b *Health) float32 {
			if !a.Alive() && b.Alive() {
				return 1
			}
			return 0
		}),
	}))
	player, err := s.AddGhostType("player", pos, vel, facing, health)
	if err != nil {
		panic(err)
	}
	return &Schema{Schema: s, Player: player}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
