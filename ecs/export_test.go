package ecs

import "github.com/mlange-42/arche/ecs"

// What the external tests of this package reach that games do not: the
// unexported names under exported ones.

type Group = group

var (
	NewGroup     = newGroup
	ErrNoHistory = errNoHistory
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

func (s *Schedule) Group(st Stage) *group { return s.group(st) }
func (c *Commands) Len() int              { return c.queued() }
func (c *Commands) Apply()                { c.apply() }
func (c *Commands) Skipped() uint64       { return c.skipped }
func (h *History) Restore(t Tick) error   { return h.restore(t) }

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

// Checksum returns a checksum of every registered component of every
// entity recorded at tick (padding excluded), or a [*TickRangeError].
func (h *History) Checksum(tick Tick) (uint64, error) {
	if !h.Has(tick) {
		return 0, h.tickError(tick)
	}
	rec := h.record(tick)
	return h.checksum(rec, h.epochOf(rec)), nil
}
