package components

import "github.com/ghostwire/ghostwire/ecs"

// GhostID is the network identity of a ghost, assigned by the server and
// the same on every client. 0 means none.
type GhostID uint32

// ConnID identifies a connection on the server. 0 means none (the server
// itself owns the ghost).
//
// A server never gives two live connections the same ID and never gives
// out 0; 32 bits last a server's lifetime (4 billion connections), and
// past them it skips the IDs still in use.
type ConnID uint32

// Ghost marks an entity replicated from the server to clients.
type Ghost struct {
	ID GhostID
	// Type indexes the ghost types of the shared schema: it says which
	// components replicate.
	Type uint16
	// Owner is the connection whose player controls the ghost; its client
	// predicts it, the others interpolate it, unless the ghost type's
	// prediction mode says otherwise (netsync.PredictionMode).
	Owner ConnID
	// Spawned is the server tick the ghost was created on.
	Spawned ecs.Tick
}

// Interpolated marks a ghost a client shows from received states without
// simulating it (the ghosts it does not predict). It never carries
// [Predicted]. The interpolation system rewrites it every frame the ghost
// moves; a ghost the server said rests, once shown at rest, is not written
// at all until it moves again (a frame costs the moving ghosts, not all).
type Interpolated struct {
	// Tick is the render tick the ghost's components were blended for, a
	// continuous tick: it counts on past 2³² instead of wrapping
	// (ecs.TickAt splits it into a tick and a fraction). For a ghost at
	// rest it is the frame it came to rest on; the client's render tick
	// is systems.ClientStats.RenderTick.
	Tick float64
	// Extrapolated is true when the ghost is shown past its newest
	// received state (extrapolated, or held at the cap).
	Extrapolated bool
	// Teleported is true on the frame a teleport made the ghost jump
	// instead of blending.
	Teleported bool
}
