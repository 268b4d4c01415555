package testgame

import (
	"math"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// Schema is the test game's replication schema: the car, replicating
// Body, Counters and Vehicle (zero-size, last), and the cone, with Drive
// as the input type, and the messages Honk and Honks. Server and clients
// build it with NewSchema, so their wire IDs agree.
type Schema struct {
	*netsync.Schema
	Car, Cone               netsync.GhostTypeID
	Body, Counters, Vehicle netsync.ComponentID
	Honk, Honks             netsync.MessageID
}

// NewSchema builds the schema. It errors only if a declaration is wrong,
// which the package's tests catch.
func NewSchema() (*Schema, error) {
	var b netsync.SchemaBuilder
	body := netsync.Component[Body](&b)
	counters := netsync.Component[Counters](&b)
	vehicle := netsync.Component[Vehicle](&b)
	b.Interpolate(body, netsync.Interpolation{
		Blend: netsync.Lerp(func(a, b *Body, t float32) Body {
			return Body{X: netsync.LerpFloat(a.X, b.X, t), Y: netsync.LerpFloat(a.Y, b.Y, t),
				Heading: netsync.LerpAngle(a.Heading, b.Heading, t), Speed: netsync.LerpFloat(a.Speed, b.Speed, t)}
		}),
		Distance: netsync.Distance(func(a, b *Body) float32 {
			return float32(math.Hypot(float64(b.X-a.X), float64(b.Y-a.Y)))
		}),
		Teleport: TeleportDistance,
	})
	b.Interpolate(counters, netsync.Interpolation{Snap: true})
	car := b.GhostType("car", body, counters, vehicle)
	cone := b.GhostType("cone", netsync.Component[Cone](&b))
	netsync.Input[Drive](&b, Rules)
	honk := netsync.Message[Honk](&b, honkRules)
	honks := netsync.Message[Honks](&b, honksRules)
	s, err := b.Build()
	if err != nil {
		return nil, err
	}
	return &Schema{Schema: s, Car: car, Cone: cone, Body: body, Counters: counters, Vehicle: vehicle, Honk: honk, Honks: honks}, nil
}

// Spawn is the server's OnConnect: a standing car for each connection,
// placed on a grid by its ID so that cars start apart.
func (s *Schema) Spawn(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
	m := generic.NewMap3[Body, Counters, Vehicle](w.Arche())
	i := int(conn) % 16
	start := Body{X: float32(i%4)*32 - 48, Y: float32(i/4)*32 - 48, Heading: float32(i) * math.Pi / 8}
	return m.NewWith(&start, &Counters{}, &Vehicle{}), s.Car, nil
}
