package protocol

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// MaxDatagram is the largest packet ghostwire writes: one datagram that
// crosses the internet without fragmentation.
const MaxDatagram = 1200

// MaxGhostsPerSnapshot bounds the ghosts a decoder accepts in one snapshot.
const MaxGhostsPerSnapshot = 1024

// MaxDespawnsPerSnapshot bounds the despawn records of one snapshot; a
// writer refuses more (the rest wait for the next snapshot) and a decoder
// refuses a snapshot announcing more.
const MaxDespawnsPerSnapshot = 256

// MaxSnapshotParts bounds the packets of one tick's snapshot to one
// connection.
const MaxSnapshotParts = 4

// headerReserve is room kept for the snapshot header in the byte budget.
const headerReserve = 40

// MaxBaseDistance bounds how many ticks a ghost record's baseline may lie
// before its snapshot: a fixed-size field (at most 3 bytes) however long
// the match runs. A server whose baseline is older sends the full state.
const MaxBaseDistance = 1<<16 - 1

// SnapshotHeader is the per-connection part of a snapshot.
type SnapshotHeader struct {
	// Tick is the server tick whose end state the snapshot holds.
	Tick ecs.Tick
	// Part numbers the snapshot's packets within its tick, below
	// MaxSnapshotParts: part 0 carries the despawns and the client's own
	// ghosts; further parts carry more ghosts when the connection's
	// budget allows.
	Part uint8
	// Confirmed is the newest input tick of the receiving client the
	// server has applied, when HasConfirmed, held back before a recent
	// tick that ran without its input (see InputBuffer.Confirmed): the
	// client resends every input after it.
	Confirmed    ecs.Tick
	HasConfirmed bool
	// Lead is how many ticks before it was needed the client's input
	// arrived lately (a window minimum, 1/256 tick precision): the clock
	// sync feedback. Negative means late.
	Lead float32
	// EchoTime is the newest ClientTime received from the client and Hold
	// the ms the server held it before sending: RTT = now − EchoTime − Hold.
	EchoTime uint32
	Hold     uint16
}

// SnapshotWriter encodes snapshots within a byte budget: despawn records
// first, then ghosts in the caller's priority order; a ghost that does
// not fit is left out. A snapshot need not hold every ghost: absence
// never means despawn. A writer is reused tick after tick without
// allocating.
type SnapshotWriter struct {
	schema   *codec.Schema
	max      int // bytes
	budget   int // bits for the despawn and ghost sections
	ghosts   bitstream.Writer
	gbuf     []byte
	out      bitstream.Writer
	obuf     []byte
	despawns []components.GhostID
	count    int
	kept     int // bits of the ghost section that fit
	full     bool
	lastID   int64
	tick     ecs.Tick
	base     ecs.Tick // the default baseline, when hasBase
	hasBase  bool
	st       codec.Stream
}

// NewSnapshotWriter returns a writer for packets of at most maxBytes
// (MaxDatagram when 0). It errors when maxBytes is outside 64..MaxDatagram.
func NewSnapshotWriter(s *codec.Schema, maxBytes int) (*SnapshotWriter, error) {
	if maxBytes == 0 {
		maxBytes = MaxDatagram
	}
	if maxBytes < 64 || maxBytes > MaxDatagram {
		return nil, fmt.Errorf("netsync: snapshot size %d outside 64..%d bytes", maxBytes, MaxDatagram)
	}
	return &SnapshotWriter{
		schema: s,
		max:    maxBytes,
		budget: (maxBytes - headerReserve) * 8,
		gbuf:   make([]byte, 0, maxBytes+64),
		obuf:   make([]byte, 0, maxBytes+64),
	}, nil
}

// Budget sets the size of the snapshots begun from now on, below the
// writer's own maximum: a connection's byte budget (a token bucket) may
// allow less than a full packet. It errors when maxBytes is outside
// 64..the writer's maximum.
func (s *SnapshotWriter) Budget(maxBytes int) error {
	if maxBytes < 64 || maxBytes > s.max {
		return fmt.Errorf("netsync: snapshot budget %d outside 64..%d bytes", maxBytes, s.max)
	}
	s.budget = (maxBytes - headerReserve) * 8
	return nil
}

// Begin starts a snapshot of the given server tick.
func (s *SnapshotWriter) Begin(tick ecs.Tick) {
	s.ghosts.Reset(s.gbuf[:0])
	s.count, s.kept, s.full, s.lastID = 0, 0, false, 0
	s.tick, s.hasBase = tick, false
	s.despawns = s.despawns[:0]
}

// DefaultBase sets the snapshot's default baseline, before any ghost is
// added: a record delta-encoded against it names it with one bit. The
// server passes the newest snapshot the client acknowledged. It panics
// when ghosts were already added or base is not 1..MaxBaseDistance ticks
// before the snapshot (bugs, not bad input).
func (s *SnapshotWriter) DefaultBase(base ecs.Tick) {
	if d := s.tick.Sub(base); s.count > 0 || s.full || d < 1 || d > MaxBaseDistance {
		panic(fmt.Sprintf("netsync: default baseline %d for snapshot %d after ghosts or outside 1..%d ticks before", base, s.tick, MaxBaseDistance))
	}
	s.base, s.hasBase = base, true
}

// Despawn adds a despawn record for ghost id, before any AddGhost of the
// snapshot. It returns false, and leaves the record out, when
// MaxDespawnsPerSnapshot are already in or it does not fit in the
// budget. It panics when id is 0 or ghosts were already added (bugs, not
// bad input).
func (s *SnapshotWriter) Despawn(id components.GhostID) bool {
	if id == 0 || s.count > 0 || s.full {
		panic(fmt.Sprintf("netsync: despawn of ghost %d after ghosts or of ID 0", id))
	}
	if len(s.despawns) == MaxDespawnsPerSnapshot || (len(s.despawns)+1)*32 > s.budget {
		return false
	}
	s.despawns = append(s.despawns, id)
	return true
}

// AddGhost appends one ghost: its ID and type, its owner and spawn tick
// when identity is true (until the client acknowledged them), and for
// each component of its type in schema order, a pointer to the value. It
// returns false, and leaves the ghost out, when it does not fit in the
// budget; every later ghost is then left out too. It panics when
// len(values) does not match the ghost type (a bug, not bad input).
func (s *SnapshotWriter) AddGhost(g components.Ghost, identity bool, values []unsafe.Pointer) bool {
	gt, ok := s.schema.GhostType(codec.GhostTypeID(g.Type))
	if !ok || len(gt.Components) != len(values) {
		panic(fmt.Sprintf("netsync: ghost %d of type %d given %d values", g.ID, g.Type, len(values)))
	}
	if s.full {
		return false
	}
	s.head(g, identity)
	s.ghosts.WriteBits(0, 2) // no baseline: every value follows; not said to rest
	for i, c := range gt.Components {
		s.schema.Encode(&s.st, c, &s.ghosts, values[i])
	}
	return s.fit(g)
}

// EncodedGhost is a ghost record whose values a server encoded once per
// tick (see [EncodeComponent]) for every connection's snapshot.
type EncodedGhost struct {
	components.Ghost
	// Identity sends Owner and Spawned (until the client acknowledged
	// them).
	Identity bool
	// HasBase delta-encodes the record against the client's state of the
	// ghost at Base: only the components set in Changed follow, and the
	// client takes the others from that state. Without a baseline every
	// component follows and Changed is ignored.
	HasBase bool
	Base    ecs.Tick
	Changed uint32 // bit i: the ghost type's i-th component
	// Rest, for a record without a baseline, says the ghost rests: the
	// client holds it rather than wait for a record saying so (a server
	// sets it on the spawn records of ghosts long unchanged). A record
	// with a baseline rests when Changed is 0.
	Rest bool
	// Src holds the encoded components: the i-th is the Bits[2i+1] bits
	// from bit Bits[2i].
	Src  []byte
	Bits []int32
	// BaseSrc, when not nil, holds the components' encodings at Base,
	// laid out as Src: the changed components then carry each field
	// relative to its code there (see codec.Schema.EncodeRelative), which
	// the client decodes against its state at Base. BaseFrom is the tick
	// that encoding was first current: two records whose baselines share
	// it have the same body.
	BaseSrc  []byte
	BaseFrom ecs.Tick
}

// RelativeWindow bounds how far back a record's baseline may lie for its
// values to be coded relative to it: a client keeps each ghost's states
// of the last RelativeWindow ticks (and its newest), so a server codes
// relative only to a baseline at most this far back.
const RelativeWindow = 32

// EncodeComponent appends component c's value at p, as a ghost record
// carries it, to w: what a server encodes once per tick for an
// [EncodedGhost].
func EncodeComponent(schema *codec.Schema, st *codec.Stream, w *bitstream.Writer, c codec.ComponentID, p unsafe.Pointer) {
	schema.Encode(st, c, w, p)
}

// AddEncoded is AddGhost with the values already encoded: their bits are
// copied, not encoded again, and with a baseline only the changed ones.
// It returns false, leaving the ghost and every later one out, when the
// record does not fit. It panics when g's type is unknown, Bits does not
// describe its components, or the baseline is not 1..MaxBaseDistance
// ticks before the snapshot (bugs, not bad input).
func (s *SnapshotWriter) AddEncoded(g *EncodedGhost) bool {
	s.check(g)
	if s.full {
		return false
	}
	s.head(g.Ghost, g.Identity)
	writeBody(&s.ghosts, s.schema, g, s.tick, s.hasBase && g.Base == s.base)
	return s.fit(g.Ghost)
}

// check panics unless g's type is known, its Bits describe its
// components and its baseline lies 1..MaxBaseDistance ticks before the
// snapshot.
func (s *SnapshotWriter) check(g *EncodedGhost) {
	gt, ok := s.schema.GhostType(codec.GhostTypeID(g.Type))
	if !ok || len(g.Bits) != 2*len(gt.Components) {
		panic(fmt.Sprintf("netsync: ghost %d of type %d given %d bit ranges", g.ID, g.Type, len(g.Bits)))
	}
	if d := s.tick.Sub(g.Base); g.HasBase && (d < 1 || d > MaxBaseDistance) {
		panic(fmt.Sprintf("netsync: ghost %d baseline %d outside 1..%d ticks before snapshot %d", g.ID, g.Base, MaxBaseDistance, s.tick))
	}
	if d := s.tick.Sub(g.Base); g.BaseSrc != nil && (!g.HasBase || d > RelativeWindow) {
		panic(fmt.Sprintf("netsync: ghost %d coded relative to baseline %d (%v), not 1..%d ticks before snapshot %d", g.ID, g.Base, g.HasBase, RelativeWindow, s.tick))
	}
}

// writeBody writes what follows g's record head in a snapshot of tick:
// its baseline (def: the snapshot's default one) and its values, the
// changed ones relative to their baseline codes when g.BaseSrc says so.
func writeBody(w *bitstream.Writer, schema *codec.Schema, g *EncodedGhost, tick ecs.Tick, def bool) {
	n := len(g.Bits) / 2 // at most 32 (a schema's limit)
	switch {
	case !g.HasBase: // the delta bit, then the rest bit
		if g.Rest {
			w.WriteBits(0b10, 2)
		} else {
			w.WriteBits(0, 2)
		}
	case def: // the delta and default bits, then a changed bit per component
		w.WriteBits(0b11|uint64(g.Changed)<<2, 2+n)
	default:
		writeOtherBase(w, tick, g.Base)
		w.WriteBits(uint64(g.Changed), n)
	}
	changed := g.Changed & (1<<n - 1) // bits beyond the type's components are not on the wire
	relative := g.HasBase && changed != 0 && g.BaseSrc != nil
	if g.HasBase && changed != 0 {
		w.WriteBool(relative)
	}
	var comps []codec.ComponentID
	if relative {
		gt, _ := schema.GhostType(codec.GhostTypeID(g.Type))
		comps = gt.Components
	}
	for i := range n {
		switch {
		case g.HasBase && changed&(1<<i) == 0:
		case relative:
			schema.EncodeRelative(comps[i], w, g.Src, int(g.Bits[2*i]), g.BaseSrc, int(g.Bits[2*i]))
		default:
			w.CopyBits(g.Src, int(g.Bits[2*i]), int(g.Bits[2*i+1]))
		}
	}
}

// writeOtherBase writes the head of a body delta-encoded against base, not
// the snapshot's default baseline: the delta bit, not the default bit,
// then the baseline's distance back from tick.
func writeOtherBase(w *bitstream.Writer, tick, base ecs.Tick) {
	w.WriteBits(0b01, 2)
	w.WriteUvarint(uint64(tick.Sub(base)))
}

// RecordBody is what follows a ghost record's head (ID, type, identity)
// in a snapshot: its baseline and values. A record with no baseline, or
// delta-encoded against the snapshot's default baseline, has the same
// body in every snapshot that carries the same components while the
// ghost's encoding does not change (against another baseline, the same
// but for the baseline's distance), so a server encodes it once with
// Encode and adds it to each such snapshot with AddBody, and calls Reset
// when the ghost's encoding changes. The zero RecordBody holds none; one
// is reused without allocating once its buffer has grown.
type RecordBody struct {
	id       components.GhostID
	valid    bool
	hasBase  bool
	rest     bool
	relative bool
	baseFrom ecs.Tick
	changed  uint32
	nbits    int
	tb       int // bits of a ghost type in a head, for the runs the body goes into
	w        bitstream.Writer
	buf      []byte // the body, then 8 zero bytes: AddBody's copy reads whole words
}

// For reports whether b holds the body of g's record: the same ghost,
// the same baseline use and, with a baseline, the same changed
// components (without one, the same rest bit) and, coded relative to a
// baseline, the same baseline encoding, encoded since the last Reset.
func (b *RecordBody) For(g *EncodedGhost) bool {
	return b.valid && b.id == g.ID && b.hasBase == g.HasBase && (g.HasBase && b.changed == g.Changed || !g.HasBase && b.rest == g.Rest) &&
		b.relative == (g.BaseSrc != nil) && (g.BaseSrc == nil || b.baseFrom == g.BaseFrom)
}

// Encode makes b the body of g's record in the snapshots that hold it
// with no baseline or against their default baseline, g's values coded
// by schema.
func (b *RecordBody) Encode(schema *codec.Schema, g *EncodedGhost) {
	// Every component, the flags and the padding, a relative field at most
	// 3 bits over its code (at least 8): the buffer grows once, not body
	// by body.
	if need := len(g.Src)*3/2 + 24; cap(b.buf) < need {
		b.buf = make([]byte, 0, need)
	}
	b.w.Reset(b.buf)
	writeBody(&b.w, schema, g, 0, true)
	b.nbits = b.w.BitLen()
	b.buf = append(b.w.Bytes(), 0, 0, 0, 0, 0, 0, 0, 0)
	b.id, b.valid, b.hasBase, b.changed, b.rest = g.ID, true, g.HasBase, g.Changed, g.Rest
	b.relative, b.baseFrom, b.tb = g.BaseSrc != nil, g.BaseFrom, typeBits(schema)
}

// Reset forgets b's body: For reports false until the next Encode.
func (b *RecordBody) Reset() { b.valid = false }

// AddBody is AddEncoded with the record's body taken from b, which holds
// g's (see RecordBody.For): the per-connection work is the head and one
// copy. With a baseline other than the snapshot's default one (or in a
// snapshot without one) the baseline's distance is written between the
// body's first two bits and the rest of it, which are the same. It
// panics when b does not hold g's body, or as AddEncoded does (bugs, not
// bad input).
func (s *SnapshotWriter) AddBody(g *EncodedGhost, b *RecordBody) bool {
	s.check(g)
	if !b.For(g) {
		panic(fmt.Sprintf("netsync: record body of ghost %d (valid %v, baseline %v, changed %#x) for ghost %d (baseline %v, changed %#x)",
			b.id, b.valid, b.hasBase, b.changed, g.ID, g.HasBase, g.Changed))
	}
	if s.full {
		return false
	}
	s.head(g.Ghost, g.Identity)
	if g.HasBase && !(s.hasBase && g.Base == s.base) { // the body's first 2 bits say the default baseline
		writeOtherBase(&s.ghosts, s.tick, g.Base)
		s.ghosts.CopyBits(b.buf, 2, b.nbits-2)
	} else {
		s.ghosts.CopyBits(b.buf, 0, b.nbits)
	}
	return s.fit(g.Ghost)
}

// head writes a ghost record's ID delta, type and identity.
func (s *SnapshotWriter) head(g components.Ghost, identity bool) {
	writeHead(&s.ghosts, g, identity, s.lastID, typeBits(s.schema))
}

// typeBits returns the bits of a ghost type in a record head: as many as
// the schema's types need.
func typeBits(s *codec.Schema) int { return bits.Len(uint(max(1, s.NumGhostTypes()) - 1)) }

// writeHead writes to w the head of g's record after the record of ghost
// last (0: the first record), its type in tb bits.
func writeHead(w *bitstream.Writer, g components.Ghost, identity bool, last int64, tb int) {
	if zz := uint64(int64(g.ID)-last)<<1 ^ uint64((int64(g.ID)-last)>>63); zz < 0x80 && !identity {
		w.WriteBits(zz|uint64(g.Type)<<8, 9+tb) // the common case in one write: a one-group varint, no identity
		return
	}
	w.WriteVarint(int64(g.ID) - last)
	w.WriteBits(uint64(g.Type), tb)
	w.WriteBool(identity)
	if identity { // fixed sizes: nothing here grows with uptime or connection IDs
		w.WriteBits(uint64(g.Owner), 32)
		w.WriteBits(uint64(g.Spawned), 32)
	}
}

// fit keeps the record just written when it fits the budget.
func (s *SnapshotWriter) fit(g components.Ghost) bool {
	if s.ghosts.BitLen()+32*len(s.despawns) > s.budget {
		s.full = true
		return false
	}
	s.kept = s.ghosts.BitLen()
	s.count++
	s.lastID = int64(g.ID)
	return true
}

// SnapshotMark is a point in a snapshot being written (see
// SnapshotWriter.Mark).
type SnapshotMark struct {
	bits, count, kept int
	lastID            int64
	full              bool
}

// Mark returns the point the snapshot has reached, for Rewind.
func (s *SnapshotWriter) Mark() SnapshotMark {
	return SnapshotMark{bits: s.ghosts.BitLen(), count: s.count, kept: s.kept, lastID: s.lastID, full: s.full}
}

// Rewind drops every ghost record added after m was taken, in the same
// snapshot: a server that tried an order and found not everything fits
// writes them again in priority order.
func (s *SnapshotWriter) Rewind(m SnapshotMark) {
	s.ghosts.Truncate(m.bits)
	s.count, s.kept, s.lastID, s.full = m.count, m.kept, m.lastID, m.full
}

// Count returns the ghosts that fit so far.
func (s *SnapshotWriter) Count() int { return s.count }

// Room returns how many bits the snapshot being written still has for
// records: its budget less the records kept and the despawns so far.
// A sender sizes its choice of records by it before writing them.
func (s *SnapshotWriter) Room() int { return max(0, s.budget-s.kept-32*len(s.despawns)) }

// Full reports whether a ghost was left out for lack of room.
func (s *SnapshotWriter) Full() bool { return s.full }

// Finish writes the header h, the despawn records (in ascending ID order)
// and the ghosts, and returns the packet, valid until the next Begin.
func (s *SnapshotWriter) Finish(h *SnapshotHeader) []byte {
	w := &s.out
	begin(w, s.obuf, MsgSnapshot)
	w.WriteBits(uint64(h.Tick), 32)
	if h.Part >= MaxSnapshotParts {
		panic(fmt.Sprintf("netsync: snapshot part %d outside 0..%d", h.Part, MaxSnapshotParts-1))
	}
	w.WriteBits(uint64(h.Part), 2)
	if d := h.Tick.Sub(h.Confirmed); !h.HasConfirmed || d < -1<<20 || d > 1<<20 {
		w.WriteBool(false)
	} else {
		w.WriteBool(true)
		w.WriteVarint(int64(d))
	}
	lead := math.Round(float64(h.Lead) * 256)
	if math.IsNaN(lead) { // min and max pass NaN on, and NaN to int64 is implementation-defined
		lead = 0
	}
	w.WriteVarint(int64(max(-1<<20, min(1<<20, lead))))
	w.WriteBits(uint64(h.EchoTime), 32)
	w.WriteBits(uint64(h.Hold), 16)
	if s.hasBase { // the default baseline's distance; 0 = none
		w.WriteUvarint(uint64(h.Tick.Sub(s.base)))
	} else {
		w.WriteUvarint(0)
	}
	slices.Sort(s.despawns)
	w.WriteUvarint(uint64(len(s.despawns)))
	for _, id := range s.despawns {
		w.WriteBits(uint64(id), 32)
	}
	w.WriteUvarint(uint64(s.count))
	// The records start at a byte boundary, so they are copied as bytes:
	// this copy is the per-connection cost of the bits a server encoded
	// once per tick.
	w.WriteBits(0, -w.BitLen()&7)
	ghosts := s.ghosts.Bytes()
	s.gbuf = ghosts[:0] // keep capacity an oversized ghost made it grow to
	out := w.Bytes()
	out = append(out, ghosts[:(s.kept+7)/8]...)
	if k := s.kept & 7; k != 0 { // clear what a record that did not fit left in the last byte
		out[len(out)-1] &= 1<<k - 1
	}
	s.obuf = out[:0]
	return out
}

// Snapshot is a decoded snapshot. Component values live in an internal
// buffer, aligned for their types, valid until the next decode into the same
// Snapshot; a Snapshot is reused without allocating once its buffers have
// grown to the largest snapshot seen.
type Snapshot struct {
	SnapshotHeader
	// Despawned lists the ghosts the server despawned, in ascending order:
	// they will not appear again.
	Despawned []components.GhostID
	// DefaultBase is the baseline the snapshot's delta records name with
	// one bit, when HasDefaultBase.
	DefaultBase    ecs.Tick
	HasDefaultBase bool
	Ghosts         []GhostState
	data           []byte
	rel            []uint64 // the relative records' fields as read (see codec.Schema.ReadRelative)
	schema         *codec.Schema
	r              bitstream.Reader
	st             codec.Stream
	coder          codec.Coder
}

// Resolve sets the present components of the gi-th ghost, a Relative
// record, from the fields it carried and base, the receiver's state of
// the ghost at its baseline tick laid out as a snapshot holds a ghost
// (each component at the next 8-aligned offset, in the ghost type's
// order), and clears Relative. A field decoded beyond its range is an
// error naming the ghost and field; the ghost's values are then
// unspecified and the record must be dropped. It panics when the ghost is
// not Relative or base is shorter than the ghost's components (bugs).
// Steady state it allocates nothing.
func (s *Snapshot) Resolve(gi int, base []byte) error {
	g := &s.Ghosts[gi]
	if !g.Relative {
		panic(fmt.Sprintf("netsync: ghost %d resolved without relative values", g.ID))
	}
	gt, _ := s.schema.GhostType(codec.GhostTypeID(g.Type))
	off, at, rel := g.off, 0, g.rel
	for ci, c := range gt.Components {
		size := align8(s.schema.ComponentSize(c))
		if g.Present&(1<<ci) != 0 {
			nf := s.schema.NumFields(c)
			if err := s.coder.ApplyRelative(s.schema, c, s.rel[rel:rel+nf], unsafe.Pointer(unsafe.SliceData(base[at:at+size])), unsafe.Pointer(unsafe.SliceData(s.data[off:off+size]))); err != nil {
				return fmt.Errorf("netsync: ghost %d component %v: %w", g.ID, s.schema.ComponentName(c), err)
			}
			rel += nf
		}
		off += size
		at += size
	}
	g.Relative = false
	return nil
}

// GhostState is one ghost of a decoded snapshot. Its Owner and Spawned
// are known only when Identity is set; otherwise they are zero and the
// receiver knows them from an earlier snapshot.
type GhostState struct {
	components.Ghost
	Identity bool
	// HasBase marks a record delta-encoded against the receiver's state
	// of the ghost at Base: only the components set in Present came; the
	// others are zero until the receiver fills them from that state (see
	// ghostreg.ClientRegister.Complete). Without a baseline every bit of
	// Present is set.
	HasBase bool
	Base    ecs.Tick
	Present uint32
	// Rest says the ghost rests at this state: a record with a baseline
	// and no changed component, or one without a baseline whose rest bit
	// is set.
	Rest bool
	// Relative marks a record whose present components came relative to
	// their values at Base: they are zero until the receiver resolves
	// them against that state (see Snapshot.Resolve).
	Relative bool
	off      int // offset of the first component value in data
	rel      int // with Relative: the first of its fields' words in Snapshot.rel
}

func align8(n int) int { return (n + 7) &^ 7 }

// at returns a pointer to b[off]; off may be len(b) for a zero-size value
// stored last, whose pointer is never read or written through.
func at(b []byte, off int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b[off:])) }

// Value returns a pointer to the value of the ci-th component (in the
// ghost type's order) of the gi-th ghost. It panics on indexes out of range.
func (s *Snapshot) Value(gi, ci int) unsafe.Pointer {
	g := &s.Ghosts[gi]
	gt, _ := s.schema.GhostType(codec.GhostTypeID(g.Type))
	off := g.off
	for _, c := range gt.Components[:ci] {
		off += align8(s.schema.ComponentSize(c))
	}
	_ = gt.Components[ci]
	return at(s.data, off)
}

// DecodeSnapshot decodes a snapshot packet into s, checking every value:
// an unknown ghost type, a ghost or despawn count beyond what the packet
// can hold, MaxGhostsPerSnapshot or MaxDespawnsPerSnapshot, despawn IDs
// not ascending, a duplicate ghost ID, a codec error or trailing garbage
// is an error, and s is then unspecified.
func DecodeSnapshot(p []byte, schema *codec.Schema, s *Snapshot) error {
	r := &s.r // codecs take the reader through an interface: keep it off the heap per call
	if err := open(r, p, MsgSnapshot); err != nil {
		return err
	}
	s.schema = schema
	tick, _ := r.ReadBits(32)
	part, _ := r.ReadBits(2)
	h := SnapshotHeader{Tick: ecs.Tick(tick), Part: uint8(part)}
	if has, _ := r.ReadBool(); has {
		d, err := r.ReadVarint()
		if err != nil {
			return err
		}
		// The writer sends confirmed ticks within 2^20 of the snapshot's.
		if d < -1<<20 || d > 1<<20 {
			return fmt.Errorf("netsync: snapshot confirmed tick %d ticks before tick %d, outside ±%d: %w", d, tick, 1<<20, bitstream.ErrOutOfRange)
		}
		h.Confirmed, h.HasConfirmed = h.Tick.Add(-int(d)), true
	}
	lead, _ := r.ReadVarint()
	if lead < -1<<20 || lead > 1<<20 {
		return fmt.Errorf("netsync: snapshot lead %d/256 outside ±%d: %w", lead, 1<<20, bitstream.ErrOutOfRange)
	}
	h.Lead = float32(lead) / 256
	echo, _ := r.ReadBits(32)
	hold, _ := r.ReadBits(16)
	baseline, _ := r.ReadUvarint()
	despawns, err := r.ReadUvarint()
	if err != nil {
		return err
	}
	h.EchoTime, h.Hold = uint32(echo), uint16(hold)
	if baseline > MaxBaseDistance {
		return fmt.Errorf("netsync: snapshot default baseline %d ticks back, outside 0..%d: %w", baseline, MaxBaseDistance, bitstream.ErrOutOfRange)
	}
	defBase := h.Tick.Add(-int(baseline))
	if despawns > MaxDespawnsPerSnapshot || int(despawns)*32 > r.Remaining() {
		return fmt.Errorf("netsync: snapshot announces %d despawns; at most %d fit in %d bits and %d are allowed: %w",
			despawns, r.Remaining()/32, r.Remaining(), MaxDespawnsPerSnapshot, bitstream.ErrOutOfRange)
	}
	s.Despawned = s.Despawned[:0]
	for range despawns {
		v, _ := r.ReadBits(32)
		if v == 0 || len(s.Despawned) > 0 && components.GhostID(v) <= s.Despawned[len(s.Despawned)-1] {
			return fmt.Errorf("netsync: despawn of ghost %d: not above the previous one and not 0: %w", v, bitstream.ErrMalformed)
		}
		s.Despawned = append(s.Despawned, components.GhostID(v))
	}
	count, err := r.ReadUvarint()
	if err != nil {
		return err
	}
	// Every ghost takes at least its ID, type, identity and delta bits.
	tb := typeBits(schema)
	if minBits := 10 + tb; count > MaxGhostsPerSnapshot || int(count)*minBits > r.Remaining() {
		return fmt.Errorf("netsync: snapshot announces %d ghosts; at most %d fit in %d bits and %d are allowed: %w",
			count, r.Remaining()/minBits, r.Remaining(), MaxGhostsPerSnapshot, bitstream.ErrOutOfRange)
	}
	pad, err := r.ReadBits(-r.Pos() & 7)
	if err != nil {
		return err
	}
	if pad != 0 {
		return fmt.Errorf("netsync: snapshot padding before the ghosts is %#x, not 0: %w", pad, bitstream.ErrMalformed)
	}
	s.SnapshotHeader = h
	s.DefaultBase, s.HasDefaultBase = defBase, baseline != 0
	s.Ghosts = s.Ghosts[:0]
	s.data = s.data[:0]
	s.rel = s.rel[:0]
	var id int64
	for i := 0; i < int(count); i++ {
		d, _ := r.ReadVarint()
		typ, _ := r.ReadBits(tb)
		identity, err := r.ReadBool()
		if err != nil {
			return err
		}
		var owner, spawned uint64
		if identity {
			owner, _ = r.ReadBits(32)
			if spawned, err = r.ReadBits(32); err != nil {
				return err
			}
		}
		id += d
		if id < 1 || id > math.MaxUint32 {
			return fmt.Errorf("netsync: ghost ID %d outside 1..%d: %w", id, uint32(math.MaxUint32), bitstream.ErrOutOfRange)
		}
		if typ >= uint64(schema.NumGhostTypes()) {
			return fmt.Errorf("netsync: ghost %d has type %d outside 0..%d: %w", id, typ, schema.NumGhostTypes()-1, bitstream.ErrOutOfRange)
		}
		for j := range s.Ghosts {
			if s.Ghosts[j].ID == components.GhostID(id) {
				return fmt.Errorf("netsync: ghost %d appears twice: %w", id, bitstream.ErrMalformed)
			}
		}
		g := GhostState{Ghost: components.Ghost{ID: components.GhostID(id), Type: uint16(typ), Owner: components.ConnID(owner), Spawned: ecs.Tick(spawned)},
			Identity: identity, off: len(s.data)}
		if g.HasBase, err = r.ReadBool(); err != nil {
			return err
		}
		if !g.HasBase {
			if g.Rest, err = r.ReadBool(); err != nil {
				return err
			}
		} else {
			def, err := r.ReadBool()
			if err != nil {
				return err
			}
			switch {
			case def && baseline == 0:
				return fmt.Errorf("netsync: ghost %d names the default baseline of a snapshot without one: %w", id, bitstream.ErrMalformed)
			case def:
				g.Base = defBase
			default:
				d, err := r.ReadUvarint()
				if err != nil {
					return err
				}
				if d < 1 || d > MaxBaseDistance {
					return fmt.Errorf("netsync: ghost %d baseline %d ticks back, outside 1..%d: %w", id, d, MaxBaseDistance, bitstream.ErrOutOfRange)
				}
				g.Base = h.Tick.Add(-int(d))
			}
		}
		gt, _ := schema.GhostType(codec.GhostTypeID(typ))
		size := 0
		for _, c := range gt.Components {
			size += align8(schema.ComponentSize(c))
		}
		s.data = grow(s.data, size)
		off := g.off
		present := uint64(1)<<len(gt.Components) - 1
		if g.HasBase {
			if present, err = r.ReadBits(len(gt.Components)); err != nil {
				return err
			}
			g.Rest = present == 0
			if !g.Rest {
				if g.Relative, err = r.ReadBool(); err != nil {
					return err
				}
				g.rel = len(s.rel)
			}
		}
		for ci, c := range gt.Components {
			if present&(1<<ci) == 0 {
				off += align8(schema.ComponentSize(c))
				continue
			}
			g.Present |= 1 << ci
			if g.Relative { // decoded against the baseline by Resolve
				if s.rel, err = schema.ReadRelative(c, r, s.rel); err != nil {
					return fmt.Errorf("netsync: ghost %d component %v: %w", id, schema.ComponentName(c), err)
				}
				off += align8(schema.ComponentSize(c))
				continue
			}
			if err := schema.Decode(&s.st, c, r, at(s.data, off)); err != nil {
				return fmt.Errorf("netsync: ghost %d component %v: %w", id, schema.ComponentName(c), err)
			}
			off += align8(schema.ComponentSize(c))
		}
		s.Ghosts = append(s.Ghosts, g)
	}
	if rest := r.Remaining(); rest >= 8 {
		return fmt.Errorf("netsync: %d bits after the last ghost: %w", rest, bitstream.ErrMalformed)
	}
	return nil
}

// grow extends b by n zeroed bytes, keeping the base 8-byte aligned.
func grow(b []byte, n int) []byte {
	if len(b)+n > cap(b) {
		nb := make([]byte, len(b), max(2*cap(b), len(b)+n, 256))
		copy(nb, b)
		b = nb
	}
	b = b[:len(b)+n]
	clear(b[len(b)-n:])
	return b
}
