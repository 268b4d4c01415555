package ghostreg

import (
	"cmp"
	"slices"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// Reown gives every ghost connection from owns to connection to, and
// returns how many moved: a player's new connection takes back the ghosts
// of the one it lost (a reconnect). Each ghost keeps its ID, entity and
// state; its components.Ghost.Owner is to from now on, so to's input
// drives it, and every open view sends its identity again with its next
// record (against the baseline it holds, not in full), so every client
// learns the new owner: to's client predicts it as its own, the others go
// on interpolating it without a despawn. It costs a walk of the views
// per ghost moved. It does nothing when from is to or owns nothing.
func (s *ServerRegister) Reown(from, to components.ConnID) int {
	own := s.owned[from]
	if from == to || len(own) == 0 {
		return 0
	}
	delete(s.owned, from)
	a := s.b.world.Arche()
	tick := s.b.world.Tick()
	for _, g := range own {
		g.owner = to
		g.eg.Owner = to
		if a.Alive(g.e) && a.Has(g.e, s.b.Ghost) {
			(*components.Ghost)(a.Get(g.e, s.b.Ghost)).Owner = to
		}
		for _, v := range s.views {
			if v != nil {
				v.reowned(g, tick)
			}
		}
	}
	moved := append(s.owned[to], own...)
	slices.SortFunc(moved, func(x, y *serverGhost) int { return cmp.Compare(x.id, y.id) })
	s.owned[to] = moved
	return len(own)
}

// reowned is called by the register when ghost g changed owner at tick:
// its next record to this view carries its identity again. The client
// holds its state at its baseline still, so only the identity is new: the
// baseline stays, and plain acknowledgements are folded into it first
// (they would let a run, which carries no identity, serve the record). A
// ghost the view's connection now owns enters its scope.
func (v *View) reowned(g *serverGhost, tick gw.Tick) {
	if g.owner == v.conn {
		v.enter(g, tick)
	}
	vg := &v.state[g.idx]
	if !vg.relevant {
		return
	}
	if vg.pending && v.canResume && v.idle(g, vg) {
		v.idles--
	}
	v.fold(vg)
	vg.known, vg.rested, vg.plain = false, false, 0
	v.changed(g, tick)
}

// reown takes the owner of identity g for the ghost of its ID, when this
// client holds that ghost (its entity, its interpolation buffer) of g's
// type under another owner: the server moved it to a player's new
// connection. Its prediction mode stays as it is: the server moves a
// ghost only from a connection that ended to a new one, so the owner
// changes between two connections neither of which is this client's.
func (c *ClientRegister) reown(g *components.Ghost) {
	if i := c.find(g.ID); i < len(c.ghosts) && c.ghosts[i].id == g.ID {
		if a := c.b.world.Arche(); a.Alive(c.ghosts[i].e) {
			if cur := (*components.Ghost)(a.Get(c.ghosts[i].e, c.b.Ghost)); cur.Type == g.Type {
				cur.Owner = g.Owner
			}
		}
	}
	if c.interp != nil {
		if i, ok := c.interp.find(g.ID); ok && c.interp.ghosts[i].g.Type == g.Type {
			c.interp.ghosts[i].g.Owner = g.Owner
		}
	}
}
