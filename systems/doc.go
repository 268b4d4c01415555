// Package systems wires ghostwire into a game: a [Server] endpoint
// (authoritative world, input buffers, ghost snapshots) and a [Client]
// endpoint (prediction with history, reconciliation by rollback and replay,
// input stream, clock sync), each owning its world, schedule and clock and
// installing the netcode systems into the schedule's stages. The game adds
// its own systems to the same schedule; the prediction systems are shared
// by server and client.
//
// Each endpoint speaks through the packet layer (package transport/packet)
// on every connection, whatever the transport: snapshots, inputs, hellos,
// welcomes and goodbyes ride its unreliable channel; predicted events and
// the game's own messages (SendToServer, SendToClients, Handle;
// docs/messages.md) its reliable channels, within a budget per tick after
// the snapshot or the inputs; and a connection whose reliable channel
// backs up (a client that stopped reading) is dropped. A reject or disconnect travels in three packets, as the
// connection closes right after and nothing can be resent.
//
// Package harness runs a server and clients in one process on virtual time
// over a conditioned in-memory network, for tests and simulations.
package systems
