// Package game is the arena: players are discs in a walled square, moved by
// inputs with acceleration and a speed cap, colliding with the walls and
// with each other, driven by seeded bots. It shows how a game defines
// components, a replication schema and prediction systems on ghostwire, and
// it is the end-to-end test bed of the framework.
package game

import (
	"github.com/ghostwire/ghostwire/netsync"
)

// Position is a player's centre in arena units.
type Position struct{ X, Y float32 }

// Velocity is in units per second.
type Velocity struct{ X, Y float32 }

// Arena constants. The square spans [-HalfSize, HalfSize] on both axes.
const (
	HalfSize     = float32(10)
	Radius       = float32(0.5)
	MaxSpeed     = float32(6)  // units per second
	Acceleration = float32(40) // units per second², toward the wished velocity
)

// Wire precision: 1/256 unit for positions and velocities.
var (
	posQuant = mustQuantizer(-16, 16, 1.0/256)
	velQuant = mustQuantizer(-16, 16, 1.0/256)
)

func mustQuantizer(lo, hi, res float32) netsync.Quantizer {
	q, err := netsync.NewQuantizer(lo, hi, res)
	if err != nil {
		panic(err)
	}
	return q
}

// Schema is the arena's replication schema: one ghost type, the player,
// replicating Position and Velocity. Server and clients build it with
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
	player, err := s.AddGhostType("player", pos, vel)
	if err != nil {
		panic(err)
	}
	return &Schema{Schema: s, Player: player}
}
