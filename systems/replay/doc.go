// Package replay records a server's match to a file as it runs and runs
// it again from the file with no network and no clients, bit for bit.
//
// A [Recorder] is a systems.Recorder: set it as
// systems.ServerOptions.Recorder (rooms.Options.Recorder for the rooms of a
// process) and it writes the header (format version, schema hash, tick
// rate, the game's configuration and seed as bytes the game gives), then
// per tick the connection events, the game messages the server accepted
// and the inputs it applied, a hash of the replicated state, and every few
// seconds a keyframe (the replicated state in full). It writes a chunk per
// second of ticks, each self-delimited with a checksum, so a crash loses
// at most the last second and a truncated file reads up to its last
// complete chunk.
//
// [Open] reads a file; a [Player] builds the server again through the
// game's own constructor and runs the ticks, checking every recorded hash
// ([MismatchError] names the first tick that differs).
//
// A [Live] recording is parsed as it is written, so a Player can follow
// the match while it runs, some seconds behind; a [Stand] seats the
// server's spectators (systems.ServerOptions.Spectators) in front of that
// delayed world. docs/replays.md describes the format, the costs and the
// determinism it relies on.
package replay
