package components

import "github.com/ghostwire/ghostwire/ecs"

// InputCommand is what one player did on one tick. Clients sample it from
// devices once per tick (systems never read devices) and send the newest
// few; the server applies exactly one per player per tick. It sits on the
// ghost(s) the player owns, rewritten before every predicted tick, replays
// included, so prediction systems read it like any other component.
//
// On the wire, Move is quantized to 1/127 per axis, Aim to 2^16 steps per
// turn, ViewFraction to 1/256 tick, InterpolationDelay to 1/16 tick and
// Origin like a position; a client predicts with the quantized values, so
// it simulates exactly what the server will.
type InputCommand struct {
	// Tick is the tick this input is for.
	Tick ecs.Tick
	// Buttons is a game-defined bit set (fire, jump, ...).
	Buttons uint32
	// MoveX and MoveY are the move axes; the vector's length is at most 1
	// (the server clamps longer vectors and refuses NaN or infinities).
	MoveX, MoveY float32
	// Aim is the view yaw in radians, in [-π, π).
	Aim float32
	// ViewTick and ViewFraction are the server tick the player saw on
	// screen (interpolated remote ghosts), for lag compensation; 0 when
	// not set.
	ViewTick     ecs.Tick
	ViewFraction float32
	// InterpolationDelay is the delay in ticks the client rendered remote
	// ghosts with when it sampled this input.
	InterpolationDelay float32
	// OriginX, OriginY and OriginZ are where the player claims an action
	// (a shot) started; the server checks the claim.
	OriginX, OriginY, OriginZ float32
}

// Moving reports whether the move vector is not zero.
func (c *InputCommand) Moving() bool { return c.MoveX != 0 || c.MoveY != 0 }

// Pressed reports whether all buttons of mask are down.
func (c *InputCommand) Pressed(mask uint32) bool { return c.Buttons&mask == mask }

// Press is an input event that must count exactly once, such as a jump or
// a shot: a field of a game's input type, coded with netsync's
// Stream.Press. The framework keeps a press that falls between two ticks
// for the next tick, applies a press whose packet was lost exactly once
// (late rather than never), and never repeats it when it substitutes a
// missing input. Its value is 1 on the tick it was pressed, else 0.
type Press uint8

// Pressed reports whether the event happened on this tick.
func (p Press) Pressed() bool { return p != 0 }
