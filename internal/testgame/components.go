package testgame

import "github.com/ghostwire/ghostwire/netsync"

// Body is a car's physical state: its position on the plane, where it
// points (radians) and its signed speed along that heading (units per
// second, negative when reversing).
type Body struct {
	X, Y    float32
	Heading float32
	Speed   float32
}

// Counters holds what a car has done, replicated: Handbrakes counts the
// handbrake pulls applied to it, so a test can check that a press counts
// exactly once, on the server and in prediction. It wraps after 65535
// pulls.
type Counters struct {
	Handbrakes uint16
}

// Vehicle tags an entity as a car. It has no fields and an empty wire
// form; it is declared last in the car's ghost type on purpose, so the
// framework's tests cover a zero-size component at the end of a ghost.
type Vehicle struct{}

// Cone is a cone a car drops where it pulls the handbrake: a ghost its
// driver's client predicts the spawn of (components.SpawnGhost), which
// stands ConeLife ticks and then ends, a predicted despawn.
type Cone struct {
	X, Y float32
	Life uint16 // ticks left
}

// ConeLife is how long a cone stands: two seconds.
const ConeLife = 2 * TickRate

// Wire forms: positions in 1/128 unit over the plane, the heading in 2^14
// steps per turn, the speed in 1/256 unit per second over its range.
var (
	coord   = netsync.Range(-HalfSize, HalfSize, 1.0/128)
	heading = netsync.Angle(14)
	speed   = netsync.Range(-MaxReverse, MaxSpeed, 1.0/256)
)

// Serialize is Body's wire form.
func (b *Body) Serialize(s *netsync.Stream) {
	s.Float(&b.X, coord)
	s.Float(&b.Y, coord)
	s.Angle(&b.Heading, heading)
	s.Float(&b.Speed, speed)
}

// Serialize is Counters' wire form: the full 16 bits.
func (c *Counters) Serialize(s *netsync.Stream) { netsync.Int(s, &c.Handbrakes, 0, 65535) }

// Serialize is Vehicle's wire form: nothing.
func (*Vehicle) Serialize(*netsync.Stream) {}

// Serialize is Cone's wire form.
func (c *Cone) Serialize(s *netsync.Stream) {
	s.Float(&c.X, coord)
	s.Float(&c.Y, coord)
	netsync.Int(s, &c.Life, 0, ConeLife)
}
