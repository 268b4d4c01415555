package netsync

import "fmt"

// RejectReason says why a server refused or dropped a connection.
type RejectReason uint8

// The reject and disconnect reasons.
const (
	RejectSchema   RejectReason = 1 // the schemas differ
	RejectTickRate RejectReason = 2 // the tick rates differ
	RejectFull     RejectReason = 3 // no free connection slot
	RejectTimeout  RejectReason = 4 // nothing heard for too long
	RejectClosed   RejectReason = 5 // the peer closed
	RejectSpawn    RejectReason = 6 // the game's OnConnect or the ghost spawn failed
)

// String describes the reason.
func (r RejectReason) String() string {
	switch r {
	case RejectSchema:
		return "schema mismatch"
	case RejectTickRate:
		return "tick rate mismatch"
	case RejectFull:
		return "server full"
	case RejectTimeout:
		return "timeout"
	case RejectClosed:
		return "closed"
	case RejectSpawn:
		return "the game refused the player"
	}
	return fmt.Sprintf("RejectReason(%d)", uint8(r))
}
