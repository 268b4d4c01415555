// Package netsync is ghostwire's wire format: it decides how every value
// the server and its clients exchange becomes bits and how those bits become
// values again. It holds the bit-level encodings and float quantization that
// everything else is built from, and the encodings of game data sent over
// them: component values, snapshots, input streams, acknowledgements and
// clock synchronization. Moving those bytes between peers is the transport's
// job, not this package's.
//
// Two rules apply to everything here.
//
// Data read from the network is hostile. Decoders never panic, never allocate
// more than the input they were given justifies, and return errors that name
// the offending value and the range that was allowed. The errors wrap
// [ErrShortBuffer], [ErrMalformed] or [ErrOutOfRange], so callers can test
// them with [errors.Is].
//
// Clients predict the server bit for bit. Every lossy encoding is deterministic
// and idempotent: encoding a value that has already been through it returns
// the same value, and one code always decodes to the same float on every
// machine. The server applies the decoded value to its own state, so both
// sides simulate from identical numbers.
package netsync
