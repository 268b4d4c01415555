package netsync

import "github.com/ghostwire/ghostwire/internal/codec"

// ServerOwned declares components of ghost type id that the clients
// predicting its ghosts do not predict: the server alone decides them
// (health that other players' shots take, a score, a respawn time). A
// predicting client takes their values from each snapshot as it arrives
// and writes them into its present state, never compares them with its
// prediction and never rolls back for them, so they cause no
// misprediction. Its prediction may read them and must not write them: a
// rollback for another reason writes the server's state of the snapshot's
// tick, theirs included, which is the newest the client has of them, and
// the replay carries it to the present (docs/server-owned.md).
//
// An unknown type or a component the type does not replicate makes Build
// fail; declaring a component twice changes nothing, and so does a call
// after Build. It is part of the schema's hash, so a client and a server that
// disagree are refused. Ghosts of the type that a client interpolates are
// shown as always, every component from the server.
func (b *SchemaBuilder) ServerOwned(id GhostTypeID, comps ...ComponentID) {
	cs := make([]codec.ComponentID, len(comps))
	for i, c := range comps {
		cs[i] = codec.ComponentID(c)
	}
	(*codec.SchemaBuilder)(b).ServerOwned(codec.GhostTypeID(id), cs...)
}
