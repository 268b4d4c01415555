package harness

import (
	"fmt"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
)

// CheckOwnState compares client i's prediction of each ghost it owns at
// the server's current tick, as its history recorded it, with the
// server's state of that ghost now, on the wire codes (so after
// quantization). Server-owned components (netsync.SchemaBuilder.ServerOwned)
// are left out: the client does not predict them. Call it between steps.
// It returns nil when every field is equal; otherwise an error naming the
// client, ghost, tick, component and field with the predicted value and
// the server's. It also errors when the client owns no ghost, when the
// server no longer has it, or when the client's history does not hold the
// server's tick (a client not yet, or no longer, ahead of the server). It
// panics if i is not a client index.
func (h *Harness) CheckOwnState(i int) error {
	c := h.Clients[i]
	s := h.Server
	tick := s.World().Tick()
	schema := (*codec.Schema)(h.opts.Game.Schema)
	creg := (*ghostreg.ClientRegister)(c.Ghosts())
	sb := (*ghostreg.ServerRegister)(s.Ghosts()).Binding()
	var err error
	owned := 0
	creg.Each(func(id components.GhostID, ce ecs.Entity, predicted bool) {
		if !predicted || err != nil {
			return
		}
		owned++
		se, ok := s.Ghosts().Entity(id)
		if !ok {
			err = fmt.Errorf("harness: client %d predicts ghost %d, which the server does not have", i, id)
			return
		}
		sa := s.World().Arche()
		t := codec.GhostTypeID((*components.Ghost)(sa.Get(se, sb.Ghost)).Type)
		gt, _ := schema.GhostType(t)
		sids, _ := sb.ComponentIDs(t)
		cids, _ := creg.Binding().ComponentIDs(t)
		for k, cid := range gt.Components {
			if gt.Owned(k) {
				continue // not predicted: the client takes it as it arrives
			}
			p, lerr := c.World().History().Lookup(tick, ce, cids[k])
			if lerr != nil || p == nil {
				err = fmt.Errorf("harness: client %d's history does not hold ghost %d at the server's tick %d: %v", i, id, tick, lerr)
				return
			}
			if d, same := h.coder.Diff(schema, cid, p, sa.Get(se, sids[k])); !same {
				predicted, server := d.Values()
				err = fmt.Errorf("harness: client %d ghost %d at tick %d: %s.%s predicted %s, server %s",
					i, id, tick, d.Component, d.Field, predicted, server)
				return
			}
		}
	})
	if err == nil && owned == 0 {
		return fmt.Errorf("harness: client %d owns no ghost", i)
	}
	return err
}
