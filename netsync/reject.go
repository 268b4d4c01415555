package netsync

import "github.com/ghostwire/ghostwire/internal/protocol"

// RejectReason says why a server refused or dropped a connection, as a
// client's stats and its connection error report it.
type RejectReason protocol.RejectReason

// The reject and disconnect reasons.
const (
	RejectSchema   = RejectReason(protocol.RejectSchema)   // the schemas differ
	RejectTickRate = RejectReason(protocol.RejectTickRate) // the tick rates differ
	RejectFull     = RejectReason(protocol.RejectFull)     // no free connection slot
	RejectTimeout  = RejectReason(protocol.RejectTimeout)  // nothing heard for too long
	RejectClosed   = RejectReason(protocol.RejectClosed)   // the peer closed
	RejectSpawn    = RejectReason(protocol.RejectSpawn)    // the game's OnConnect or the ghost spawn failed
	RejectMessages = RejectReason(protocol.RejectMessages) // the client kept sending messages the server refused
)

// String describes the reason: "schema mismatch", "tick rate mismatch",
// "server full", "timeout", "closed", "the game refused the player" or
// "too many refused messages".
func (r RejectReason) String() string { return protocol.RejectReason(r).String() }
