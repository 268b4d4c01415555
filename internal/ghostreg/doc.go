// Package ghostreg keeps the books of replicated entities (ghosts) on both
// ends: a [Binding] maps the shared schema onto one world's arche
// component IDs; a [ServerRegister] assigns ghost IDs, quantizes ghost
// state at the end of each tick and writes snapshots; a [ClientRegister]
// maps ghost IDs to local entities, spawns and despawns them from
// snapshots, and decides by ownership and prediction mode whether a ghost
// is predicted or interpolated; an [Interpolator] shows the others.
// Package ghosts exposes what a game calls of the registers.
package ghostreg
