// Package transport moves datagrams between a client and a server.
//
// A Conn is one end of an unreliable, unordered, message-oriented link, polled
// once per tick: Send queues a datagram, Receive returns the next one that has
// arrived by now. Nothing blocks and nothing runs in the background, so a game
// loop driven by a virtual clock stays deterministic.
//
// MemoryNetwork is an in-memory implementation for tests and simulations. Its
// links can be conditioned (latency, jitter, loss, duplication, reordering,
// bandwidth; see LinkConfig) with a seeded random source, so the same seed and the same
// sends give the same deliveries, tick by tick.
//
// The package is not a protocol: it knows nothing of ECS, snapshots,
// acknowledgements, reliability, fragmentation or encryption. Datagrams are
// opaque bytes of at most MaxDatagramSize; everything above that belongs to
// the packages that use it.
package transport
