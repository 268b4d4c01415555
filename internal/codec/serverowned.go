package codec

import "fmt"

// ServerOwned declares components of ghost type id that clients predicting
// its ghosts do not predict: the server alone decides them (health that
// another player's shot takes, a score, a respawn time). A predicting
// client takes their values from each snapshot as it arrives, never
// compares them with its prediction and never rolls back for them; its
// prediction may read them and must not write them. An unknown type or a
// component the type does not replicate makes Build fail; declaring a
// component twice changes nothing, and so does a call after Build. The
// declaration is part of [Schema.Hash].
func (b *SchemaBuilder) ServerOwned(id GhostTypeID, comps ...ComponentID) {
	if b.built {
		return
	}
	if int(id) >= len(b.s.types) {
		b.fail(fmt.Errorf("netsync: server-owned components of ghost type ID %d outside 0..%d", id, len(b.s.types)-1))
		return
	}
	t := &b.s.types[id]
	for _, c := range comps {
		i := t.index(c)
		if i < 0 {
			name := fmt.Sprintf("ID %d", c)
			if int(c) < len(b.s.comps) {
				name = b.s.comps[c].name
			}
			b.fail(fmt.Errorf("netsync: ghost type %q: server-owned component %s is not one of its components", t.Name, name))
			return
		}
		t.ServerOwned |= 1 << i
	}
}

// index returns the position of component c in the type, or -1.
func (t *GhostType) index(c ComponentID) int {
	for i, d := range t.Components {
		if d == c {
			return i
		}
	}
	return -1
}

// Owned reports whether the ci-th component of the type (its position in
// Components) is server-owned (see [SchemaBuilder.ServerOwned]).
func (t *GhostType) Owned(ci int) bool { return t.ServerOwned&(1<<ci) != 0 }
