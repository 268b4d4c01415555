package ecs

import (
	"github.com/mlange-42/arche/ecs"
)

// Commands queues structural changes (create, destroy, add or remove a
// component) that a system asks for while a query holds the arche world
// locked. The schedule applies the queue after each system returns.
//
// Commands are applied in the order they were queued. A command on an
// entity that died in the meantime is skipped (and counted), never applied
// to a recycled entity.
type Commands struct {
	world   *World
	ops     []command
	ids     []ecs.ID
	comps   []ecs.Component
	skipped uint64

	// held keeps the commands queued before a rollback (they belong to the
	// system that called it) while the fix and the replay use the queue.
	heldOps   []command
	heldIDs   []ecs.ID
	heldComps []ecs.Component
}

type commandKind uint8

const (
	cmdSpawn commandKind = iota
	cmdDestroy
	cmdAdd
	cmdRemove
)

type command struct {
	kind     commandKind
	entity   ecs.Entity
	from, to int // range in ids (remove) or comps (spawn, add)
	init     func(w *World, e ecs.Entity)
}

// Spawn queues the creation of an entity with the given components (each
// Comp a pointer to the value, as in arche's NewEntityWith; the value is
// read when the queue is applied). init, if not nil, is called with the new
// entity right after creation, while the world is unlocked.
func (c *Commands) Spawn(init func(w *World, e ecs.Entity), comps ...ecs.Component) {
	from := len(c.comps)
	c.comps = append(c.comps, comps...)
	c.ops = append(c.ops, command{kind: cmdSpawn, from: from, to: len(c.comps), init: init})
}

// Destroy queues the removal of e.
func (c *Commands) Destroy(e ecs.Entity) {
	c.ops = append(c.ops, command{kind: cmdDestroy, entity: e})
}

// Add queues adding components to e. A component e already has is
// overwritten with the given value instead of panicking as arche would.
func (c *Commands) Add(e ecs.Entity, comps ...ecs.Component) {
	from := len(c.comps)
	c.comps = append(c.comps, comps...)
	c.ops = append(c.ops, command{kind: cmdAdd, entity: e, from: from, to: len(c.comps)})
}

// Remove queues removing components from e. Components e does not have
// are ignored.
func (c *Commands) Remove(e ecs.Entity, ids ...ecs.ID) {
	from := len(c.ids)
	c.ids = append(c.ids, ids...)
	c.ops = append(c.ops, command{kind: cmdRemove, entity: e, from: from, to: len(c.ids)})
}

// queued returns the number of queued commands.
func (c *Commands) queued() int { return len(c.ops) }

// hold sets the queued commands aside; release brings them back. In
// between the queue starts empty, and must be empty again at release.
func (c *Commands) hold() {
	c.ops, c.heldOps = c.heldOps[:0], c.ops
	c.ids, c.heldIDs = c.heldIDs[:0], c.ids
	c.comps, c.heldComps = c.heldComps[:0], c.comps
}

func (c *Commands) release() {
	c.ops, c.heldOps = c.heldOps, c.ops[:0]
	c.ids, c.heldIDs = c.heldIDs, c.ids[:0]
	c.comps, c.heldComps = c.heldComps, c.comps[:0]
}

// apply executes the queued commands in order and empties the queue. It
// panics if the arche world is locked (a query is still open). Commands
// queued by an init callback run in the same call. Dropped commands are
// counted in skipped.
func (c *Commands) apply() {
	w := c.world.Arche()
	for i := 0; i < len(c.ops); i++ {
		op := c.ops[i]
		switch op.kind {
		case cmdSpawn:
			e := w.NewEntityWith(c.comps[op.from:op.to]...)
			if op.init != nil {
				op.init(c.world, e)
			}
		case cmdDestroy:
			if !w.Alive(op.entity) {
				c.skipped++
				continue
			}
			w.RemoveEntity(op.entity)
		case cmdAdd:
			if !w.Alive(op.entity) {
				c.skipped++
				continue
			}
			for _, comp := range c.comps[op.from:op.to] {
				if w.Has(op.entity, comp.ID) {
					w.Set(op.entity, comp.ID, comp.Comp)
				} else {
					w.Assign(op.entity, comp)
				}
			}
		case cmdRemove:
			if !w.Alive(op.entity) {
				c.skipped++
				continue
			}
			for _, id := range c.ids[op.from:op.to] {
				if w.Has(op.entity, id) {
					w.Remove(op.entity, id)
				}
			}
		}
	}
	clear(c.comps) // drop references to the queued values and callbacks
	clear(c.ops)
	c.ops, c.ids, c.comps = c.ops[:0], c.ids[:0], c.comps[:0]
}
