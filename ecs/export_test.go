package ecs

import (
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/internal/access"
)

// What the external tests of this package reach that games do not: the
// unexported names under their former exported ones.

type (
	Group          = group
	DesyncError    = desyncError
	PlainDataError = plainDataError
	TickError      = tickRangeError
	HistoryStats   = historyStats
	ScheduleStats  = scheduleStats
)

var (
	NewGroup     = newGroup
	ErrNoHistory = errNoHistory
)

const (
	StageReceive       = stageReceive
	StageInput         = stageInput
	StageSend          = stageSend
	StageInterpolation = stageInterpolation
)

func (g *group) Name() string { return g.name }
func (g *group) Len() int     { return len(g.entries) }

func (g *group) Add(s System) *group {
	g.add(s, false)
	return g
}

func (g *group) AddSideEffect(s System) *group {
	g.add(s, true)
	return g
}

func (s *Schedule) Group(st Stage) *group               { return s.group(st) }
func (s *Schedule) Stats() scheduleStats                { return s.stats }
func (s Stage) String() string                          { return s.name() }
func (c *Commands) Len() int                            { return c.queued() }
func (c *Commands) Apply()                              { c.apply() }
func (c *Commands) Skipped() uint64                     { return c.skipped }
func (w *World) SetTick(t Tick)                         { w.setTick(t) }
func (w *World) LayoutVersion() uint64                  { return w.layout }
func (h *History) Record(t Tick)                        { h.save(t) }
func (h *History) Restore(t Tick) error                 { return h.restore(t) }
func (h *History) Has(t Tick) bool                      { return h.has(t) }
func (h *History) Newest() (Tick, bool)                 { return h.newestTick() }
func (h *History) Oldest() (Tick, bool)                 { return h.oldestTick() }
func (h *History) Capacity() int                        { return h.capacity }
func (h *History) Stats() historyStats                  { return h.stats }
func (st *SyncTest) Checks() uint64                     { return st.checks }
func (st *SyncTest) Shortened() uint64                  { return st.shortened }
func MarkServer(w *World)                               { w.server = true }
func (h *History) View(t Tick) (access.TickView, error) { return h.view(t) }

func (h *History) Lookup(t Tick, e ecs.Entity, id ecs.ID) (unsafe.Pointer, error) {
	return h.lookup(t, e, id)
}

// Unborn reports whether e is a predicted spawn created after the tick a
// rollback restored, held dormant until the replay reaches its birth tick,
// and returns that tick: the first tick that recorded e, or the tick after
// the newest record for an entity never recorded. It is meant for the fix
// of [Schedule.Rollback]: writing an unborn entity makes it born at the
// restored tick (see the [History] rule), so a fix that only corrects
// entities the server's state of that tick holds can tell the others.
// Once the replay has woken every spawn it reports false. It costs one
// pass over the dormant entities (usually none or a few).
func (h *History) Unborn(e ecs.Entity) (birth Tick, unborn bool) {
	for i := range h.dormant {
		if h.dormant[i].entity == e {
			return h.dormant[i].birth, true
		}
	}
	return 0, false
}

// HistoryValue returns entity e's component T as recorded at tick. ok is
// false when the tick is not held, T is not registered, or e had no T then.
func HistoryValue[T any](h *History, tick Tick, e ecs.Entity) (v T, ok bool) {
	p, err := h.lookup(tick, e, ecs.ComponentID[T](h.world.Arche()))
	if err != nil || p == nil {
		return v, false
	}
	return *(*T)(p), true
}

// Checksum returns a checksum of every registered component of every
// entity recorded at tick (padding excluded), or a [*tickRangeError].
func (h *History) Checksum(tick Tick) (uint64, error) {
	if !h.has(tick) {
		return 0, h.tickError(tick)
	}
	rec := h.record(tick)
	return h.checksum(rec, h.epochOf(rec)), nil
}
