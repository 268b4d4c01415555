package netsync

import (
	"fmt"
	"github.com/ghostwire/ghostwire/ecs"
	"math"

	"github.com/ghostwire/ghostwire/components"
)

// Input wire precision. Move axes use 127 steps per unit (a signed byte
// without -128), aim 2^16 steps per turn, the view fraction 1/256 tick and
// the interpolation delay 1/16 tick up to MaxInterpolationDelay.
const (
	moveSteps             = 127
	aimBits               = 16
	viewFractionSteps     = 256
	delaySteps            = 16
	delayBits             = 11
	MaxInterpolationDelay = float32((1<<delayBits)-1) / delaySteps // ticks
	MaxInputsPerBatch     = 32
)

var aimQuantizer = mustAngle(aimBits)

func mustAngle(bits int) AngleQuantizer {
	q, err := NewAngleQuantizer(bits)
	if err != nil {
		panic(err)
	}
	return q
}

// QuantizeMove returns the move vector the wire carries for (x, y): longer
// than 1 it is scaled to length 1, then each axis is truncated toward zero
// to 1/127 steps (then shortened by a step if rounding left it longer than
// 1), so the result's length never exceeds 1 and quantizing it again
// changes nothing. NaN or infinite axes give (0, 0).
func QuantizeMove(x, y float32) (float32, float32) {
	if !finite(x) || !finite(y) {
		return 0, 0
	}
	if moveLen2(x, y) > 1 {
		// Divide in float64: a float32 length overflows to +Inf for axes
		// near MaxFloat32, which would zero the vector.
		l := math.Sqrt(moveLen2(x, y))
		x, y = float32(float64(x)/l), float32(float64(y)/l)
	}
	cx, cy := truncCode(x), truncCode(y)
	for moveLen2(float32(cx)/moveSteps, float32(cy)/moveSteps) > 1 {
		if abs(cx) >= abs(cy) {
			cx -= sign(cx)
		} else {
			cy -= sign(cy)
		}
	}
	return float32(cx) / moveSteps, float32(cy) / moveSteps
}

// moveLen2 is the squared length the server checks inputs with.
func moveLen2(x, y float32) float64 { return float64(x)*float64(x) + float64(y)*float64(y) }

// truncCode truncates v·127 toward zero, but snaps values within 1e-4 of a
// whole step to it, so a value already on the grid (c/127 computed in
// float32) maps back to c.
func truncCode(v float32) int64 {
	f := float64(v) * moveSteps
	c := math.Round(f)
	if math.Abs(f-c) > 1e-4 {
		c = math.Trunc(f)
	}
	return int64(max(-moveSteps, min(moveSteps, c)))
}

// moveCode is the wire code of an axis already on the grid.
func moveCode(v float32) int64 { return truncCode(v) }

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int64) int64 {
	if v < 0 {
		return -1
	}
	return 1
}

func finite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// QuantizeInput rounds every field of c to what the wire carries. A client
// predicts with the quantized command, so it simulates exactly what the
// server will; quantizing twice changes nothing. Non-finite values become
// 0.
func QuantizeInput(c *components.InputCommand) {
	c.MoveX, c.MoveY = QuantizeMove(c.MoveX, c.MoveY)
	if !finite(c.Aim) {
		c.Aim = 0
	}
	c.Aim = aimQuantizer.Quantize(c.Aim)
	// Without a view tick the wire carries no fraction and no delay.
	if !finite(c.ViewFraction) || c.ViewFraction < 0 || c.ViewTick == 0 {
		c.ViewFraction = 0
	}
	// Clamp before converting: float-to-int conversion of a value too large
	// for int is implementation-defined (a huge negative on amd64).
	c.ViewFraction = float32(min(viewFractionSteps-1, int(min(c.ViewFraction, 1)*viewFractionSteps))) / viewFractionSteps
	if !finite(c.InterpolationDelay) || c.InterpolationDelay < 0 || c.ViewTick == 0 {
		c.InterpolationDelay = 0
	}
	c.InterpolationDelay = float32(min((1<<delayBits)-1, int(min(c.InterpolationDelay, MaxInterpolationDelay)*delaySteps+0.5))) / delaySteps
	for _, o := range []*float32{&c.OriginX, &c.OriginY, &c.OriginZ} {
		if !finite(*o) || *o == 0 { // -0 too: an all-zero origin is not sent, and decodes as +0
			*o = 0
		}
	}
}

// writeInput encodes c after prev (the previous input of the batch, or a
// zero command), sending only what changed.
func writeInput(w *BitWriter, c, prev *components.InputCommand) {
	if c.Buttons == prev.Buttons {
		w.WriteBool(false)
	} else {
		w.WriteBool(true)
		w.WriteUvarint(uint64(c.Buttons))
	}
	if c.MoveX == prev.MoveX && c.MoveY == prev.MoveY {
		w.WriteBool(false)
	} else {
		w.WriteBool(true)
		w.WriteBits(uint64(moveCode(c.MoveX)+moveSteps), 8)
		w.WriteBits(uint64(moveCode(c.MoveY)+moveSteps), 8)
	}
	if c.Aim == prev.Aim {
		w.WriteBool(false)
	} else {
		w.WriteBool(true)
		aimQuantizer.Write(w, c.Aim)
	}
	// The view tick usually keeps its distance to the input's tick and the
	// delay its value: one bit each then.
	if c.ViewTick == 0 {
		w.WriteBool(false)
	} else {
		w.WriteBool(true)
		d := int64(c.Tick.Sub(c.ViewTick))
		if prev.ViewTick != 0 && d == int64(prev.Tick.Sub(prev.ViewTick)) {
			w.WriteBool(true)
		} else {
			w.WriteBool(false)
			w.WriteVarint(d)
		}
		w.WriteBits(uint64(c.ViewFraction*viewFractionSteps), 8)
		if prev.ViewTick != 0 && c.InterpolationDelay == prev.InterpolationDelay {
			w.WriteBool(true)
		} else {
			w.WriteBool(false)
			w.WriteBits(uint64(c.InterpolationDelay*delaySteps), delayBits)
		}
	}
	if c.OriginX == 0 && c.OriginY == 0 && c.OriginZ == 0 {
		w.WriteBool(false)
	} else {
		w.WriteBool(true)
		w.WriteFloat32(c.OriginX)
		w.WriteFloat32(c.OriginY)
		w.WriteFloat32(c.OriginZ)
	}
}

// readInput decodes what writeInput wrote. It refuses out-of-range codes
// and non-finite origins; a move vector longer than 1 is returned as sent
// (the InputBuffer clamps and counts it).
func readInput(r *BitReader, c, prev *components.InputCommand, tick ecs.Tick) error {
	*c = components.InputCommand{Tick: tick, Buttons: prev.Buttons, MoveX: prev.MoveX, MoveY: prev.MoveY, Aim: prev.Aim}
	if changed, _ := r.ReadBool(); changed {
		b, _ := r.ReadUvarint()
		if b > math.MaxUint32 {
			return fmt.Errorf("netsync: input buttons %d outside 0..%d: %w", b, uint32(math.MaxUint32), ErrOutOfRange)
		}
		c.Buttons = uint32(b)
	}
	if changed, _ := r.ReadBool(); changed {
		x, _ := r.ReadBits(8)
		y, err := r.ReadBits(8)
		if err != nil {
			return err
		}
		if x > 2*moveSteps || y > 2*moveSteps {
			return fmt.Errorf("netsync: input move code (%d, %d) outside 0..%d: %w", x, y, 2*moveSteps, ErrOutOfRange)
		}
		c.MoveX = float32(int64(x)-moveSteps) / moveSteps
		c.MoveY = float32(int64(y)-moveSteps) / moveSteps
	}
	if changed, _ := r.ReadBool(); changed {
		a, err := aimQuantizer.Read(r)
		if err != nil {
			return err
		}
		c.Aim = a
	}
	if has, _ := r.ReadBool(); has {
		var d int64
		if same, _ := r.ReadBool(); same && prev.ViewTick != 0 {
			d = int64(prev.Tick.Sub(prev.ViewTick))
		} else if same {
			return fmt.Errorf("netsync: input view tick repeats a previous one that has none: %w", ErrMalformed)
		} else {
			d, _ = r.ReadVarint()
		}
		frac, _ := r.ReadBits(8)
		delay := uint64(prev.InterpolationDelay * delaySteps)
		sameDelay, err := r.ReadBool()
		if err != nil {
			return err
		}
		if sameDelay && prev.ViewTick == 0 {
			return fmt.Errorf("netsync: input delay repeats a previous one that has none: %w", ErrMalformed)
		}
		if !sameDelay {
			if delay, err = r.ReadBits(delayBits); err != nil {
				return err
			}
		}
		// A view is in the past of the input, by less than a window no
		// game rewinds (2^20 ticks is over 4 hours at 60 Hz).
		if d < 0 || d >= 1<<20 {
			return fmt.Errorf("netsync: input view tick %d ticks before the input's tick %d, outside 0..%d: %w", d, tick, 1<<20-1, ErrOutOfRange)
		}
		c.ViewTick = tick.Add(-int(d))
		c.ViewFraction = float32(frac) / viewFractionSteps
		c.InterpolationDelay = float32(delay) / delaySteps
	}
	if has, _ := r.ReadBool(); has {
		c.OriginX, _ = r.ReadFloat32()
		c.OriginY, _ = r.ReadFloat32()
		z, err := r.ReadFloat32()
		if err != nil {
			return err
		}
		c.OriginZ = z
		if !finite(c.OriginX) || !finite(c.OriginY) || !finite(c.OriginZ) {
			return fmt.Errorf("netsync: input origin (%v, %v, %v) is not finite: %w", c.OriginX, c.OriginY, c.OriginZ, ErrOutOfRange)
		}
	}
	return r.Err()
}
