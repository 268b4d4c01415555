// Package fleet runs a dedicated game server process, one member of a
// fleet: the rooms of systems/rooms behind one netcode listener, the
// token service a matchmaker calls (transport/udp/tokens), the
// operator's endpoints (systems/metrics) and, on Agones, the game
// server's life through its sidecar (systems/agones). It is the glue
// every game's server would otherwise write, in the order Agones and
// Kubernetes expect:
//
//   - Ready once the server listens (Server.Run's first call), then a
//     health ping every half of the fleet's health period, for the whole
//     life, the drain included;
//   - an Agones counter ("rooms") kept equal to the open rooms, +1 and −1
//     as each opens and ends, its capacity the rooms the process may run,
//     so that the fleet allocates by free capacity;
//   - the public address and port learnt from the sidecar's watch, given
//     to the listener and the token service: tokens name the address
//     clients reach (the node's, and the host port Agones allocated), not
//     the pod's bind address;
//   - a drain when the process is told to stop (Run's context ends: main
//     cancels it on SIGTERM) or when Agones marks the game server
//     Shutdown (a fleet scaling down, a rolling update): /readyz turns
//     not ready, nothing new is admitted (no room opens, no connection is
//     routed, no token is issued), the counter's capacity drops to its
//     count, the rooms get the grace period minus a margin to finish
//     their matches (a room nobody plays in finishes at once), the rest
//     are ended with every client told the server is closing, the
//     counter reaches zero, Shutdown is called once, and Run returns a
//     Report.
//
// The package links github.com/prometheus/client_golang through
// systems/metrics: a server that runs in a fleet exports its metrics.
package fleet
