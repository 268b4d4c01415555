// Package components holds ghostwire's own plain-data components: the markers
// and small records the netcode needs on entities (which entities are
// predicted, which are ghosts, who owns them, how they are shown).
//
// Gameplay components (position, health, weapons) belong to games and
// examples, not here. Every type in this package is plain data (no pointers,
// slices, maps, strings or interfaces), so it can be copied bit for bit into
// history and onto the wire.
package components
