// Package udp is ghostwire's transport over UDP: the netcode 1.02 standard
// (mas-bandwidth/netcode), wire compatible with its other implementations,
// behind the transport.Conn and transport.Listener interfaces.
//
// # Connection flow
//
// A connection is authenticated before it costs the server anything:
//
//  1. Backend. A matchmaker that has authenticated the player calls
//     MakeConnectToken with the private key it shares with the servers, the
//     protocol ID, the player's client ID, the servers' public addresses, an
//     expiry, a timeout and 256 bytes of user data. The 2,048-byte token
//     goes to the client over HTTPS. Its private part (client ID, addresses,
//     the two per-connection keys, user data) is sealed with
//     XChaCha20-Poly1305 under the private key and bound to the version,
//     protocol ID and expiry; the public part repeats the keys for the
//     client.
//  2. Token. Dial sends connection requests (the token's private part in
//     clear, 1,078 bytes) at 10 Hz to the first server address. The server
//     checks, cheapest first: size and version, protocol ID, expiry, the
//     private part's tag, that the token names the server's public address,
//     that the client ID is not connected and that the token was not first
//     used from another address. Anything that fails is dropped silently and
//     counted; a full server answers with a 25-byte denied packet.
//  3. Challenge. The server remembers the handshake (keys, client ID) under
//     the source address and answers with a 333-byte challenge packet: a
//     challenge token (client ID and user data, sealed with a key random per
//     server start under the server's global sequence, which starts at 2^63)
//     encrypted with the server-to-client key. Only a client that receives
//     what is sent to that address can read it.
//  4. Connected. The client echoes the challenge token in response packets
//     at 10 Hz. The server opens it, checks it is the very token it sent to
//     that address, gives the client a slot, queues the connection for
//     Listener.Accept and sends a keep-alive (slot and max clients), on
//     which the client becomes connected. From then on both sides exchange
//     payload packets (1 to 1,200 bytes) and keep-alives at 10 Hz when
//     quiet, each sealed with ChaCha20-Poly1305 (IETF) under the key of its
//     direction, nonce = four zero bytes and the packet's sequence, bound to
//     the version, protocol ID and prefix byte. Either side ends the
//     connection with ten redundant disconnect packets, or by timeout.
//
// A Client tries the token's server addresses in turn on denial or timeout
// and reports its State and, once it ends, the reason (Err).
//
// # Threat model
//
// The attacker can send any datagram from any source address (spoofing),
// record and replay traffic, flip bits, hold valid tokens of its own, and
// flood. It cannot read traffic to addresses it does not control, and does
// not know the private key. Defences, each counted in Stats when it bites:
//
//   - Forgery and tampering: every packet but the request is authenticated;
//     the request carries the token's authenticated private part. A packet
//     that fails costs one AEAD open and no allocation.
//   - Replay: keep-alive, payload and disconnect packets pass a 256-entry
//     replay window per connection and direction, with the overflow-safe
//     test of the netcode errata. A replayed request earns at most a
//     challenge the replayer cannot answer; a token seen from one address is
//     refused from another (a ring of first source addresses keyed on the
//     token's MAC, oldest forgotten first, TokenHistory), and a token that
//     connected once is refused until it expires, however many connections
//     follow, since a second connection under the same keys would repeat
//     the server's nonces: that record (SpentTokens) never forgets a live
//     token; full, it refuses new handshakes (SpentTokensFull).
//   - Spoofing: connections are keyed on the source address; a packet with
//     a valid client's header from another address reaches no connection
//     and is counted as UnknownClient. The challenge round trip proves the
//     client reads what is sent to its address; the server also requires
//     the challenge token it sent to that very address, so a token holder
//     cannot complete a handshake for a victim's address with a challenge
//     fetched at its own.
//   - Amplification: before an address has answered its challenge the
//     server sends it no more bytes than it received from it. The only
//     replies to unproven addresses, challenge (333 bytes) and denied (25),
//     are smaller than the 1,078-byte request; the package does not compile
//     if that stops being true, and each handshake keeps the byte balance
//     explicitly.
//   - Resource exhaustion: pending handshakes are capped in total
//     (MaxPending; the oldest makes room) and per source (MaxPendingPerIP),
//     and expire after HandshakeTimeout whatever arrives. A source is an
//     IPv4 address or an IPv6 /64, the block one host is given. Fair share
//     at a source: when its quota is full, a request takes the place of
//     the source's oldest handshake once that one has waited
//     PendingFairAge (500 ms) unanswered, and the displaced token is not
//     admitted again. An honest client answers within a round trip, so it
//     is never displaced, and an attacker squatting its IP's quota with N
//     tokens (spoofed ports, never answered) delays it by at most
//     PendingFairAge, spending a token per displacement. Packets from
//     addresses without a connection pass a per-source token bucket (a
//     fixed table, keyed hash) before any crypto; authenticated packets
//     pass a per-connection bucket; received payloads wait in a bounded
//     queue per connection, and a peer that fills it (its application
//     stopped reading) is disconnected. Junk never refreshes a connection's
//     or a handshake's timeout: only authenticated packets do.
//
// Not defended: an attacker on the path can drop or delay traffic, and one
// spoofing a connected client's IP can drain that IP's handshake bucket
// (not the connection's, which only authenticated packets are charged to).
// The server's sockets run at the kernel's pace; a flood larger than the
// socket buffer loses honest packets with the rest.
//
// # Goroutines, polling and batching
//
// By default a Listener and a Client each run two goroutines, one reading
// the socket and one running the 10 Hz timers; Close ends both and waits
// for them. A game that ticks does better with Options.Polled and
// ClientOptions.Polled: no goroutine, and Poll, called at the start of
// every frame (systems.Server and systems.Client do), reads what has
// arrived with recvmmsg, 32 datagrams a system call, and runs the timers.
// A goroutine woken for every datagram costs a game server a few thread
// switches per packet; with 64 clients that was 2.4x the CPU per packet
// of the polled listener (docs/performance.md). Options.SendBatch queues
// the server's datagrams and writes up to 64 with one sendmmsg at
// Listener.Flush, which systems.Server calls after each tick's snapshots.
package udp
