// Package ecsx is the framework's own access to what package ecs keeps
// from games: the history's records and lookups, the world's tick and
// layout, the schedule's counters, the sync test's findings and the stages
// only the endpoints run. The endpoints, lag compensation and the tests
// use it; games never need it.
package ecsx

import (
	"math"
	"reflect"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/access"
)

// The functions package ecs set in its init (see internal/access). A type
// that does not match panics here, when the first package using ecsx
// initializes.
var (
	newHistory    = access.ECSNewHistory.(func(*gw.World, ecs.ID, int) (*gw.History, error))
	registerType  = access.ECSRegisterType.(func(*gw.History, reflect.Type) error)
	record        = access.ECSRecord.(func(*gw.History, gw.Tick))
	newest        = access.ECSNewest.(func(*gw.History) (gw.Tick, bool))
	has           = access.ECSHas.(func(*gw.History, gw.Tick) bool)
	capacity      = access.ECSCapacity.(func(*gw.History) int)
	lookup        = access.ECSLookup.(func(*gw.History, gw.Tick, ecs.Entity, ecs.ID) (unsafe.Pointer, error))
	view          = access.ECSView.(func(*gw.History, gw.Tick) (access.TickView, error))
	historyOf     = access.ECSHistoryOf.(func(*gw.World) *gw.History)
	worldOf       = access.ECSWorldOf.(func(*gw.History) *gw.World)
	setTick       = access.ECSSetTick.(func(*gw.World, gw.Tick))
	markServer    = access.ECSMarkServer.(func(*gw.World))
	layoutVersion = access.ECSLayoutVersion.(func(*gw.World) uint64)
	scheduleStats = access.ECSScheduleStats.(func(*gw.Schedule) (uint64, uint64, uint64, uint64))
	syncChecks    = access.ECSSyncChecks.(func(*gw.SyncTest) uint64)
	desync        = access.ECSDesync.(func(error) (gw.Tick, reflect.Type, string, bool, bool))
	stages        = access.ECSStages.(func() (gw.Stage, gw.Stage, gw.Stage, gw.Stage))
)

// The stages only the endpoints register into (see gw.Stage for the
// order): StageReceive reads the network (inputs on a server; snapshots,
// spawns and reconciliation on a client), StageInput samples (client) or
// buffers (server) the inputs of the tick and is not replayed, StageSend
// writes the network, StageInterpolation blends remote ghosts once per
// frame.
var StageReceive, StageInput, StageSend, StageInterpolation = stages()

// TickView reads one recorded tick of a history without copying; see
// access.TickView.
type TickView = access.TickView

// NewHistory creates a history of the entities carrying the marker
// component, not attached to the world's rollback: a server uses one for
// lag compensation (read with Lookup and View, never restored). It returns
// an error naming the value when the capacity is outside 2..65536.
func NewHistory(w *gw.World, marker ecs.ID, capacity int) (*gw.History, error) {
	return newHistory(w, marker, capacity)
}

// RegisterType is gw.Register for a type known only at run time (the
// replicated components of a schema). It errors like gw.Register.
func RegisterType(h *gw.History, t reflect.Type) error { return registerType(h, t) }

// Record stores the registered components of the history's entities as
// the state at tick, replacing whatever the ring held in that slot. Steady
// state it allocates nothing.
func Record(h *gw.History, tick gw.Tick) { record(h, tick) }

// Newest returns the newest recorded tick; ok is false when nothing was
// recorded yet.
func Newest(h *gw.History) (tick gw.Tick, ok bool) { return newest(h) }

// Has reports whether the history holds tick.
func Has(h *gw.History, tick gw.Tick) bool { return has(h, tick) }

// Capacity returns the number of ticks the history holds.
func Capacity(h *gw.History) int { return capacity(h) }

// Lookup returns a pointer to the value of component id of entity e
// recorded at tick, valid until that ring slot is recorded again. It
// returns an error naming the range held if the tick is not held, and a
// nil pointer with a nil error if e or the component was not recorded at
// that tick.
func Lookup(h *gw.History, tick gw.Tick, e ecs.Entity, id ecs.ID) (unsafe.Pointer, error) {
	return lookup(h, tick, e, id)
}

// View returns a view of tick, valid until that ring slot is recorded
// again, or an error naming the range held if the tick is not held. It
// allocates nothing.
func View(h *gw.History, tick gw.Tick) (TickView, error) { return view(h, tick) }

// Value returns entity e's component T as recorded at tick. ok is false
// when the tick is not held, T is not registered, or e had no T then.
func Value[T any](h *gw.History, tick gw.Tick, e ecs.Entity) (v T, ok bool) {
	p, err := lookup(h, tick, e, ecs.ComponentID[T](worldOf(h).Arche()))
	if err != nil || p == nil {
		return v, false
	}
	return *(*T)(p), true
}

// History returns the world's rollback history, or nil when none was
// enabled with gw.EnableHistory.
func History(w *gw.World) *gw.History { return historyOf(w) }

// SetTick sets the world's current tick, for example when a client adopts
// the server's tick at connection. It panics while replaying.
func SetTick(w *gw.World, t gw.Tick) { setTick(w, t) }

// MarkServer makes w the authoritative world: its registered state may
// change outside the prediction stages (simulation, hits, players joining
// and leaving), so its determinism check bounds its windows at such changes
// instead of calling them desyncs (see gw.SyncTest).
func MarkServer(w *gw.World) { markServer(w) }

// Unwrap returns t as a continuous tick: a float64 that counts ticks
// without wrapping (a render tick, an estimated server tick), whose floor
// equals a tick modulo 2³². Of the values that stand for t it returns the
// one nearest near, itself a continuous tick less than 2³¹ ticks from t,
// so float64 arithmetic on ticks stays right across the wrap:
// Unwrap(2, 4294967295.5) is 4294967298. gw.TickAt is its inverse.
func Unwrap(t gw.Tick, near float64) float64 {
	base := math.Floor(near)
	return base + float64(t.Sub(gw.Tick(uint32(int64(base)))))
}

// LayoutVersion returns a counter that changes with every structural
// change of the arche world. Two equal values mean every archetype holds
// the same entities in the same rows.
func LayoutVersion(w *gw.World) uint64 { return layoutVersion(w) }

// ScheduleStats counts a schedule's ticks, frames, rollbacks and replayed
// ticks.
type ScheduleStats struct {
	Ticks         uint64
	Frames        uint64
	Rollbacks     uint64
	ReplayedTicks uint64
}

// Stats returns the schedule's counters.
func Stats(s *gw.Schedule) ScheduleStats {
	var st ScheduleStats
	st.Ticks, st.Frames, st.Rollbacks, st.ReplayedTicks = scheduleStats(s)
	return st
}

// Checks returns how many replayed ticks the sync test has compared.
func Checks(st *gw.SyncTest) uint64 { return syncChecks(st) }

// Desync is what a sync test's error says, for structured logs: the
// first replayed tick that differed, the component and field, and whether
// the component is written by the prediction without being registered.
type Desync struct {
	Tick         gw.Tick
	Component    reflect.Type
	Field        string
	Unregistered bool
}

// DesyncOf returns the desync err reports (err may wrap it), and false
// when err is not a sync test's desync.
func DesyncOf(err error) (Desync, bool) {
	var d Desync
	var ok bool
	d.Tick, d.Component, d.Field, d.Unregistered, ok = desync(err)
	return d, ok
}
