package udp

// Stats counts, by reason, the packets and handshakes a Listener or a Client
// refused or lost, and the connections it dropped. Every field counts when
// its check bites; none counts ordinary traffic.
type Stats struct {
	Malformed     uint64 // packets of an impossible size, type, sequence length or version
	AuthFailed    uint64 // encrypted packets whose tag did not verify (forged, corrupted or spoofed)
	BadToken      uint64 // connect tokens or challenge tokens that did not authenticate, decode or match their handshake
	ExpiredToken  uint64 // connection requests whose token had expired
	WrongProtocol uint64 // connection requests for another protocol ID
	WrongAddress  uint64 // connect tokens that do not name this server's public address
	TokenReused   uint64 // connect tokens already used from another source address, already connected once, or displaced from a full source
	ClientInUse   uint64 // handshakes for a client ID that is already connected
	Replayed      uint64 // packets rejected by the 256-entry replay window
	UnknownClient uint64 // encrypted packets from an address with no connection or handshake
	ServerFull    uint64 // handshakes denied because every client slot was taken
	RateLimited   uint64 // packets dropped by a per-address or per-connection token bucket
	Timeout       uint64 // connections dropped (or, on a client, attempts ended) for silence past the token's timeout

	PendingFull        uint64 // waiting handshakes dropped, oldest first, to admit a new one past MaxPending
	PendingAddressFull uint64 // handshakes refused because their source (IPv4 address or IPv6 /64) had MaxPendingPerIP waiting, none for PendingFairAge
	PendingDisplaced   uint64 // waiting handshakes that gave their place to a newer one of their full source after PendingFairAge
	SpentTokensFull    uint64 // handshakes refused because the record of spent tokens held SpentTokens unexpired ones
	PendingExpired     uint64 // handshakes dropped because the challenge was not answered in HandshakeTimeout
	TokenHistoryFull   uint64 // unexpired tokens forgotten by the token-reuse history to make room past TokenHistory
	QueueFull          uint64 // connections dropped because their receive queue reached QueueBytes

	Writes     uint64 // system calls that wrote datagrams: about Written / Options.SendBatch when batching
	Written    uint64 // datagrams handed to the socket
	PollCapped uint64 // Polls (Options.Polled) that stopped at 1,024 datagrams with more perhaps waiting: a flood
}
