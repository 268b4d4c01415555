package protocol

import (
	"fmt"
	"slices"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// RecordRun is a run of ghost records as a snapshot holds them, each
// delta-encoded against the snapshot's default baseline, its identity
// known to the client. Such a record's bytes depend on the ghost's body
// (RecordBody) and, in its head, on the ghost written before it, not on
// the connection: snapshots of one tick whose default baselines are
// equally far back hold the same bytes for the same ghosts in the same
// order. A server appends each record to a run once and copies stretches
// of it into every such snapshot with SnapshotWriter.AddRun, which costs
// a copy of their bits, not a record at a time. The zero RecordRun is
// empty; Reset reuses its buffers.
type RecordRun struct {
	ids  []components.GhostID
	typs []uint16
	at   []int32 // bit where each record's head starts, then the run's end
	body []int32 // bit where each record's body starts
	tb   int     // bits of a ghost type in a head (see typeBits)
	w    bitstream.Writer
}

// Reset empties r, keeping its buffers.
func (r *RecordRun) Reset() {
	r.ids, r.typs, r.body = r.ids[:0], r.typs[:0], r.body[:0]
	r.at = append(r.at[:0], 0)
	r.w.Reset(r.w.Bytes())
}

// Reserve makes room in r for records more records of bytes more bytes
// in all, so appending them allocates nothing.
func (r *RecordRun) Reserve(records, bytes int) {
	n := len(r.ids) + records
	r.ids, r.typs = slices.Grow(r.ids, records), slices.Grow(r.typs, records)
	r.at, r.body = slices.Grow(r.at, n+1-len(r.at)), slices.Grow(r.body, records)
	r.w.Grow(bytes)
}

// Room returns how many records and bytes r can take before it grows.
func (r *RecordRun) Room() (records, bytes int) {
	return cap(r.ids) - len(r.ids), r.w.Room()
}

// Len returns the records in r.
func (r *RecordRun) Len() int { return len(r.ids) }

// Last returns the ID of r's last record (0 when empty).
func (r *RecordRun) Last() components.GhostID {
	if len(r.ids) == 0 {
		return 0
	}
	return r.ids[len(r.ids)-1]
}

// Append adds g's record, its body taken from b, which holds it (see
// RecordBody.For). It panics when g carries its identity or has no
// baseline (such records differ per connection), when b does not hold
// g's body, or when g's ID is not above the last record's (a run is in
// ID order, so a stretch's heads hold wherever it is copied after its
// first record's predecessor).
func (r *RecordRun) Append(g *EncodedGhost, b *RecordBody) {
	if g.Identity || !g.HasBase || !b.For(g) || g.ID <= r.Last() {
		panic(fmt.Sprintf("netsync: record of ghost %d (identity %v, baseline %v, body for it %v) appended to a run ending at ghost %d",
			g.ID, g.Identity, g.HasBase, b.For(g), r.Last()))
	}
	if len(r.at) == 0 {
		r.at = append(r.at, 0)
	}
	r.tb = b.tb
	writeHead(&r.w, g.Ghost, false, int64(r.Last()), r.tb)
	r.body = append(r.body, int32(r.w.BitLen()))
	r.w.CopyBits(b.buf, 0, b.nbits)
	r.ids, r.typs = append(r.ids, g.ID), append(r.typs, g.Type)
	r.at = append(r.at, int32(r.w.BitLen()))
}

// AddRun adds r's records from..to-1 to the snapshot, in that order, and
// reports whether they all fit; when they do not, or a ghost was left out
// before, it adds none. The snapshot must have a default baseline (see
// DefaultBase) and the records must hold for it: the caller keeps one run
// per baseline distance. It panics when from..to is not within r or the
// snapshot has no default baseline (bugs).
func (s *SnapshotWriter) AddRun(r *RecordRun, from, to int) bool {
	if from < 0 || to > len(r.ids) || from >= to || !s.hasBase {
		panic(fmt.Sprintf("netsync: records %d..%d of a run of %d added to a snapshot (default baseline %v)", from, to, len(r.ids), s.hasBase))
	}
	if s.full {
		return false
	}
	m := s.Mark()
	start, prev := r.at[from], int64(0)
	if from > 0 {
		prev = int64(r.ids[from-1])
	}
	if prev != s.lastID {
		writeHead(&s.ghosts, components.Ghost{ID: r.ids[from], Type: r.typs[from]}, false, s.lastID, r.tb) // its head differs here: the ghost before it does
		start = r.body[from]
	}
	s.ghosts.CopyBits(r.w.Bytes(), int(start), int(r.at[to]-start))
	if s.ghosts.BitLen()+32*len(s.despawns) > s.budget {
		s.Rewind(m)
		return false
	}
	s.kept = s.ghosts.BitLen()
	s.count += to - from
	s.lastID = int64(r.ids[to-1])
	return true
}
