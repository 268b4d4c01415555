package ghosts

import (
	"slices"
	"sort"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// ClientStats counts a client's ghost bookkeeping.
type ClientStats struct {
	Spawned, Despawned uint64
	Live               int
}

// Client maps ghost IDs to local entities and creates or destroys them from
// snapshots. The ghosts this connection owns are predicted (they get
// [components.Predicted] and [components.InputCommand]); all others are
// [components.Interpolated].
type Client struct {
	b      *Binding
	me     components.ConnID
	ghosts []clientGhost // sorted by ID
	ids    []ecs.ID
	seen   []components.GhostID
	gone   []clientGhost
	stats  ClientStats
	// OnSpawn, if set, is called after a ghost's entity is created, with
	// its replicated components set, so the game can add its own
	// components (render state, predicted-only state).
	OnSpawn func(w *gw.World, e ecs.Entity, g components.Ghost)
	// OnDespawn, if set, is called before a ghost's entity is removed.
	OnDespawn func(w *gw.World, e ecs.Entity, g components.Ghost)
}

type clientGhost struct {
	id        components.GhostID
	e         ecs.Entity
	typ       netsync.GhostTypeID
	predicted bool
}

// NewClient returns an empty client register.
func NewClient(b *Binding) *Client { return &Client{b: b} }

// SetConn sets this client's connection ID, which decides ownership.
func (c *Client) SetConn(id components.ConnID) { c.me = id }

// Conn returns this client's connection ID (0 before the welcome).
func (c *Client) Conn() components.ConnID { return c.me }

// Stats returns the counters.
func (c *Client) Stats() ClientStats {
	st := c.stats
	st.Live = len(c.ghosts)
	return st
}

func (c *Client) find(id components.GhostID) int {
	return sort.Search(len(c.ghosts), func(i int) bool { return c.ghosts[i].id >= id })
}

// Lookup returns the local entity of ghost id.
func (c *Client) Lookup(id components.GhostID) (ecs.Entity, bool) {
	if i := c.find(id); i < len(c.ghosts) && c.ghosts[i].id == id {
		return c.ghosts[i].e, true
	}
	return ecs.Entity{}, false
}

// Owned reports whether this client owns (and so predicts) ghost g.
func (c *Client) Owned(g *components.Ghost) bool { return c.me != 0 && g.Owner == c.me }

// Spawn creates the entity for the gi-th ghost of snap (which must not
// exist yet) with its replicated values, its identity and its mode, calls
// OnSpawn and returns the entity. It panics if the world is locked.
func (c *Client) Spawn(snap *netsync.Snapshot, gi int) ecs.Entity {
	gs := &snap.Ghosts[gi]
	a := c.b.world.Arche()
	predicted := c.Owned(&gs.Ghost)
	c.ids = append(c.ids[:0], c.b.types[gs.Type]...)
	c.ids = append(c.ids, c.b.Ghost)
	if predicted {
		c.ids = append(c.ids, c.b.Predicted, c.b.Input)
	} else {
		c.ids = append(c.ids, c.b.Interpolated)
	}
	e := a.NewEntity(c.ids...)
	*(*components.Ghost)(a.Get(e, c.b.Ghost)) = gs.Ghost
	c.Write(e, snap, gi)
	i := c.find(gs.ID)
	c.ghosts = append(c.ghosts, clientGhost{})
	copy(c.ghosts[i+1:], c.ghosts[i:])
	c.ghosts[i] = clientGhost{id: gs.ID, e: e, typ: netsync.GhostTypeID(gs.Type), predicted: predicted}
	c.stats.Spawned++
	if c.OnSpawn != nil {
		c.OnSpawn(c.b.world, e, gs.Ghost)
	}
	return e
}

// Write copies the gi-th ghost's replicated values from snap into e.
func (c *Client) Write(e ecs.Entity, snap *netsync.Snapshot, gi int) {
	a := c.b.world.Arche()
	gs := &snap.Ghosts[gi]
	gt, _ := c.b.schema.GhostType(netsync.GhostTypeID(gs.Type))
	for ci, id := range c.b.types[gs.Type] {
		size := c.b.sizes[gt.Components[ci]]
		copy(unsafe.Slice((*byte)(a.Get(e, id)), size), unsafe.Slice((*byte)(snap.Value(gi, ci)), size))
	}
}

// Compare reports whether the values the history recorded for e at tick
// encode to the same bits as the gi-th ghost of snap: whether the
// prediction at that tick was right. recorded is false (and equal
// meaningless) when the history does not hold e at tick.
func (c *Client) Compare(h *gw.History, tick uint32, e ecs.Entity, snap *netsync.Snapshot, gi int) (equal, recorded bool) {
	gs := &snap.Ghosts[gi]
	gt, _ := c.b.schema.GhostType(netsync.GhostTypeID(gs.Type))
	equal = true
	for ci, id := range c.b.types[gs.Type] {
		p, err := h.Lookup(tick, e, id)
		if err != nil || p == nil {
			return false, false
		}
		if equal && !c.b.rt.Equal(c.b.schema.Codec(gt.Components[ci]), p, snap.Value(gi, ci)) {
			equal = false
		}
	}
	return equal, true
}

// Sweep despawns the ghosts missing from snap when snap is complete (an
// incomplete snapshot proves nothing about a missing ghost). It calls
// OnDespawn, then removes the entity. It panics if the world is locked.
func (c *Client) Sweep(snap *netsync.Snapshot) {
	if !snap.Complete {
		return
	}
	a := c.b.world.Arche()
	c.seen = c.seen[:0]
	for i := range snap.Ghosts {
		c.seen = append(c.seen, snap.Ghosts[i].ID)
	}
	slices.Sort(c.seen) // owned ghosts come first on the wire
	kept := c.ghosts[:0]
	c.gone = c.gone[:0]
	j := 0
	for _, g := range c.ghosts {
		for j < len(c.seen) && c.seen[j] < g.id {
			j++
		}
		if j < len(c.seen) && c.seen[j] == g.id {
			kept = append(kept, g)
		} else {
			c.gone = append(c.gone, g)
		}
	}
	c.ghosts = kept
	// Hooks run after the register is consistent again.
	for _, g := range c.gone {
		c.stats.Despawned++
		if !a.Alive(g.e) {
			continue
		}
		if c.OnDespawn != nil {
			c.OnDespawn(c.b.world, g.e, *(*components.Ghost)(a.Get(g.e, c.b.Ghost)))
		}
		if a.Alive(g.e) {
			a.RemoveEntity(g.e)
		}
	}
}

// Each calls fn for every ghost in ID order with its entity and whether it
// is predicted.
func (c *Client) Each(fn func(id components.GhostID, e ecs.Entity, predicted bool)) {
	for _, g := range c.ghosts {
		fn(g.id, g.e, g.predicted)
	}
}
