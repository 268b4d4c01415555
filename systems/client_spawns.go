package systems

import (
	"reflect"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/netsync"
)

// spawnGrace is how many snapshot ticks past SpawnMatchWindow a predicted
// spawn waits for the server's ghost before it is removed: the snapshots
// of 8 ticks in a row must be lost (or deferred) for a ghost the server
// did spawn to miss it.
const spawnGrace = 8

// pendingSpawn is a predicted spawn the server has not confirmed yet.
type pendingSpawn struct {
	e ecs.Entity
	g components.Ghost // ID 0; Spawned is the tick it was predicted on
}

// takeSpawns turns the tick's components.SpawnGhost requests into
// predicted spawns: the entity gets a components.Ghost of ID 0 (type,
// owner, the tick), the Predicted marker and, when this connection owns
// it, the input components, so it is simulated, recorded and quantized
// like a ghost until the server's ghost takes it over (adoptSpawn). A
// request this client would not predict (another connection's, a type it
// interpolates) or whose entity lacks a component of the type is dropped
// with its entity and counted; one made while replaying is dropped too:
// the tick's first prediction made it.
func (c *Client) takeSpawns(w *gw.World) {
	q := &c.spawnQ
	a := w.Arche()
	q.collect(w)
	b := c.binding
	for i, e := range q.took {
		if w.IsReplaying() {
			a.RemoveEntity(e)
			continue
		}
		r := q.requests[i]
		g := components.Ghost{Type: r.Type, Owner: r.Owner, Spawned: w.Tick()}
		ids, known := b.ComponentIDs(codec.GhostTypeID(r.Type))
		if !known || !c.ghosts.Predicts(&g) || !hasAll(a, e, ids) {
			c.stats.SpawnsDiscarded++
			a.RemoveEntity(e)
			continue
		}
		a.Remove(e, q.spawnID)
		add := []ecs.Component{{ID: b.Ghost, Comp: &g}}
		if !a.Has(e, b.Predicted) {
			add = append(add, ecs.Component{ID: b.Predicted, Comp: &components.Predicted{}})
		}
		if c.ghosts.Owned(&g) {
			if !a.Has(e, b.Header) {
				add = append(add, ecs.Component{ID: b.Header, Comp: &components.InputHeader{}})
			}
			if b.HasInput && !a.Has(e, b.Input) {
				add = append(add, ecs.Component{ID: b.Input, Comp: reflect.New(b.Schema().InputType()).Interface()})
			}
		}
		a.Assign(e, add...)
		c.pending = append(c.pending, pendingSpawn{e: e, g: g})
		c.stats.SpawnsPredicted++
	}
}

func hasAll(a *ecs.World, e ecs.Entity, ids []ecs.ID) bool {
	for _, id := range ids {
		if !a.Has(e, id) {
			return false
		}
	}
	return true
}

// adoptSpawn finds the predicted spawn the server's new ghost g confirms
// and makes it g's entity: the oldest pending spawn of g's type that
// ClientOptions.MatchSpawn accepts (by default: the same owner, and
// predicted on g's spawn tick or up to SpawnMatchWindow ticks before, as
// an input that arrived late runs on a later server tick). ok is false
// when none does.
func (c *Client) adoptSpawn(w *gw.World, g components.Ghost) (e ecs.Entity, ok bool) {
	a := w.Arche()
	for i := 0; i < len(c.pending); i++ {
		p := c.pending[i]
		if !a.Alive(p.e) {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			c.stats.SpawnsUnmatched++
			i--
			continue
		}
		if p.g.Type != g.Type {
			continue
		}
		if c.opts.MatchSpawn != nil {
			ok = c.opts.MatchSpawn(w, p.e, g)
		} else {
			d := g.Spawned.Sub(p.g.Spawned)
			ok = p.g.Owner == g.Owner && d >= 0 && int(d) <= c.opts.SpawnMatchWindow
		}
		if ok {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			c.ghosts.Adopt(p.e, g)
			c.stats.SpawnsMatched++
			c.stats.SpawnLag = max(c.stats.SpawnLag, int(g.Spawned.Sub(p.g.Spawned)))
			return p.e, true
		}
	}
	return e, false
}

// expireSpawns removes the predicted spawns the server has had every
// chance to confirm: a snapshot of tick is SpawnMatchWindow plus
// spawnGrace ticks past the tick each was predicted on (a refused shot,
// a spawn rule the server decided otherwise). It is counted in
// ClientStats.SpawnsUnmatched.
func (c *Client) expireSpawns(w *gw.World, tick gw.Tick) {
	a := w.Arche()
	kept := c.pending[:0]
	for _, p := range c.pending {
		if tick.Sub(p.g.Spawned) <= int32(c.opts.SpawnMatchWindow+spawnGrace) && a.Alive(p.e) {
			kept = append(kept, p)
			continue
		}
		if a.Alive(p.e) {
			a.RemoveEntity(p.e)
		}
		c.stats.SpawnsUnmatched++
	}
	clear(c.pending[len(kept):])
	c.pending = kept
}

// despawnedAt reports whether the prediction had marked e despawned
// (components.Despawned) by tick, as the history recorded it, and on
// which tick.
func (c *Client) despawnedAt(tick gw.Tick, e ecs.Entity) (gw.Tick, bool) {
	p, err := c.history.Lookup(tick, e, c.spawnQ.despawnID)
	if err != nil || p == nil {
		return 0, false
	}
	return (*components.Despawned)(p).Tick, true
}

// despawnDiff is what the diagnostics say of a ghost the prediction
// despawned on tick while the server's state still holds it.
func despawnDiff(tick gw.Tick) netsync.FieldDiff {
	return netsync.FieldDiff{Component: despawnedName, Field: "Tick", Kind: reflect.Uint32, Predicted: float64(tick)}
}

// despawnedName is components.Despawned's key in
// ClientStats.MispredictionsBy.
var despawnedName = reflect.TypeFor[components.Despawned]().String()
