package testgame

import (
	"math"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// Physics constants, per second at TickRate ticks per second. The plane
// spans [-HalfSize, HalfSize) on both axes and wraps around.
const (
	TickRate   = 60
	HalfSize   = float32(256)
	MaxSpeed   = float32(20) // units per second, forward
	MaxReverse = float32(6)  // units per second, reversing
	Accel      = float32(12) // units per second², full throttle
	BrakeDecel = float32(30) // units per second², full brake
	// Coast is the deceleration without throttle, so a car left alone
	// stops within two seconds and a settled match stands still.
	Coast    = float32(10)
	TurnRate = float32(2.5) // radians per second at full steer and grip
	// GripSpeed is the speed at which steering reaches its full rate: a
	// standing car does not turn.
	GripSpeed = float32(4)
	// TeleportDistance is how far a car must jump between two ticks for
	// interpolation to snap rather than blend: crossing the plane's edge.
	TeleportDistance = float32(8)
)

const dt = float32(1) / TickRate

// Step advances one car by one tick under input d: the handbrake, if
// pulled, stops it and counts in c; then it steers, accelerates or coasts,
// brakes, and moves, wrapping at the plane's edges. It is the prediction
// system's body, deterministic: the same inputs give the same bits.
func Step(b *Body, c *Counters, d *Drive) {
	if d.Handbrake.Pressed() {
		b.Speed = 0
		c.Handbrakes++
	}
	grip := clamp(b.Speed/GripSpeed, -1, 1)
	// Products are rounded before they are added (float32(…)), so no CPU
	// fuses them into a multiply-add that rounds once.
	b.Heading += float32(d.Steer * TurnRate * grip * dt)
	if d.Throttle != 0 {
		b.Speed += float32(d.Throttle * Accel * dt)
	} else {
		b.Speed = toward0(b.Speed, Coast*dt)
	}
	b.Speed = clamp(toward0(b.Speed, d.Brake*BrakeDecel*dt), -MaxReverse, MaxSpeed)
	sin, cos := math.Sincos(float64(b.Heading))
	b.X = wrap(b.X + float32(float32(cos)*b.Speed*dt))
	b.Y = wrap(b.Y + float32(float32(sin)*b.Speed*dt))
}

// toward0 moves v toward 0 by d, stopping at 0.
func toward0(v, d float32) float32 {
	switch {
	case v > d:
		return v - d
	case v < -d:
		return v + d
	}
	return 0
}

// wrap folds a coordinate back onto [-HalfSize, HalfSize).
func wrap(v float32) float32 {
	switch {
	case v >= HalfSize:
		return v - 2*HalfSize
	case v < -HalfSize:
		return v + 2*HalfSize
	}
	return v
}

// DriveSystem returns the prediction system: Step for every predicted
// car with its tick's input. Server and client add the same one to
// StagePrediction.
func DriveSystem() gw.System {
	cars := generic.NewFilter3[Body, Counters, Drive]().With(generic.T[components.Predicted]())
	return gw.SystemFunc(func(w *gw.World) {
		q := cars.Query(w.Arche())
		for q.Next() {
			Step(q.Get())
		}
	})
}

// ConeSystem returns the cones' prediction system for one world: a car
// whose handbrake is pulled drops a cone where it stopped, a ghost its
// owner's client predicts the spawn of; a cone counts its life down and
// ends at 0 (components.Despawned), on the server and in prediction
// alike.
func (s *Schema) ConeSystem(w *gw.World) gw.System {
	a := w.Arche()
	cars := generic.NewFilter3[Body, Drive, components.Ghost]().With(generic.T[components.Predicted]())
	cones := generic.NewFilter1[Cone]().With(generic.T[components.Predicted]()).Without(generic.T[components.Despawned]())
	coneID, spawnID, goneID := ecs.ComponentID[Cone](a), ecs.ComponentID[components.SpawnGhost](a), ecs.ComponentID[components.Despawned](a)
	return gw.SystemFunc(func(w *gw.World) {
		q := cones.Query(w.Arche())
		for q.Next() {
			c := q.Get()
			if c.Life--; c.Life == 0 {
				w.Commands().Add(q.Entity(), ecs.Component{ID: goneID, Comp: &components.Despawned{Tick: w.Tick()}})
			}
		}
		cq := cars.Query(w.Arche())
		for cq.Next() {
			b, d, g := cq.Get()
			if d.Handbrake.Pressed() {
				w.Commands().Spawn(nil, ecs.Component{ID: coneID, Comp: &Cone{X: b.X, Y: b.Y, Life: ConeLife}},
					ecs.Component{ID: spawnID, Comp: &components.SpawnGhost{Type: uint16(s.Cone), Owner: g.Owner}})
			}
		}
	})
}
