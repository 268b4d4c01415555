package ghostreg

import (
	"slices"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// sentRing is how many recent snapshots a View remembers for
// acknowledgements: an ack older than that acknowledges nothing, and the
// records it would have confirmed are sent again.
const sentRing = 64

// View is one connection's replication state on the server: the ghosts
// the client was told about, whether it acknowledged their identity, each
// ghost's send priority, and the despawns it has not acknowledged. Make
// one with [ServerRegister.NewView] and Close it when the connection
// ends.
type View struct {
	r    *ServerRegister
	conn components.ConnID
	slot int // index of the view's state in every serverGhost.per
	// despawns are the despawn records not yet acknowledged, sent in
	// every snapshot until then.
	despawns []components.GhostID
	sent     [sentRing]sentSnapshot
	cand     []candidate
	stats    ViewStats
	// Importance, if set, is how much the priority of a ghost (by its
	// entity) grows each snapshot it is not sent; 1 for every ghost when
	// nil. Values below MinImportance (and NaN) count as MinImportance, so
	// every ghost is sent eventually: with n ghosts of which k fit a
	// snapshot, none waits more than ⌈n/k⌉·(largest/smallest importance)
	// snapshots.
	Importance func(e ecs.Entity) float32
}

// ViewStats counts a View's work.
type ViewStats struct {
	// Deferred counts ghosts that waited for a later snapshot for lack of
	// room.
	Deferred uint64
	// Identities counts ghost records sent with their identity (owner
	// and spawn tick), Despawns the despawn records sent.
	Identities, Despawns uint64
	// DespawnsDeferred counts despawn records that did not fit a snapshot.
	DespawnsDeferred uint64
}

type viewGhost struct {
	priority float32
	sent     bool // a snapshot held it: the client may have it
	known    bool // the client acknowledged a snapshot holding the identity
}

type sentSnapshot struct {
	tick     gw.Tick
	valid    bool
	idents   []components.GhostID // ghosts sent with their identity
	despawns []components.GhostID
}

type candidate struct {
	id       components.GhostID
	i        int // index in the register
	class    uint8
	priority float32
}

// MinImportance is the least a ghost's priority grows per snapshot.
const MinImportance = 1.0 / 64

// Candidate classes, sent in this order: owned ghosts and spawns never
// wait behind the others.
const (
	classOwned uint8 = iota
	classSpawn
	classOther
)

// NewView returns the replication state of a new connection conn, which
// knows no ghost yet.
func (s *ServerRegister) NewView(conn components.ConnID) *View {
	slot := slices.Index(s.views, nil)
	if slot < 0 {
		slot = len(s.views)
		s.views = append(s.views, nil)
	}
	v := &View{r: s, conn: conn, slot: slot}
	s.views[slot] = v
	for i := range s.ghosts {
		s.ghosts[i].reset(slot)
	}
	return v
}

// reset clears g's state for the view in slot, making room for it.
func (g *serverGhost) reset(slot int) {
	for len(g.per) <= slot {
		g.per = append(g.per, viewGhost{})
	}
	g.per[slot] = viewGhost{}
}

// Close detaches v from its register; v must not be used afterwards.
func (v *View) Close() {
	if v.slot < len(v.r.views) && v.r.views[v.slot] == v {
		v.r.views[v.slot] = nil
	}
}

// Conn returns the view's connection.
func (v *View) Conn() components.ConnID { return v.conn }

// Stats returns the counters.
func (v *View) Stats() ViewStats { return v.stats }

// PendingDespawns returns how many despawn records await acknowledgement.
func (v *View) PendingDespawns() int { return len(v.despawns) }

// removed is called by the register when ghost g stops replicating: a
// client that was sent it gets a despawn record until it acknowledges
// one; one never sent it hears nothing.
func (v *View) removed(g *serverGhost) {
	if v.slot < len(g.per) && g.per[v.slot].sent {
		v.despawns = append(v.despawns, g.id)
	}
}

// Ack notes that the client received and applied the snapshot of tick
// (its newest): the identities and despawns that snapshot carried are not
// sent again. An ack of a tick not among the last 64 snapshots sent, or
// acknowledged before, does nothing.
func (v *View) Ack(tick gw.Tick) {
	rec := &v.sent[uint32(tick)%sentRing]
	if !rec.valid || rec.tick != tick {
		return
	}
	rec.valid = false
	for _, id := range rec.idents {
		if i, ok := v.r.find(id); ok {
			v.r.ghosts[i].per[v.slot].known = true
		}
	}
	if len(rec.despawns) > 0 {
		v.despawns = slices.DeleteFunc(v.despawns, func(id components.GhostID) bool {
			_, ok := slices.BinarySearch(rec.despawns, id)
			return ok
		})
	}
}
