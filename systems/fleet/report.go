package fleet

import (
	"net/netip"
	"time"

	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/rooms"
)

// Reason is why a server drained.
type Reason string

// The reasons of Report.Reason.
const (
	ReasonContext Reason = "signal"    // Run's context ended: main cancels it on SIGTERM or SIGINT
	ReasonAgones  Reason = "agones"    // Agones marked the game server Shutdown
	ReasonDrain   Reason = "drain"     // Server.Drain was called
	ReasonReady   Reason = "not_ready" // Ready failed: the sidecar was unreachable for the SDK's RetryFor
)

// Report is what Run returns of the drain: why it began, the rooms open
// then and how each ended, and what the Agones side did.
type Report struct {
	Reason Reason
	// Rooms are the rooms that ended during the drain, in the order they
	// ended, with their stats as they ended (rooms.Options.OnEnd):
	// Clients is the clients each had when it closed, told the server is
	// closing.
	Rooms []rooms.RoomStats
	// Finished counts the rooms that ended by themselves within the grace
	// (their match over, or nobody left in them), Ended those still open
	// at the grace and ended then.
	Finished, Ended int
	// Drain is how long the drain took, from its start to Shutdown.
	Drain time.Duration
	// Routing is the manager's routing counts at the end (connections
	// refused while draining: Refused["draining"]).
	Routing rooms.Stats
	// PublicAddress is the last address learnt from Agones (zero
	// without).
	PublicAddress netip.AddrPort
	// Agones is the SDK's counts of calls, retries and health pings;
	// Counter the rooms counter as the sidecar last answered and
	// CounterErrors the updates of it that failed (each retried). Zero
	// without Agones.
	Agones        agones.Stats
	Counter       agones.Counter
	CounterErrors uint64
}
