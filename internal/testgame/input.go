package testgame

import (
	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/netsync"
)

// Drive is the test game's input: what a driver did on one tick.
type Drive struct {
	// Steer turns left (positive) or right, in -1..1.
	Steer float32
	// Throttle accelerates forward (positive) or in reverse, in -1..1.
	Throttle float32
	// Brake slows the car toward a stop, in 0..1.
	Brake float32
	// Handbrake is pulled on this tick: the car stops dead and its
	// Counters.Handbrakes counts one more.
	Handbrake components.Press
}

// axis is the wire form of Drive's axes: 1/64 steps over -2..2. The wire
// leaves room beyond the allowed ranges so that an out-of-range value (a
// badly calibrated pad, a hostile client) reaches ValidateDrive and is
// counted as clamped rather than silently cut by the quantizer.
var axis = netsync.Range(-2, 2, 1.0/64)

// Serialize is Drive's wire form.
func (d *Drive) Serialize(s *netsync.Stream) {
	s.Float(&d.Steer, axis)
	s.Float(&d.Throttle, axis)
	s.Float(&d.Brake, axis)
	s.Press(&d.Handbrake)
}

// ValidateDrive is the test game's input rule: Steer and Throttle are
// clamped to -1..1 and Brake to 0..1 (clamped reports a change). The
// bounds lie on the wire's grid, so a clamped input travels unchanged and
// validates again as it is. It never refuses.
func ValidateDrive(d *Drive) (clamped bool, refuse string) {
	s, t, b := clamp(d.Steer, -1, 1), clamp(d.Throttle, -1, 1), clamp(d.Brake, 0, 1)
	clamped = s != d.Steer || t != d.Throttle || b != d.Brake
	d.Steer, d.Throttle, d.Brake = s, t, b
	return clamped, ""
}

// Rules are the test game's input rules: ValidateDrive, and the previous
// input repeated (without its press) for a tick whose input is missing.
var Rules = netsync.InputRules[Drive]{Validate: ValidateDrive, Missing: netsync.MissingRepeatLast}

func clamp(v, lo, hi float32) float32 { return min(max(v, lo), hi) }
