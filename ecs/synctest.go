package ecs

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/mlange-42/arche/ecs"
)

// SyncTest is ghostwire's determinism check, in the spirit of GGPO's sync
// test: every tick it runs the schedule normally, then rolls back rollback
// ticks and replays them, comparing a checksum of all registered
// components after each replayed tick with the one recorded for that tick
// (by the first run, or by the previous replay, which matched it). A
// mismatch means the prediction depends on something rollback does not
// restore: state kept outside registered components (a package variable, a
// field of a system), input read inside a system instead of from per-tick
// data, a variable time step, map iteration order.
//
// It also watches every other component of the predicted entities, the
// ones not registered for history: when the replay leaves one with another
// value than the first run and the prediction stages write it (its value
// changes across them), the error names that component and says it is not
// registered, rather than blaming the first
// registered component it feeds. When registered values differ too, the
// test re-runs the tick with the unregistered values of the first run to
// tell cause from victim: a component rewritten from corrupted registered
// state is not blamed for it. Unregistered components written only
// outside the prediction stages, or rewritten from registered state every
// tick, are not reported. Values are compared without padding; a component
// that is not plain data is compared as a whole.
//
// On a server world (the server endpoint marks its own) the registered
// state also changes outside the prediction stages, and legitimately so:
// StageSimulation respawns players, lag compensation applies hits,
// connections spawn and remove players. A replay does not repeat those
// stages, so a window that crosses such a change could not match. There
// the test compares the registered state at the start of each tick's
// prediction stages with the one recorded at the end of the previous
// tick's, and a tick that starts from changed state bounds the rollback:
// windows never reach back across it. On a client, where nothing but a
// correction may change predicted state outside those stages, such a
// change is a desync.
//
// Run it in a test or a debug build of the game; it costs Rollback replays
// per tick.
type SyncTest struct {
	sched     *Schedule
	world     *World
	n         int
	start     Tick
	checks    uint64
	outside   Tick // the newest tick that began from state changed outside the prediction (servers)
	shortened uint64
	err       error // of the current Tick's check
	// onRecorded is st.onRecorded, made once: the schedule calls it.
	onRecorded func()
}

// Checks returns how many replayed ticks the check has compared.
func (st *SyncTest) Checks() uint64 { return st.checks }

// Shortened returns how many windows the check cut short at a tick that
// began from state changed outside the prediction stages (an
// authoritative world's respawns and hits): such a tick is never replayed
// across.
func (st *SyncTest) Shortened() uint64 { return st.shortened }

// DesyncError reports the first difference a [SyncTest] found: the tick,
// the entity and the component (and field) whose value after replay is not
// the value of the first run. Its message says all of it; use errors.As to
// read the fields (the endpoints log them, and keep the first one in their
// stats).
type DesyncError struct {
	Tick      Tick
	Entity    ecs.Entity
	Component reflect.Type
	Field     string
	// First and Replay are the field's bytes in the first run and after
	// replay; both nil when the entity itself is missing from one run.
	First, Replay []byte
	// Unregistered is set when Component is not registered for history
	// but written by the prediction: rollback does not restore it, so the
	// replay starts from a wrong value. Register it with [Register].
	Unregistered bool
	kind         reflect.Kind
}

// Error names the tick, entity, component and field, with both values.
func (e *DesyncError) Error() string {
	if e.Unregistered {
		return fmt.Sprintf("ecs: desync at tick %d: component %v is written by the prediction but not registered for history (Register): entity %v %s is %s after replay, was %s in the first run",
			e.Tick, e.Component, e.Entity, fieldName(e.Field), formatField(e.Replay, e.kind), formatField(e.First, e.kind))
	}
	if e.First == nil && e.Replay == nil && e.Component != nil {
		return fmt.Sprintf("ecs: desync at tick %d: entity %v has component %v in the first run only", e.Tick, e.Entity, e.Component)
	}
	if e.First == nil && e.Replay == nil {
		return fmt.Sprintf("ecs: desync at tick %d: entity %v exists in only one of the first run and the replay", e.Tick, e.Entity)
	}
	return fmt.Sprintf("ecs: desync at tick %d: entity %v component %v field %s is %s after replay, was %s in the first run",
		e.Tick, e.Entity, e.Component, e.Field, formatField(e.Replay, e.kind), formatField(e.First, e.kind))
}

// NewSyncTest prepares a determinism check of the world's prediction
// stages that rolls back and replays rollback ticks every tick (8 when
// zero). It returns an error without a history ([EnableHistory]), and one
// naming the value when rollback is outside 1..capacity-1.
func NewSyncTest(s *Schedule, w *World, rollback int) (*SyncTest, error) {
	h := w.history
	if h == nil {
		return nil, errNoHistory
	}
	if rollback == 0 {
		rollback = 8
	}
	if rollback < 1 || rollback >= h.capacity {
		return nil, fmt.Errorf("ecs: sync test rollback %d outside 1..%d (history capacity - 1)", rollback, h.capacity-1)
	}
	h.checksums = true
	w.probe = newUnregisteredProbe(h, rollback)
	st := &SyncTest{sched: s, world: w, n: rollback, start: w.tick, outside: w.tick}
	st.onRecorded = st.recorded
	if w.server {
		w.probe.onStart = st.watchOutside
	}
	return st, nil
}

// watchOutside runs ahead of a server tick's prediction stages: when the
// registered state is not what the previous tick recorded, something
// outside the prediction changed it, and replays must not reach back
// across this tick.
func (st *SyncTest) watchOutside(w *World) {
	h := w.history
	prev := w.tick.Add(-1)
	if !h.Has(prev) {
		st.outside = w.tick
		return
	}
	cur := h.currentEpoch()
	h.capture(&h.scratch, cur)
	if h.checksum(&h.scratch, cur) != h.record(prev).sum {
		st.outside = w.tick
	}
}

// Tick runs one normal tick and, right after the history recorded it,
// rolls back and replays; the stages after the record point
// (StageSimulation, StageHistory, StageSend) then run on the replayed
// state, so the check never undoes what they write. At the first replayed
// tick whose state differs from the first run it returns an error naming
// the tick, the entity, the component and field with both values (or the
// unregistered component the prediction writes); the world then holds the
// replayed state.
func (st *SyncTest) Tick() error {
	st.err = nil
	st.sched.recorded = st.onRecorded
	defer func() { st.sched.recorded = nil }()
	st.sched.Tick(st.world)
	return st.err
}

func (st *SyncTest) recorded() { st.err = st.check() }

// check rolls back and replays the window ending at the tick just recorded.
func (st *SyncTest) check() error {
	now := st.world.tick
	if now.Sub(st.start) <= int32(st.n) {
		return nil
	}
	to := now.Add(-st.n)
	if to.Before(st.outside) {
		st.shortened++
		if to = st.outside; !to.Before(now) {
			return nil
		}
	}
	h := st.world.history
	return st.sched.rollback(st.world, to, nil, func(t Tick) error {
		st.checks++
		rec := h.record(t)
		first := h.epochOf(rec)
		// Predicted spawns born at t rejoin now, as Record(t) would wake
		// them: the first run recorded them at t.
		h.wake(t, false)
		cur := h.currentEpoch()
		u, fromStart := st.world.probe.check(t)
		h.capture(&h.scratch, cur)
		if h.checksum(&h.scratch, cur) == rec.sum {
			if u != nil {
				return u
			}
			return nil
		}
		d := h.diff(rec, first, &h.scratch, cur)
		// An unregistered component that already differed when the tick
		// began may be the cause of the registered difference, or one more
		// victim of hidden state: re-running the tick tells.
		if u != nil && fromStart && st.unregisteredCause(t, rec.sum) {
			return u
		}
		if d != nil {
			d.Tick = t
			return d
		}
		// Every entity has the same values: only their order in storage
		// differs (a component a replay removed and added again moves
		// its entity to the end of its archetype), which is no desync.
		if u != nil {
			return u
		}
		return nil
	})
}

// unregisteredCause re-runs the prediction of tick t from the registered
// state recorded at t-1, with the unregistered components as the first run
// had them when tick t began, and reports whether the registered state then
// matches the first run's checksum sum. When the layout changed since t-1
// it cannot re-run and blames the unregistered components (true).
func (st *SyncTest) unregisteredCause(t Tick, sum uint64) bool {
	h, w := st.world.history, st.world
	prev := t.Add(-1)
	if !h.Has(prev) {
		return true
	}
	rec := h.record(prev)
	ep := h.epochOf(rec)
	if ep.layout != w.layout {
		return true
	}
	h.blocks(rec, ep, false)
	w.probe.put(t)
	st.sched.predict(w)
	h.wake(t, false)
	cur := h.currentEpoch()
	h.capture(&h.scratch, cur)
	return h.checksum(&h.scratch, cur) == sum
}

// fieldName is how an error names a field: "field X", or "value" for a
// component compared as a whole.
func fieldName(f string) string {
	if f == "" {
		return "value"
	}
	return "field " + f
}

const (
	hashSeed  = 0x9e3779b97f4a7c15
	hashPrime = 0x100000001b3
)

func mix(h uint64, b []byte) uint64 {
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * hashPrime
		h ^= h >> 29
		b = b[8:]
	}
	for _, x := range b {
		h = (h ^ uint64(x)) * hashPrime
	}
	return h
}

func (h *History) checksum(rec *record, ep *epoch) uint64 {
	sum := uint64(hashSeed)
	var buf [8]byte
	for _, e := range ep.entities {
		binary.LittleEndian.PutUint32(buf[:4], e.ID())
		binary.LittleEndian.PutUint32(buf[4:], e.Generation())
		sum = mix(sum, buf[:])
	}
	for c := range h.comps {
		ct := &h.comps[c]
		data := rec.data[c]
		if len(ct.ranges) == 1 && ct.ranges[0].off == 0 && ct.ranges[0].len == ct.size {
			sum = mix(sum, data)
			continue
		}
		for row := 0; row < len(data); row += int(ct.size) {
			for _, r := range ct.ranges {
				sum = mix(sum, data[row+int(r.off):row+int(r.off+r.len)])
			}
		}
	}
	return sum
}

// diff returns the first field that differs between two records, matching
// entities by identity.
func (h *History) diff(a *record, epA *epoch, b *record, epB *epoch) *DesyncError {
	nc := len(h.comps)
	for ri, r := range epA.runs {
		for i := 0; i < r.count; i++ {
			e := epA.entities[r.start+i]
			rj, j, ok := epB.locate(e)
			if !ok {
				return &DesyncError{Entity: e}
			}
			for _, c := range h.slots[r.slot].comps {
				ct := &h.comps[c]
				fb := epB.rows[rj*nc+c]
				if fb < 0 {
					return &DesyncError{Entity: e, Component: ct.typ}
				}
				offA := (int(epA.rows[ri*nc+c]) + i) * int(ct.size)
				offB := (int(fb) + j) * int(ct.size)
				va := a.data[c][offA : offA+int(ct.size)]
				vb := b.data[c][offB : offB+int(ct.size)]
				for _, f := range ct.fields {
					fa, fb := va[f.off:f.off+f.len], vb[f.off:f.off+f.len]
					if string(fa) != string(fb) {
						return &DesyncError{Entity: e, Component: ct.typ, Field: f.field, kind: f.kind,
							First: append([]byte(nil), fa...), Replay: append([]byte(nil), fb...)}
					}
				}
			}
		}
	}
	if len(epA.entities) != len(epB.entities) {
		epA.buildIndex()
		for _, e := range epB.entities {
			if _, ok := epA.index[e]; !ok {
				return &DesyncError{Entity: e}
			}
		}
	}
	return nil
}
