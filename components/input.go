package components

import "github.com/ghostwire/ghostwire/ecs"

// InputHeader is the framework's part of a player's input for one tick,
// beside the game's own input type (declared in the schema with
// netsync.Input). Both sit on the ghosts the player owns and are rewritten
// before every predicted tick, replays included, so prediction systems
// read them like any other component; the game's fields are its own, the
// framework never looks inside them.
type InputHeader struct {
	// Tick is the tick this input is for.
	Tick ecs.Tick
	// HasView is true when the client showed remote ghosts as it sampled
	// the input: then ViewTick and ViewFraction are the server tick it
	// showed (interpolated remote ghosts), which lag compensation rewinds
	// to, and InterpolationDelay the delay in ticks it showed them with.
	// On the wire the fraction is quantized to 1/256 tick and the delay to
	// 1/16 tick.
	HasView            bool
	ViewTick           ecs.Tick
	ViewFraction       float32
	InterpolationDelay float32
	// MaxViewAge is the server's, never sent: the oldest view, in ticks
	// before Tick, that what the server measured of the connection
	// explains (its round trip and jitter, when the input arrived, the
	// interpolation delay claimed within the allowed bounds, a tolerance;
	// docs/lagcomp.md). Lag compensation refuses an older view claim. 0 on
	// clients.
	MaxViewAge float32
	// Acked is the server's, never sent: the newest snapshot tick the
	// client had acknowledged when this input first arrived (what it
	// could know of its own state); 0 when none, and on clients.
	Acked ecs.Tick
}

// Press is an input event that must count exactly once, such as a jump or
// a shot: a field of a game's input type, coded with netsync's
// Stream.Press. The framework keeps a press that falls between two ticks
// for the next tick (see systems.Latch), applies a press whose packets
// were all lost exactly once (on the first tick after it arrives), and
// never repeats it when it substitutes a missing input. Its value is 1 on
// the tick it was pressed, else 0.
type Press uint8

// Pressed reports whether the event happened on this tick.
func (p Press) Pressed() bool { return p != 0 }
