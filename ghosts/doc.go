// Package ghosts keeps the books of replicated entities (ghosts) on both
// ends: a [Binding] maps the shared [netsync.Schema] onto one world's arche
// component IDs; a [ServerRegister] assigns ghost IDs, quantizes ghost state at the
// end of each tick and writes snapshots; a [ClientRegister] maps ghost IDs to local
// entities, spawns and despawns them from snapshots, and decides by
// ownership whether a ghost is predicted (its owner) or interpolated
// (everyone else).
//
// Ghosts never touch the network: package systems moves the bytes.
package ghosts
