package codec

import "fmt"

// PredictionMode says which clients predict the ghosts of a type: run the
// game's prediction systems on them ahead of the server and reconcile
// them with its snapshots. A client shows every ghost it does not predict
// in the past, interpolated between received states. The server
// simulates every ghost whatever its mode. Set it with
// [SchemaBuilder.Predict]; it is part of [Schema.Hash].
type PredictionMode uint8

const (
	// PredictOwner: only the owner's client predicts the ghost (a
	// player); the others interpolate it. A ghost the server owns is
	// interpolated everywhere. The default.
	PredictOwner PredictionMode = iota
	// PredictAll: every client predicts the ghost, whoever owns it: for
	// things whose motion clients can compute from the replicated state
	// (a moving platform, a ball, a door), so that an owned ghost
	// touching them is predicted against where they are, not where they
	// were. Only the owner's client writes its input onto it.
	PredictAll
	// PredictNone: no client predicts the ghost, not even its owner's,
	// which shows it in the past like any other client does (its input
	// still goes to the server).
	PredictNone
)

// String returns "owner", "all" or "none".
func (m PredictionMode) String() string {
	switch m {
	case PredictOwner:
		return "owner"
	case PredictAll:
		return "all"
	case PredictNone:
		return "none"
	}
	return fmt.Sprintf("PredictionMode(%d)", uint8(m))
}

// Predict sets which clients predict the ghosts of type id (PredictOwner
// until set). An unknown type or mode makes Build fail; after Build it
// changes nothing.
func (b *SchemaBuilder) Predict(id GhostTypeID, mode PredictionMode) {
	if b.built {
		return
	}
	if int(id) >= len(b.s.types) {
		b.fail(fmt.Errorf("netsync: prediction mode of ghost type ID %d outside 0..%d", id, len(b.s.types)-1))
		return
	}
	if mode > PredictNone {
		b.fail(fmt.Errorf("netsync: ghost type %q: prediction mode %d outside 0..%d", b.s.types[id].Name, mode, PredictNone))
		return
	}
	b.s.types[id].Mode = mode
}
