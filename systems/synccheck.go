package systems

import (
	"errors"
	"log/slog"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// syncCheck runs an endpoint's ticks through a [gw.SyncTest] when the
// endpoint's SyncTest option is set: every tick, then a rollback of depth
// ticks and their replay, compared with the first run.
//
// A replay starts from the recorded state, so whatever the endpoint
// changes outside the prediction stages (a ghost spawned or removed from a
// snapshot, a hard correction) would show as a desync of every window
// across it: such a tick calls restart, which drops that tick's result and
// starts a new window after it.
type syncCheck struct {
	depth      int
	st         *gw.SyncTest // created at the first tick, once the tick is set
	first      error
	desyncs    uint64
	done       uint64 // checks of the windows restarted
	restarting bool
}

// restart says the current tick changed the world outside the prediction
// stages.
func (k *syncCheck) restart() { k.restarting = k.depth > 0 }

// rolledBack says a correction's rollback wrote the server's state at
// tick, now the newest tick run: a window holding tick would replay the
// prediction across the correction and report it as a desync, so the
// current tick's result is dropped and a new window starts after it (see
// restart). A client at most depth ticks ahead of its snapshots (a short
// round trip, or an input delay taking most of it) rolls back inside the
// window.
func (k *syncCheck) rolledBack(now, tick gw.Tick) {
	if int(now.Sub(tick)) < k.depth {
		k.restart()
	}
}

// reset says the world changed outside the prediction between two ticks
// (a server-owned value taken from a snapshot): the next tick starts a new
// window, so no replay reaches back across the change.
func (k *syncCheck) reset() {
	if k.st != nil {
		k.done += k.st.Checks()
		k.st = nil
	}
}

// tick runs one tick of s on w, checked when depth is not zero. The first
// error is kept and logged at Error; every one is counted.
func (k *syncCheck) tick(s *gw.Schedule, w *gw.World, log *slog.Logger) {
	if k.depth == 0 {
		s.Tick(w)
		return
	}
	if k.st == nil {
		st, err := gw.NewSyncTest(s, w, k.depth)
		if err != nil { // not expected: the endpoint checked the option
			k.first, k.depth = err, 0
			log.Error("ghostwire: sync test not started", "err", err)
			s.Tick(w)
			return
		}
		k.st = st
	}
	err := k.st.Tick()
	if k.restarting {
		k.restarting = false
		k.done += k.st.Checks()
		k.st = nil
		return
	}
	if err != nil {
		k.desyncs++
		if k.first == nil {
			k.first = err
			var d *gw.DesyncError
			if errors.As(err, &d) {
				log.Error("ghostwire: sync test found a desync", "tick", d.Tick, "component", d.Component, "field", d.Field,
					"unregistered", d.Unregistered, "err", err)
			} else {
				log.Error("ghostwire: sync test failed", "err", err)
			}
		}
	}
}

// checks returns how many replayed ticks were compared.
func (k *syncCheck) checks() uint64 {
	if k.st == nil {
		return k.done
	}
	return k.done + k.st.Checks()
}
