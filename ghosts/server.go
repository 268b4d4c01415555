package ghosts

import (
	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/netsync"
)

// ServerRegister keeps the server's ghosts: which entities replicate, with
// which network ID, type and owner. IDs are assigned in increasing order
// and never reused within a match, so a late packet can never name the
// wrong ghost. The server's endpoint owns it (systems.Server.Ghosts).
type ServerRegister ghostreg.ServerRegister

// Spawn makes e a ghost of type t owned by owner (0: the server) and
// returns its ID. It adds the [components.Ghost] identity and the
// [components.Predicted] marker (the server simulates every ghost in the
// prediction stages) and, for an owned ghost, a [components.InputHeader]
// and the schema's input type, which the server rewrites every tick. It
// errors when e is dead, already a ghost, or lacks a replicated component
// of t (the error names it). It panics if the arche world is locked, like
// any structural change.
func (s *ServerRegister) Spawn(e ecs.Entity, t netsync.GhostTypeID, owner components.ConnID) (components.GhostID, error) {
	return (*ghostreg.ServerRegister)(s).Spawn(e, codec.GhostTypeID(t), owner)
}

// Despawn stops replicating the ghost of entity e (clients despawn it at
// their next complete snapshot) and removes its Ghost component if e is
// alive. It reports whether e was a ghost. Destroying the entity without
// Despawn works too: dead ghosts are dropped at the next snapshot.
func (s *ServerRegister) Despawn(e ecs.Entity) bool {
	return (*ghostreg.ServerRegister)(s).Despawn(e)
}

// Entity returns the entity of ghost id. A ghost whose entity died (or
// lost a replicated component) is not found, even before it is dropped.
func (s *ServerRegister) Entity(id components.GhostID) (ecs.Entity, bool) {
	return (*ghostreg.ServerRegister)(s).Entity(id)
}
