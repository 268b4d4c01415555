package game

import (
	"math"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// Command is the arena's input: what a player did on one tick. It is the
// game's own type; ghostwire carries it beside its header (tick, view)
// without looking inside.
type Command struct {
	// MoveX and MoveY are the move axes; the vector's length is at most 1
	// (Validate clamps longer ones).
	MoveX, MoveY float32
	// Aim is the view yaw in radians.
	Aim float32
	// Fire is the trigger: pressed on the tick of the shot.
	Fire components.Press
	// Rocket is the launcher's trigger: pressed on the tick a rocket is
	// fired toward Aim (RocketSystem). Rockets are simulated, not judged
	// by lag compensation: Shot and the origin are the hitscan gun's.
	Rocket components.Press
	// Shot, OriginX and OriginY describe the player's latest shot: the
	// tick it was fired on, modulo 256 (shotCode; 8 bits on the wire, and
	// the server looks 64 ticks back at most), and where the player claims
	// it started (the server checks the claim; Aim is its direction).
	// Every command carries them until the next shot, so a shot whose
	// input arrived after its tick ran, whose press the server applies on
	// a later tick (components.Press), is still judged as fired: on its
	// tick, from its origin (ShotSystem).
	Shot             float32
	OriginX, OriginY float32
}

// Moving reports whether the move vector is not zero.
func (c *Command) Moving() bool { return c.MoveX != 0 || c.MoveY != 0 }

// Wire forms: move axes in 1/127 steps, aim in 2^16 steps per turn, the
// origin like a position.
var (
	axis = netsync.Range(-1, 1, 1.0/127)
	aim  = netsync.Angle(16)
)

// Serialize is Command's wire form.
func (c *Command) Serialize(s *netsync.Stream) {
	s.Float(&c.MoveX, axis)
	s.Float(&c.MoveY, axis)
	s.Angle(&c.Aim, aim)
	s.Press(&c.Fire)
	s.Press(&c.Rocket)
	s.Float(&c.OriginX, coord)
	s.Float(&c.OriginY, coord)
	s.Float(&c.Shot, shotMod)
}

// ShotFrom notes in c a shot fired on tick from (x, y): what every later
// command repeats (copy Shot, OriginX and OriginY) until the next shot.
func (c *Command) ShotFrom(tick gw.Tick, x, y float32) {
	c.Shot, c.OriginX, c.OriginY = shotCode(tick), x, y
}

// shotMod codes a shot's tick modulo 256 in 8 bits.
var shotMod = netsync.Range(0, 255, 1)

// shotCode is Command.Shot for a shot fired on tick.
func shotCode(tick gw.Tick) float32 { return float32(uint32(tick) % 256) }

// shotTick is the latest tick at or before at whose shotCode is code.
func shotTick(code float32, at gw.Tick) gw.Tick {
	return at.Add(-int((uint32(at) - uint32(code)) % 256))
}

// moveSteps is the move axes' grid: 1/127 per step.
const moveSteps = 127

// ValidateCommand is the arena's input rule: a move vector longer than 1
// is scaled to length 1 and put back on the wire's grid, truncated toward
// zero so its length stays at most 1 (clamped).
func ValidateCommand(c *Command) (clamped bool, refuse string) {
	x, y := clampMove(c.MoveX, c.MoveY)
	clamped = x != c.MoveX || y != c.MoveY
	c.MoveX, c.MoveY = x, y
	return clamped, ""
}

// clampMove returns (x, y) when its length is at most 1, else the vector
// scaled to length 1 with each axis truncated toward zero to the wire's
// grid (then shortened by a step while rounding left it longer than 1).
// The result is on the grid, so the wire carries it unchanged and the
// server, validating it again, leaves it as it is.
func clampMove(x, y float32) (float32, float32) {
	if moveLen2(x, y) <= 1 {
		return x, y
	}
	l := math.Sqrt(moveLen2(x, y))
	cx := int64(math.Trunc(float64(x) / l * moveSteps))
	cy := int64(math.Trunc(float64(y) / l * moveSteps))
	grid := func(c int64) float32 { return axis.Quantize(float32(c) / moveSteps) }
	for moveLen2(grid(cx), grid(cy)) > 1 {
		if abs64(cx) >= abs64(cy) {
			cx -= sign64(cx)
		} else {
			cy -= sign64(cy)
		}
	}
	return grid(cx), grid(cy)
}

func moveLen2(x, y float32) float64 { return float64(x)*float64(x) + float64(y)*float64(y) }

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func sign64(v int64) int64 {
	if v < 0 {
		return -1
	}
	return 1
}
