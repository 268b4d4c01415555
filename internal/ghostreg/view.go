package ghostreg

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// sentRing is how many recent snapshots a View remembers for
// acknowledgements: an ack older than that acknowledges nothing, and the
// records it would have confirmed are sent again. 256 is a second at
// 240 Hz, past any round trip a game is played over.
const sentRing = 256

// relevancyPeriod is how many snapshots a View takes to ask its Relevant
// hook about every ghost once: each snapshot asks about 1/relevancyPeriod
// of them, so scope follows the game within that many snapshots at a
// cost of connections × ghosts / relevancyPeriod calls per tick.
const relevancyPeriod = 8

// View is one connection's replication state on the server: the ghosts
// in its scope, the ghosts the client was told about, whether it
// acknowledged their identity and at which tick it holds each one (the
// baseline its deltas are encoded against), each ghost's send priority,
// and the despawns it has not acknowledged. Make one with
// [ServerRegister.NewView] and Close it when the connection ends.
//
// Only the ghosts of its pending set are considered for a snapshot: those
// that the client does not yet know to rest as they are now (changed
// since the acknowledged baseline, or not yet acknowledged in a record
// that said nothing changed), whose identity is not acknowledged, or that
// the client predicts (its own, and those of PredictAll types: it
// compares its prediction with every snapshot). A ghost the client holds
// at rest costs the view nothing per tick.
type View struct {
	r    *ServerRegister
	conn components.ConnID
	slot int // its index in ServerRegister.views
	// state is its state of every ghost, by serverGhost.idx: its walks
	// read it in order, not one cache line of every ghost.
	state []viewGhost
	// despawns are the despawn records not yet acknowledged, sent in
	// every snapshot until then.
	despawns []components.GhostID
	// sent are the snapshots of the last sentRing ticks, each naming its
	// records' stretch of log: a ring of the latest snapshots' records,
	// logged of them written in all (record i is log[i%len(log)], at
	// the next one's index). The log holds window ticks of widest
	// records (the most one tick wrote), window growing from logTicks
	// while acknowledgements come back later than 3/4 of it: it holds
	// a round trip's records, not sentRing ticks' of room for 1.5 times
	// the widest each (24 times less at a 16-tick round trip). Plain
	// records are not logged (see logRecords).
	sent   [sentRing]sentSnapshot
	log    []sentGhost
	logged uint64
	at     int
	kept   uint64 // the first record a relog kept: the log holds none before
	widest int
	window int
	// pending is the pending set; its first sorted ghosts are in ID
	// order, those after joined since (see sortPending; merge is its
	// spare buffer, few its room for a few).
	pending []*serverGhost
	merge   []*serverGhost
	few     [8]*serverGhost // the joined ghosts while a few are merged in place
	sorted  int
	cand    []candidate
	// next is the candidate the next part of the snapshot of partTick
	// starts at, deferred how many were left after the last part.
	next, deferred int
	// ranked is where the candidates put in snapshot order end, reused
	// how many snapshots since the last walk of the pending set went on
	// down its ranking (resumed: this one did), canResume whether the next
	// may, and idles how many ghosts of the pending set the next walk
	// will drop (see idle), counted while canResume: a resumed snapshot
	// counts the others as deferred, as a walk would.
	ranked, reused, idles int
	// snapshots counts the snapshots begun (part 0), for the turns of
	// the walks of views catching up together (see resume).
	snapshots uint32
	// recBits is the mean bits per record of the view's recent
	// snapshots (see measure); 0 before the first.
	recBits            float32
	resumed, canResume bool
	partTick           gw.Tick
	part               int
	cursor             int // the next ghost the relevancy round asks about
	expireAt           int // the ghost expire checked last
	resyncAt           gw.Tick
	resynced           bool
	acked              gw.Tick
	hasAcked           bool
	// acks0 has bit i set when part 0 of the snapshot of tick ack0Top−i
	// was acknowledged, when hasAck0: with a ghost's plain bits, the
	// acknowledged snapshots that held a plain record of it.
	acks0   uint64
	ack0Top gw.Tick
	hasAck0 bool
	stats   ViewStats
	// Importance, if set, is how much the priority of a ghost (by its
	// entity) grows each snapshot it is not sent; 1 for every ghost when
	// nil. Values below MinImportance (and NaN) count as MinImportance, so
	// every ghost is sent eventually: with n pending ghosts of which k fit
	// a snapshot, none waits more than ⌈n/k⌉·(largest/smallest importance)
	// snapshots. While the connection catches up on more than 512 spawns
	// (a join, a resync) it ranks them at most every 5th snapshot and
	// goes on down that ranking in between, and priorities grow at the
	// ranking snapshots only.
	Importance func(e ecs.Entity) float32
	// Relevant, if set, says whether a ghost (by its entity) is in the
	// connection's scope; every ghost is when nil. A ghost leaving scope is
	// despawned at the client, and comes back with its identity and full
	// state; a ghost never in scope is never on the wire to it. The
	// connection's own ghosts are always in scope. It is asked about each
	// ghost when the ghost spawns and then about every ghost once per
	// 8 snapshots.
	Relevant func(e ecs.Entity) bool
}

// ViewStats counts a View's work.
type ViewStats struct {
	// Deferred counts ghosts that waited for a later snapshot for lack of
	// room.
	Deferred uint64
	// Records counts the ghost records sent; Identities those sent with
	// their identity (owner and spawn tick); Despawns the despawn records
	// sent.
	Records, Identities, Despawns uint64
	// DespawnsDeferred counts despawn records that did not fit a snapshot.
	DespawnsDeferred uint64
	// FullStates counts records sent in full although a snapshot had held
	// the ghost before: the client acknowledged none that held it (a
	// client that never acknowledges gets only full states), or the
	// newest it did was more than MaxBaseDistance ticks old.
	FullStates uint64
	// ScopeExits counts ghosts despawned at the client because they left
	// the connection's scope.
	ScopeExits uint64
	// Resyncs counts the client's requests for full states (see
	// View.Resync) honoured; ResyncsRefused those that came sooner than
	// resyncInterval ticks after the last one.
	Resyncs, ResyncsRefused uint64
	// LateAcks counts acknowledgements of snapshots whose records the
	// view no longer holds: sent more than 256 ticks before, logged over
	// in its record log (see View), or holding plain records (see
	// View.logRecords) and 32 ticks old or more. The log then grows to
	// hold twice as many ticks, up to 256 (a round trip that jumps past
	// the log loses the acks of the ticks it held no more), and a view
	// whose log grew logs every record. They acknowledge nothing, as if
	// lost.
	LateAcks uint64
	// MaxStaleness is the longest, in ticks, that a ghost in scope waited
	// with a change the client had not been sent.
	MaxStaleness int
}

type viewGhost struct {
	priority float32
	// base is the newest acknowledged snapshot that held it in a logged
	// record, or that plainBase found, when hasBase; its baseline is the
	// newer of that and plainBase (see View.base).
	base  gw.Tick
	since gw.Tick // its oldest change not sent yet, when waiting
	// plain has bit i set when the snapshot of tick plainTop−i held a
	// plain record of it (see View.logRecords): one not in the log, whose
	// acknowledgement is found by View.plainBase. Bits from plainTicks
	// up are 0 (a 64-bit mask: its shifts need no test of their count).
	plainTop   gw.Tick
	plain      uint64
	sent       bool // a snapshot held it: the client may have it
	known      bool // the client acknowledged a snapshot holding the identity
	hasBase    bool
	pending    bool // in the view's pending set
	relevant   bool // in the connection's scope
	despawning bool // left scope; back only once the despawn is acknowledged
	waiting    bool
	// rested: the client acknowledged a record saying the ghost rests as
	// it is now, so its interpolation holds rather than extrapolates
	// while the ghost is not sent.
	rested bool
}

type sentSnapshot struct {
	tick     gw.Tick
	valid    bool
	acked    uint8  // the parts acknowledged
	wrote    uint8  // the parts written
	plain    bool   // it holds plain records (see View.logRecords)
	from     uint64 // its first record in View.log
	n        int    // its records
	despawns []components.GhostID
}

// sentGhost is one record of a sent snapshot, in View.log, in 4 bytes:
// its ghost's index (above bit 4), its part (bits 2..3), whether it
// carried the identity (bit 1) and whether it said the ghost rests (bit
// 0: unchanged since its baseline, so the client knows it rests). No
// pointer, so writing one costs no write barrier and the log holds no
// dead ghost; no ID, as an acknowledgement tells a later ghost in the
// same index by its first encoding (slotTicks.born), after the record.
// A view's log is written for every record sent, so its size is most of
// the log's cache footprint: 12 bytes with the ID, 4 without.
type sentGhost uint32

// newSentGhost packs a record of the ghost at index idx (below
// maxGhostSlots).
func newSentGhost(idx int32, part int, ident, rest bool) sentGhost {
	return sentGhost(uint32(idx)<<4 | uint32(part)<<2 | uint32(b2i(ident))<<1 | uint32(b2i(rest)))
}

// A part takes 2 bits: this fails to compile when more parts are allowed.
const _ = uint(4 - protocol.MaxSnapshotParts)

func (sg sentGhost) idx() int32  { return int32(sg >> 4) }
func (sg sentGhost) part() uint  { return uint(sg>>2) & 3 }
func (sg sentGhost) ident() bool { return sg&2 != 0 }
func (sg sentGhost) rest() bool  { return sg&1 != 0 }

// maxGhostSlots bounds the ghost indexes a sentGhost holds: ghosts alive
// at once, and dead ones whose index no spawn took since (about 67 GB of
// server state at 250 bytes a ghost, before any view's).
const maxGhostSlots = 1 << 28

type candidate struct { // 16 bytes: collect writes one per pending ghost and connection
	g        *serverGhost
	priority float32
	class    uint8
	// rest and full note what the candidate's record said: nothing
	// changed since its baseline; a full state though sent before.
	rest, full bool
}

// MinImportance is the least a ghost's priority grows per snapshot.
const MinImportance = 1.0 / 64

// Candidate classes, sent in this order: owned ghosts and spawns never
// wait behind the others.
const (
	classOwned uint8 = iota
	classSpawn
	classOther
)

// NewView returns the replication state of a new connection conn, which
// knows no ghost yet: every ghost in scope is pending.
func (s *ServerRegister) NewView(conn components.ConnID) *View {
	slot := slices.Index(s.views, nil)
	if slot < 0 {
		slot = len(s.views)
		s.views = append(s.views, nil)
	}
	v := &View{r: s, conn: conn, slot: slot, state: make([]viewGhost, s.slots), window: logTicks}
	s.views[slot] = v
	s.nviews++
	for _, g := range s.ghosts {
		v.enter(g, s.b.world.Tick())
	}
	return v
}

// SetRelevant sets v.Relevant and asks it about every ghost now, so a
// connection's first snapshots hold only what is in its scope.
func (v *View) SetRelevant(fn func(e ecs.Entity) bool) {
	v.Relevant = fn
	tick := v.r.b.world.Tick()
	for _, g := range v.r.ghosts {
		v.rescope(g, tick)
	}
}

// Close detaches v from its register; v must not be used afterwards.
func (v *View) Close() {
	if v.slot < len(v.r.views) && v.r.views[v.slot] == v {
		v.r.views[v.slot] = nil
		v.r.nviews--
	}
}

// Conn returns the view's connection.
func (v *View) Conn() components.ConnID { return v.conn }

// Stats returns the counters.
func (v *View) Stats() ViewStats { return v.stats }

// PendingDespawns returns how many despawn records await acknowledgement.
func (v *View) PendingDespawns() int { return len(v.despawns) }

// Pending returns how many ghosts the view considers for its next
// snapshot (some may turn out up to date and leave).
func (v *View) Pending() int { return len(v.pending) }

// inScope asks whether g is in the connection's scope.
func (v *View) inScope(g *serverGhost) bool {
	return g.owner == v.conn || v.Relevant == nil || v.Relevant(g.e)
}

// spawned is called by the register when ghost g is spawned.
func (v *View) spawned(g *serverGhost) { v.enter(g, v.r.b.world.Tick()) }

// enter puts g in scope when it is relevant: the client gets its
// identity and full state.
func (v *View) enter(g *serverGhost, tick gw.Tick) {
	vg := &v.state[g.idx]
	if vg.relevant || vg.despawning || !v.inScope(g) {
		return
	}
	if vg.pending && v.canResume { // out of scope a moment ago, still in the pending set: a candidate again
		v.idles--
	}
	*vg = viewGhost{relevant: true, pending: vg.pending} // still in the pending set if it was: not listed twice
	v.changed(g, tick)
}

// rescope asks again whether g is in scope and moves it in or out.
func (v *View) rescope(g *serverGhost, tick gw.Tick) {
	vg := &v.state[g.idx]
	switch in := v.inScope(g); {
	case in && !vg.relevant:
		v.enter(g, tick)
	case !in && vg.relevant:
		if vg.pending && v.canResume && !v.idle(g, vg) {
			v.idles++
		}
		sent := vg.sent
		*vg = viewGhost{despawning: sent, pending: vg.pending} // dropped from the pending set by the next walk
		if sent {
			v.stats.ScopeExits++
			v.despawns = append(v.despawns, g.id)
		}
	}
}

// scope runs this snapshot's share of the relevancy round.
func (v *View) scope(tick gw.Tick) {
	n := len(v.r.ghosts)
	if v.Relevant == nil || n == 0 {
		return
	}
	k := (n + relevancyPeriod - 1) / relevancyPeriod
	for j := range k {
		v.rescope(v.r.ghosts[(v.cursor+j)%n], tick)
	}
	v.cursor = (v.cursor + k) % n
}

// expire checks one ghost a tick, in turn, for a baseline further back
// than protocol.MaxBaseDistance and forgets it: the ghost's next record
// goes in full, as it would anyway, and no baseline lives the 2³² ticks
// after which its wrapping tick would read as a recent one (a delta
// against a state from 2.3 years ago at 60 Hz, with the changes since
// then unmarked). Each ghost is checked every len(ghosts) ticks.
func (v *View) expire(tick gw.Tick) {
	n := len(v.r.ghosts)
	if n == 0 {
		return
	}
	v.expireAt = (v.expireAt + 1) % n
	vg := &v.state[v.r.ghosts[v.expireAt].idx]
	v.forget(vg, tick)
	if vg.hasBase && age(vg.base, tick) > protocol.MaxBaseDistance {
		vg.hasBase = false
	}
}

// changed is called when g changed at tick (or entered scope): it becomes
// pending, and its wait for an update starts unless one already did.
func (v *View) changed(g *serverGhost, tick gw.Tick) {
	vg := &v.state[g.idx]
	if !vg.relevant {
		return
	}
	if vg.pending && v.canResume && v.idle(g, vg) {
		v.idles--
	}
	vg.change(tick)
	if !vg.pending {
		vg.pending = true
		if n := len(v.pending); v.sorted == n && (n == 0 || v.pending[n-1].id < g.id) {
			v.sorted++
		}
		v.pending = append(v.pending, g)
	}
}

// change notes that the ghost changed at tick: the client no longer
// holds it as it is, and its wait for an update starts unless one
// already did.
func (vg *viewGhost) change(tick gw.Tick) {
	vg.rested = false
	if !vg.waiting {
		vg.waiting, vg.since = true, tick
	}
}

// sortPending puts the pending set in ID order again: the ghosts that
// joined it out of order are sorted and merged with the rest, in time
// linear in the set, not a sort of all of it. Connections whose pending
// sets hold the same ghosts then write them in the same order, so their
// records can be copied from one run (see ServerRegister.RunRecords), and
// each record's ID delta is short.
func (v *View) sortPending() {
	n := v.sorted
	if n == len(v.pending) {
		return
	}
	tail := v.pending[n:]
	slices.SortFunc(tail, func(a, b *serverGhost) int { return cmp.Compare(a.id, b.id) })
	if k := len(tail); n > 0 && v.pending[n-1].id > tail[0].id && k <= len(v.few) {
		// A few joined (ghosts moving again after a rest, most ticks):
		// merged in place from the end, moving only the ghosts after
		// the first of them.
		few := v.few[:copy(v.few[:], tail)]
		for i, w, j := n-1, len(v.pending)-1, k-1; j >= 0; w-- {
			if i >= 0 && v.pending[i].id > few[j].id {
				v.pending[w] = v.pending[i]
				i--
			} else {
				v.pending[w] = few[j]
				j--
			}
		}
		clear(v.few[:])
	} else if n > 0 && v.pending[n-1].id > tail[0].id {
		if cap(v.merge) < len(v.pending) {
			v.merge = make([]*serverGhost, 0, cap(v.pending)) // the pending set's room: merged once a new high, not grown on the way
		}
		merged, head := v.merge[:0], v.pending[:n]
		for len(head) > 0 && len(tail) > 0 {
			if head[0].id < tail[0].id {
				merged, head = append(merged, head[0]), head[1:]
			} else {
				merged, tail = append(merged, tail[0]), tail[1:]
			}
		}
		merged = append(append(merged, head...), tail...)
		clear(v.pending) // let dead ghosts go
		v.pending, v.merge = merged, v.pending[:0]
	}
	v.sorted = len(v.pending)
}

// collect builds this snapshot's candidates from the pending set,
// dropping the ghosts that left it: dead, out of scope, or held by the
// client as they are now and not predicted by it. It notes only the
// ghosts: their priorities and classes matter only when not every one
// fits, and rank sets them then (when every one is sent, each priority
// starts again at 0 whether it grew or not).
func (v *View) collect() {
	// Locals, not the view's fields, in the loop: it runs per connection
	// and pending ghost, and the fields would be loaded and stored back
	// on every write.
	v.sortPending()
	cand := v.cand[:cap(v.cand)]
	if len(cand) < len(v.pending) {
		cand = make([]candidate, len(v.pending)+len(v.pending)/4)
	}
	pending, n := v.pending, 0 // n: the ghosts kept, each a candidate
	state, conn, predAll := v.state, v.conn, v.r.predAll
	for i, g := range pending {
		if g.dead {
			continue
		}
		vg := &state[g.idx]
		if !vg.relevant || held(vg, g.owner == conn, predAll[g.typ]) { // idle (not dead: checked above)
			vg.pending = false
			continue
		}
		if n != i { // moved down only once one was dropped
			pending[n] = g
		}
		cand[n].g = g // its other fields are set before they are read: by rank, and by the writers for the records sent
		n++
	}
	clear(pending[n:])
	v.pending, v.cand = pending[:n], cand[:n]
	v.sorted = n
	v.idles = 0
}

// rank grows the priority of the candidates cand (of those collect
// listed) by their importance and notes it and their class in each, for
// the snapshot order (see order), once per walk of the pending set: for
// those that wait, or all when not every one is expected to fit. It
// notes in MaxStaleness how long they have waited with a change at tick
// (those sent are noted again as they are logged) and folds their plain
// bits (see forget): a ghost that waits is folded at every walk of the
// pending set, before the view's acks0 lets go of the acknowledgements
// of its plain records. It returns how many are spawns (classSpawn).
func (v *View) rank(cand []candidate, tick gw.Tick) (spawns int) {
	state, conn, imp, stale := v.state, v.conn, v.Importance, v.stats.MaxStaleness
	for i := range cand {
		c := &cand[i]
		g := c.g
		vg := &state[g.idx]
		w := float32(1)
		if imp != nil {
			w = v.importance(g)
		}
		vg.priority += w
		c.priority, c.class = vg.priority, classOther
		switch {
		case g.owner == conn:
			c.class = classOwned
		case !vg.known && w >= 1: // a spawn of a ghost that matters less waits its turn by priority
			c.class = classSpawn
			spawns++
		}
		if vg.waiting {
			stale = max(stale, int(tick.Sub(vg.since)))
		}
		if vg.plain != 0 {
			v.forget(vg, tick)
		}
	}
	v.stats.MaxStaleness = stale
	return spawns
}

// defaultRecordBits is what a view expects a record to take before it
// has written any: a small moving ghost's delta.
const defaultRecordBits = 64

// recordBits is the view's estimate of a record's size in bits, at
// least 8: the mean of the snapshots it wrote lately.
func (v *View) recordBits() int {
	if v.recBits == 0 {
		return defaultRecordBits
	}
	return max(int(v.recBits), 8)
}

// measure folds a part's records, n of them in bits, into the view's
// mean record size (a moving mean over about 4 parts).
func (v *View) measure(bits, n int) {
	if n <= 0 {
		return
	}
	b := float32(bits) / float32(n)
	if v.recBits == 0 {
		v.recBits = b
		return
	}
	v.recBits += (b - v.recBits) / 4
}

// idle reports whether collect would drop g, in v's pending set, rather
// than make it a candidate: dead, out of scope, or held by the client.
func (v *View) idle(g *serverGhost, vg *viewGhost) bool {
	return g.dead || !vg.relevant || v.held(g, vg)
}

// held reports whether the client holds g as it is now and does not
// predict it, so it need not be sent.
func (v *View) held(g *serverGhost, vg *viewGhost) bool {
	return held(vg, g.owner == v.conn, v.r.predAll[g.typ])
}

// held is View.held for a ghost the view's connection owns or not, of a
// type every client predicts or not.
func held(vg *viewGhost, owned, predicted bool) bool {
	return vg.known && vg.rested && !owned && !predicted
}

// resume builds this snapshot's candidates from the ranking the last
// snapshot left, without walking the pending set, and reports whether it
// did: the view's own ghosts first, then the ranked candidates not sent
// yet that are still pending, in their order. It does so only while the
// view is catching up on spawns (more than rankMin candidates at the last
// walk, every ranked one a spawn: a join or a resync), for rankReuse
// snapshots after a walk, while rankChunk/4 ranked candidates remain and
// every own ghost was sent. Views that joined together walk in turn, not
// all in the same tick: each also walks when its snapshot count, offset
// by its slot, is a multiple of rankReuse+1, so a mass join's walks
// spread over the ticks between two of a view's walks. Changed ghosts the client knows wait behind
// spawns anyway; a spawn since the walk waits for the next one, at most
// rankReuse snapshots; priorities grow only at walks (every ghost alike,
// so their order holds). A crowded scope of known ghosts walks every
// snapshot, so a ghost's importance sets how often it is sent.
func (v *View) resume() bool {
	own := v.r.owned[v.conn]
	if !v.canResume || v.reused >= rankReuse || v.reused > 0 && (v.snapshots+uint32(v.slot))%(rankReuse+1) == 0 ||
		v.ranked-v.next < rankChunk/4 || v.next < len(own) || v.cand[v.next].class == classOwned {
		return false
	}
	n := 0
	for _, g := range own {
		if g.dead {
			continue
		}
		vg := &v.state[g.idx]
		vg.priority += v.importance(g)
		v.cand[n] = candidate{g: g, class: classOwned, priority: vg.priority}
		n++
	}
	for _, c := range v.cand[v.next:v.ranked] {
		if v.idle(c.g, &v.state[c.g.idx]) {
			continue
		}
		v.cand[n] = c
		n++
	}
	v.cand = v.cand[:n]
	v.ranked = n
	v.reused++
	return true
}

// importance is how much g's priority grows per snapshot.
func (v *View) importance(g *serverGhost) float32 {
	if v.Importance == nil {
		return 1
	}
	if imp := v.Importance(g.e); imp >= MinImportance { // NaN too
		return imp
	}
	return MinImportance
}

// logTicks is how many ticks of its widest snapshot a view's record log
// holds at first: round trips up to about 8 ticks long (130 ms at 60 Hz)
// need it no longer.
const logTicks = 16

// plainTicks is how many ticks a ghost's plain bits reach back (see
// View.logRecords): an acknowledgement of a snapshot with plain records
// that comes back that late acknowledges nothing, as one whose records
// were logged over.
const plainTicks = 32

// plainMask keeps a ghost's plain bits.
const plainMask = 1<<plainTicks - 1

// logRecords notes that the snapshot rec, being written, holds part
// part's records of the candidates sent, and that their ghosts were sent
// at tick: their priorities start again, their waits end. A record
// whose acknowledgement changes only the ghost's baseline (part 0, no
// identity, not saying it rests: a moving ghost's, most of them) is
// plain: while acknowledgements come back within 3/4 of logTicks, it is
// noted as a bit of its ghost's view state rather than in the log, and
// its acknowledgement is one bit of the view's (see plainBase), not a
// walk of its records. Others go in the log, for View.Ack. Locals, not
// the view's fields, in the loop: it runs per connection and record.
func (v *View) logRecords(rec *sentSnapshot, sent []candidate, part int, tick gw.Tick) {
	v.reserve(rec, len(sent))
	log, at, state := v.log, v.at, v.state
	plain, logged, held := part == 0 && v.window <= logTicks, 0, false // held: plain records
	stale, full, idents := v.stats.MaxStaleness, 0, 0
	// held0: the newest snapshot whose part 0 was acknowledged, which a
	// ghost's plain bits are checked against before any are dropped.
	held0 := v.ack0Top
	if !v.hasAck0 {
		held0 = tick // no bit of it: nothing to fold
	}
	for i := range sent {
		c := &sent[i]
		vg := &state[c.g.idx]
		if plain && vg.known && !c.rest {
			// The bits that fall off are folded into the base first
			// unless the newest acknowledged snapshot held a plain record
			// of it still in the mask (the base, newer than them), as it
			// does for a ghost sent every snapshot.
			d := uint64(age(vg.plainTop, tick))
			d = min(d, plainTicks)
			p := vg.plain
			if keep := plainTicks - d; p>>(keep&63) != 0 {
				if e := uint64(age(held0, vg.plainTop)); e >= keep || p>>(e&63)&1 == 0 {
					v.fold(vg)
				}
			}
			vg.plain, vg.plainTop = (p<<(d&63)|1)&plainMask, tick
			held = true
		} else {
			log[at] = newSentGhost(c.g.idx, part, !vg.known, c.rest)
			if at++; at == len(log) {
				at = 0
			}
			logged++
			if !vg.known {
				idents++
			}
		}
		if c.full {
			full++
		}
		if vg.waiting { // its wait ends here, whether or not a walk saw it last
			stale = max(stale, int(tick.Sub(vg.since)))
		}
		vg.priority, vg.sent, vg.waiting = 0, true, false
	}
	v.at = at
	v.stats.Records += uint64(len(sent))
	v.stats.Identities += uint64(idents)
	v.stats.FullStates += uint64(full)
	v.stats.MaxStaleness = stale
	v.logged += uint64(logged)
	rec.n += logged
	rec.plain = rec.plain || held
}

// fold makes the newest acknowledged snapshot with a plain record of
// vg's ghost its base when it is newer than the base: acknowledgements
// of it are no longer needed to find it.
func (v *View) fold(vg *viewGhost) {
	if t, ok := v.plainBase(vg); ok && (!vg.hasBase || age(t, v.acked) < age(vg.base, v.acked)) {
		vg.base, vg.hasBase = t, true
	}
}

// forget folds vg's plain bits into its base and drops them once they
// are plainTicks old at tick: an acknowledgement of their snapshots
// would be late.
func (v *View) forget(vg *viewGhost, tick gw.Tick) {
	if vg.plain != 0 {
		v.fold(vg)
		if age(vg.plainTop, tick) >= plainTicks {
			vg.plain = 0
		}
	}
}

// plainBase returns the newest snapshot whose part 0 the client
// acknowledged with a plain record of vg's ghost, if any.
func (v *View) plainBase(vg *viewGhost) (gw.Tick, bool) {
	if vg.plain == 0 || !v.hasAck0 {
		return 0, false
	}
	var a uint64 // acks0 aligned with plain: bit i for tick plainTop−i
	if d := age(v.ack0Top, vg.plainTop); d < 64 {
		a = v.acks0 << d
	} else if d := age(vg.plainTop, v.ack0Top); d < 64 {
		a = v.acks0 >> d
	}
	m := vg.plain & a
	if m == 0 {
		return 0, false
	}
	return vg.plainTop - gw.Tick(bits.TrailingZeros64(m)), true
}

// base returns the baseline of vg's ghost: the newest acknowledged
// snapshot that held it, if any.
func (v *View) base(vg *viewGhost) (gw.Tick, bool) {
	t, ok := v.plainBase(vg)
	if vg.hasBase && (!ok || age(vg.base, v.acked) < age(t, v.acked)) {
		return vg.base, true
	}
	return t, ok
}

// reserve makes room in the log for n more records of rec, the snapshot
// being written, so that the log holds window ticks of the widest
// snapshot's records: a wider snapshot than any before, or a wider
// window, costs the view one allocation.
func (v *View) reserve(rec *sentSnapshot, n int) {
	v.widest = max(v.widest, rec.n+n)
	if need := v.window * v.widest; need > len(v.log) {
		v.relog(need)
	}
}

// widen doubles the ticks the log holds, up to sentRing.
func (v *View) widen() {
	if v.window < sentRing {
		v.window = min(2*v.window, sentRing)
		v.relog(v.window * v.widest)
	}
}

// relog moves the log to a new one of need records, keeping every
// record still in it.
func (v *View) relog(need int) {
	if need <= len(v.log) {
		return
	}
	log := make([]sentGhost, need)
	v.kept = max(v.kept, v.logged-min(v.logged, uint64(len(v.log))))
	for i := v.kept; i < v.logged; i++ {
		log[i%uint64(need)] = v.log[i%uint64(len(v.log))]
	}
	v.log, v.at = log, int(v.logged%uint64(need))
}

// removed is called by the register when ghost g stops replicating: a
// client that was sent it gets a despawn record until it acknowledges
// one; one never sent it hears nothing.
func (v *View) removed(g *serverGhost) {
	vg := &v.state[g.idx]
	if vg.sent {
		v.despawns = append(v.despawns, g.id)
	}
	if vg.pending && v.canResume && vg.relevant && !v.held(g, vg) { // a candidate until it died
		v.idles++
	}
}

// resyncInterval is the least number of ticks between two resyncs of a
// view: each costs a walk of every ghost and a full state of every one in
// scope, so a client asking every packet gets one a second at 60 Hz.
const resyncInterval = 60

// Resync honours a client's request for full states, made when it dropped
// a delta record whose baseline it did not hold (which only a server
// breaking the protocol causes): every ghost in scope is sent again with
// its identity and every component, as to a new connection. It reports
// whether it did; a request within resyncInterval ticks of the last one
// is refused and counted. It costs a walk of every ghost.
func (v *View) Resync(tick gw.Tick) bool {
	if v.resynced && tick.Sub(v.resyncAt) < resyncInterval {
		v.stats.ResyncsRefused++
		return false
	}
	v.resynced, v.resyncAt = true, tick
	v.stats.Resyncs++
	for _, g := range v.r.ghosts {
		vg := &v.state[g.idx]
		if !vg.relevant {
			continue
		}
		if vg.pending && v.canResume && v.idle(g, vg) {
			v.idles--
		}
		vg.known, vg.hasBase, vg.rested, vg.plain = false, false, false, 0
		v.changed(g, tick)
	}
	return true
}

// Ack notes that the client received and applied the parts (bit i: part
// i) of the snapshot of tick, its newest: the identities and despawns
// they carried are not sent again, and their ghosts become the baselines
// of later deltas. An ack of a tick not sent, older than one acknowledged
// before, or of parts acknowledged already, does nothing; nor does one of
// a snapshot sent more than 256 ticks before or whose records the view's
// log has reused, which is counted (ViewStats.LateAcks) and, in the
// second case, makes the log hold twice as many ticks. The log grows so
// too when an ack comes back after more than 3/4 of it was written since
// its snapshot.
func (v *View) Ack(tick gw.Tick, parts uint8) {
	if v.hasAcked && tick.Before(v.acked) {
		return
	}
	rec := &v.sent[uint32(tick)%sentRing]
	if rec.valid && tick.Before(rec.tick) && !(v.hasAcked && tick == v.acked) { // sent more than sentRing ticks ago
		v.stats.LateAcks++
		return
	}
	parts &^= rec.acked
	if !rec.valid || rec.tick != tick || parts == 0 {
		return
	}
	ticks := age(tick, v.r.encTick)
	if logged := v.logged - rec.from; logged > uint64(len(v.log)) || rec.from < v.kept || rec.plain && ticks >= plainTicks { // its records were logged over, or its plain bits dropped
		v.stats.LateAcks++
		v.widen()
		return
	} else if logged > uint64(len(v.log)/4*3) && v.window < sentRing || rec.plain && ticks > logTicks/4*3 && v.window <= logTicks {
		v.widen()
	}
	rec.acked |= parts
	v.acked, v.hasAcked = tick, true
	if parts&1 != 0 {
		if d := age(v.ack0Top, tick); !v.hasAck0 || d >= 64 {
			v.acks0 = 1
		} else {
			v.acks0 = v.acks0<<d | 1
		}
		v.ack0Top, v.hasAck0 = tick, true
	}
	// Locals, not the view's fields, in the loop: it runs per record.
	log, state, slots, now, resumable := v.log, v.state, v.r.ticks, v.r.encTick, v.canResume
	at, ago := 0, age(tick, now)
	whole := parts == rec.wrote // every record acknowledged: no part to test
	if rec.n > 0 {
		at = int(rec.from % uint64(len(log)))
	}
	for range rec.n {
		sg := log[at]
		if at++; at == len(log) {
			at = 0
		}
		// The record is of the ghost in its index now unless that one
		// was first encoded after tick (dead since, its index taken by
		// a later spawn), or not yet, or the index is free.
		idx := sg.idx()
		t := &slots[idx]
		if !t.fresh || age(t.born, now) < ago {
			continue
		}
		vg := &state[idx]
		if !vg.relevant || !whole && parts&(1<<sg.part()) == 0 {
			continue
		}
		var g *serverGhost
		was := false
		if resumable && vg.pending { // counting idles: the ghost itself is read
			g = v.r.bySlot[idx]
			was = v.idle(g, vg)
		}
		if sg.ident() {
			vg.known = true
		}
		if sg.rest() && age(t.last, now) >= ago { // not changed since tick
			vg.rested = true
		}
		vg.base, vg.hasBase = tick, true
		if g != nil && !was && v.idle(g, vg) {
			v.idles++
		}
	}
	if parts&1 != 0 && len(rec.despawns) > 0 {
		v.despawns = slices.DeleteFunc(v.despawns, func(id components.GhostID) bool {
			_, ok := slices.BinarySearch(rec.despawns, id)
			return ok
		})
		for _, id := range rec.despawns {
			if i, ok := v.r.find(id); ok {
				v.state[v.r.ghosts[i].idx].despawning = false
			}
		}
	}
}
