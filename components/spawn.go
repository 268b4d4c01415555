package components

import "github.com/ghostwire/ghostwire/ecs"

// SpawnGhost asks the endpoint to make its entity a ghost: a projectile,
// a pickup, a unit. A prediction system adds it to the entity it creates
// (with the ghost type's replicated components), the same code on the
// server and on the owner's client:
//
//   - the server spawns the entity as a ghost of Type owned by Owner at
//     the end of the tick's prediction;
//   - the client that owns it predicts it at once, as a predicted spawn
//     (its Ghost has ID 0 until then), and when the server's ghost
//     arrives it takes over this entity instead of spawning another, so
//     nothing pops on screen; a predicted spawn the server never makes is
//     removed after a bound (systems.ClientOptions.SpawnMatchWindow).
//
// A request made while a tick is replayed is dropped with its entity:
// the first prediction of the tick already made it, so a spawning system
// needs no guard of its own. The endpoint removes the component once it
// has taken the request.
type SpawnGhost struct {
	// Type is the ghost type, a netsync.GhostTypeID.
	Type uint16
	// Owner is the connection that owns the ghost (the shooter's,
	// components.Ghost.Owner of the entity that fired); 0 for the server.
	Owner ConnID
}

// Despawned marks a ghost its prediction removed on Tick: a projectile
// that hit a wall. The server removes the ghost at the end of that tick
// (after its StageSimulation, whose systems still see it); a client keeps
// the entity (systems select with .Without, and nothing should draw it)
// until the server's despawn arrives, and takes the mark back if the
// server's state shows the ghost still there after Tick: the client's
// history records the mark, so a rollback undoes it.
type Despawned struct {
	Tick ecs.Tick
}
