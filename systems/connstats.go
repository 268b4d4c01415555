package systems

import (
	"strconv"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// ConnStats is what the server knows of one open connection: its inputs,
// what was replicated to it and its link. [Server.ConnStats] returns it.
type ConnStats struct {
	Conn components.ConnID
	// Player is the ghost OnConnect spawned for the connection (or for
	// the connection whose place it took back).
	Player components.GhostID
	// Identity is the player the connection is (ServerOptions.Identity);
	// "" when it has none or reconnect is off.
	Identity string
	Inputs   InputStats
	// Replication counts what the connection's snapshots carried.
	Replication ReplicationStats
	// RTT and Loss are the packet layer's estimates: the round trip of
	// its packets and acks, and the share of packets lost.
	RTT  time.Duration
	Loss float64
	// Budget is the connection's snapshot budget now, in bytes per
	// second, packet layer included: its maximum
	// (ServerOptions.BytesPerSecond, or one packet of SnapshotBytes a
	// send) unless congestion control cut it (see CongestionOptions).
	// BudgetCuts counts the cuts.
	Budget     int
	BudgetCuts uint64
	// Acked is the newest snapshot tick the client acknowledged, when
	// HasAcked: the baseline its delta snapshots build on.
	Acked    gw.Tick
	HasAcked bool
	// Link is the packet layer's counters (packets, bytes, acks, the
	// reliable queue).
	Link packet.Stats
	// Messages counts the game's messages with the client.
	Messages MessageStats
}

// InputStats counts what the server did with one connection's inputs.
// Its fields are those of the server's input buffer, one for one (a
// conversion checks it at compile time).
type InputStats struct {
	Received    uint64 // inputs decoded from the connection's packets
	Accepted    uint64 // first copies stored for a future tick
	Duplicates  uint64 // copies of a tick already stored or applied (redundancy)
	Late        uint64 // first copies of a tick already run without them
	LatePresses uint64 // late inputs whose presses were applied on a later tick
	TooFarAhead uint64 // refused: beyond ServerOptions.InputMaxAhead
	Refused     uint64 // refused by the input rules' Validate
	Clamped     uint64 // changed by the input rules' Validate
	Applied     uint64 // ticks run with the client's own input
	Missing     uint64 // ticks run with the rules' substitute
	Buffered    int    // inputs held now
	MaxBuffered int    // most inputs held at once
	// RefusedBy counts refusals by the reason Validate gave (the first
	// few reasons; later ones under "other"). Read it, never write it:
	// it is shared with the buffer.
	RefusedBy map[string]uint64
}

// ReplicationStats counts what one connection's snapshots carried. Its
// fields are those of the server's per-connection view, one for one.
type ReplicationStats struct {
	// Deferred counts ghosts that waited for a later snapshot for lack of
	// room.
	Deferred uint64
	// Records counts the ghost records sent; Identities those sent with
	// their identity (owner and spawn tick); Despawns the despawn records
	// sent.
	Records, Identities, Despawns uint64
	// DespawnsDeferred counts despawn records that did not fit a snapshot.
	DespawnsDeferred uint64
	// FullStates counts records sent in full although a snapshot had held
	// the ghost before: the client acknowledged none that held it, or the
	// newest it did was too old to be a baseline.
	FullStates uint64
	// ScopeExits counts ghosts despawned at the client because they left
	// the connection's scope (ServerOptions.Relevant).
	ScopeExits uint64
	// Resyncs counts the client's requests for full states honoured;
	// ResyncsRefused those that came too soon after the last one.
	Resyncs, ResyncsRefused uint64
	// LateAcks counts acknowledgements of snapshots whose records the
	// server no longer held: they acknowledge nothing, as if lost.
	LateAcks uint64
	// MaxStaleness is the longest, in ticks, that a ghost in scope waited
	// with a change the client had not been sent.
	MaxStaleness int
}

// ConnStats returns what the server knows of connection conn; ok is false
// when no such connection is open. It copies a few hundred bytes and
// allocates nothing.
func (s *Server) ConnStats(conn components.ConnID) (st ConnStats, ok bool) {
	sc := s.conn(conn)
	if sc == nil {
		return st, false
	}
	l := sc.link
	return ConnStats{
		Conn:        sc.id,
		Player:      sc.player,
		Identity:    sc.identity,
		Inputs:      InputStats(sc.inputs.Stats()),
		Replication: ReplicationStats(sc.view.Stats()),
		RTT:         l.pc.RTT(),
		Loss:        l.pc.Loss(),
		Budget:      s.budget(sc),
		BudgetCuts:  sc.budget.cuts,
		Acked:       l.acked,
		HasAcked:    l.hasAcked,
		Link:        l.pc.Stats(),
		Messages:    sc.msgs.stats,
	}, true
}

// Conns returns the IDs of the open connections, oldest first, in a new
// slice.
func (s *Server) Conns() []components.ConnID {
	ids := make([]components.ConnID, len(s.conns))
	for i, c := range s.conns {
		ids[i] = c.id
	}
	return ids
}

// conn returns the open connection with the ID, or nil.
func (s *Server) conn(id components.ConnID) *serverConn {
	for _, c := range s.conns {
		if c.id == id {
			return c
		}
	}
	return nil
}

// The conversions ConnStats makes, checked here so that a field added to
// one side only fails the build with this line named.
var (
	_ = InputStats(control.InputStats{})
	_ = ReplicationStats(ghostreg.ViewStats{})
)

// connNotOpen names a connection ID that is not open.
type connNotOpen struct{ id components.ConnID }

func (e *connNotOpen) Error() string {
	return "systems: no open connection " + strconv.FormatUint(uint64(e.id), 10)
}
