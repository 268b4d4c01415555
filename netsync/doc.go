// Package netsync is how a game describes what crosses the wire: each
// replicated component and the input type describe their wire form once,
// in a Serialize method that calls one [Stream] method per field, and a
// [SchemaBuilder] declares them with the ghost types, how clients predict
// and interpolate them, the rules of the input, and the game's own message
// types with their channels and limits ([Message]). The endpoints of
// package systems take the built [Schema] and do the rest: snapshots,
// input batches, messages, the connection protocol.
//
// Two rules shape everything here.
//
// Data read from the network is hostile. Decoders never panic, never
// allocate more than the input they were given justifies, and refuse any
// value outside what the description allows (a quantizer's range, an
// integer's bounds, a finite float).
//
// Clients predict the server bit for bit. Every lossy encoding is
// deterministic and idempotent: quantizing a value that has already been
// quantized returns the same bits, and one code always decodes to the same
// float on every machine. The server applies the decoded value to its own
// state at the end of every tick, so both sides simulate from identical
// numbers.
package netsync
