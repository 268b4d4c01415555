// Package ghosts names the replicated entities (ghosts) of a match on both
// ends. The server's endpoint keeps a [ServerRegister], where a game
// spawns an entity as a ghost and despawns it; each client's endpoint
// keeps a [ClientRegister], which creates and destroys the local entities
// of the ghosts its snapshots hold. On both ends Entity answers "which
// entity is ghost id here".
//
// Ghosts never touch the network: package systems moves the bytes.
package ghosts
