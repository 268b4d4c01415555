// Package serverbench times a server alone on the traffic its clients
// sent in a harness run, for the scale benchmarks.
//
// A harness runs the clients' worlds in the server's process, one after
// another every step: between two server ticks, 64 client worlds pass
// through the caches the server's state lives in, which a deployed server
// (its clients on other machines) never sees. A [Recorder] wraps each
// client's end of its link and keeps every datagram the client sends,
// with the virtual time it was sent; a [Twin] is a second server, built
// the same way, on a second memory network with the same seed, links
// dialled in the same order and with the same conditions, whose clients
// are only those recorded datagrams, sent again at the same times. Each
// direction of each memory link draws from its own seeded source (see
// transport.MemoryNetwork), so the twin receives exactly what the first
// server received, when it received it, and runs the same match;
// [Twin.Step] times its Update alone. The benchmarks check the twin's
// counters against the first server's to prove it.
package serverbench
