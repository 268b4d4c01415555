package ecs

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/internal/access"
)

// init hands the endpoints and lag compensation what games do not see;
// internal/ecsx types and documents each function.
func init() {
	access.ECSNewHistory = func(w *World, marker ecs.ID, opts HistoryOptions) (*History, error) {
		return newHistory(w, marker, opts)
	}
	access.ECSRegisterType = func(h *History, t reflect.Type) error { return h.registerType(t) }
	access.ECSRecord = func(h *History, tick Tick) { h.save(tick) }
	access.ECSNewest = func(h *History) (Tick, bool) { return h.newestTick() }
	access.ECSHas = func(h *History, tick Tick) bool { return h.has(tick) }
	access.ECSCapacity = func(h *History) int { return h.capacity }
	access.ECSLookup = func(h *History, tick Tick, e ecs.Entity, id ecs.ID) (unsafe.Pointer, error) {
		return h.lookup(tick, e, id)
	}
	access.ECSView = func(h *History, tick Tick) (access.TickView, error) { return h.view(tick) }
	access.ECSHistoryOf = func(w *World) *History { return w.history }
	access.ECSWorldOf = func(h *History) *World { return h.world }
	access.ECSSetTick = func(w *World, t Tick) { w.setTick(t) }
	access.ECSMarkServer = func(w *World) { w.server = true }
	access.ECSLayoutVersion = func(w *World) uint64 { return w.layout }
	access.ECSScheduleStats = func(s *Schedule) (ticks, frames, rollbacks, replayed uint64) {
		st := s.stats
		return st.Ticks, st.Frames, st.Rollbacks, st.ReplayedTicks
	}
	access.ECSSyncChecks = func(st *SyncTest) uint64 { return st.checks }
	access.ECSDesync = func(err error) (tick Tick, component reflect.Type, field string, unregistered, ok bool) {
		var d *desyncError
		if !errors.As(err, &d) {
			return 0, nil, "", false, false
		}
		return d.Tick, d.Component, d.Field, d.Unregistered, true
	}
	access.ECSStages = func() (receive, input, send, interpolation Stage) {
		return stageReceive, stageInput, stageSend, stageInterpolation
	}
}
