package ghosts

import (
	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
)

// ClientRegister maps ghost IDs to a client's local entities, which it
// creates and destroys from snapshots. The ghosts the client predicts
// carry [components.Predicted], and those its connection owns among them
// [components.InputHeader] and the game's input type too, as on the
// server; all others are [components.Interpolated]: a game finds its own
// and its predicted ghosts with ordinary queries. The client's endpoint
// owns it (systems.Client.Ghosts).
type ClientRegister ghostreg.ClientRegister

// Entity returns the local entity of ghost id. A ghost whose entity the
// game destroyed is forgotten (and spawned again by the next snapshot).
func (c *ClientRegister) Entity(id components.GhostID) (ecs.Entity, bool) {
	return (*ghostreg.ClientRegister)(c).Entity(id)
}
