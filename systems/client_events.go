package systems

import (
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// MaxPendingEvents is the most predicted events a client holds before the
// server's events judge them; a raise beyond is not played, counted as
// ClientStats.EventsDropped.
const MaxPendingEvents = 256

// pendingEvent is a predicted event played and not judged yet; its data
// is in slot of the arena.
type pendingEvent struct {
	typ  codec.EventID
	info eventInfo
	slot int
}

// eventKey is a judged event: a raise matching it is not played again.
type eventKey struct {
	typ   codec.EventID
	ghost components.GhostID
	tick  gw.Tick
}

// clientEvents matches the client's predicted events with the server's.
type clientEvents struct {
	schema   *codec.Schema
	handlers []eventHandler
	pending  []pendingEvent
	free     []int
	arena    []uint64
	words    int
	// done holds the events judged whose window is not past: a replay
	// raising one again must not play it twice.
	done []eventKey
	// through is the newest tick the server's events are known up to.
	through    gw.Tick
	hasThrough bool
	batch      protocol.Events
	sc         protocol.EventScratch
	info       eventInfo // a late event's, kept here: no allocation
}

// initEvents prepares the client's events when the schema declares some.
func (c *Client) initEvents(cs *codec.Schema) {
	if cs.NumEvents() == 0 {
		return
	}
	ev := &c.events
	ev.schema = cs
	for i := range cs.NumEvents() {
		t, _ := cs.Event(codec.EventID(i))
		ev.words = max(ev.words, (cs.ComponentSize(t.Comp)+7)/8)
	}
	ev.handlers = make([]eventHandler, cs.NumEvents())
	ev.pending = make([]pendingEvent, 0, MaxPendingEvents)
	ev.free = make([]int, MaxPendingEvents)
	for i := range ev.free {
		ev.free[i] = MaxPendingEvents - 1 - i
	}
	ev.arena = make([]uint64, max(1, MaxPendingEvents*ev.words))
	ev.done = make([]eventKey, 0, MaxPendingEvents)
	installEventSink(c.world, cs, c.raise)
}

// slot returns the data of arena slot i.
func (ev *clientEvents) slot(i int) unsafe.Pointer {
	if ev.words == 0 {
		return unsafe.Pointer(unsafe.SliceData(ev.arena))
	}
	return unsafe.Pointer(&ev.arena[i*ev.words])
}

// window returns event type t's window.
func (ev *clientEvents) window(t codec.EventID) int { return mustEvent(ev.schema, t).Window }

// near reports whether two events of a type are one by their key.
func near(t codec.EventID, g components.GhostID, tick gw.Tick, k eventKey, window int) bool {
	d := int(tick.Sub(k.tick))
	return k.typ == t && k.ghost == g && d <= window && d >= -window
}

// raise plays a predicted event the first time the prediction raises it.
func (c *Client) raise(w *gw.World, t codec.EventID, e ecs.Entity, g components.GhostID, data unsafe.Pointer) {
	ev := &c.events
	tick := w.Tick()
	if ev.hasThrough && !tick.After(ev.through) {
		c.stats.EventsSettled++ // a replay of a tick the server's events judged already
		return
	}
	win := ev.window(t)
	for i := range ev.pending {
		p := &ev.pending[i]
		if near(t, g, tick, eventKey{p.typ, p.info.ghost, p.info.tick}, win) {
			return // raised before: played once
		}
	}
	for _, k := range ev.done {
		if near(t, g, tick, k, win) {
			return
		}
	}
	if len(ev.pending) == MaxPendingEvents {
		c.stats.EventsDropped++
		return
	}
	slot := ev.free[len(ev.free)-1]
	ev.free = ev.free[:len(ev.free)-1]
	size := ev.schema.ComponentSize(mustEvent(ev.schema, t).Comp)
	dst := ev.slot(slot)
	copy(unsafe.Slice((*byte)(dst), size), unsafe.Slice((*byte)(data), size))
	ev.pending = append(ev.pending, pendingEvent{typ: t, info: eventInfo{entity: e, ghost: g, tick: tick}, slot: slot})
	c.stats.EventsPredicted++
	if h := ev.handlers[t].play; h != nil {
		h(&ev.pending[len(ev.pending)-1].info, dst)
	}
}

// takeEvents judges the predicted events by an events message of the
// server: each of its events confirms the nearest pending one of its key,
// or is played late; a pending one whose window the message covers is
// cancelled.
func (c *Client) takeEvents(p []byte) {
	ev := &c.events
	if err := protocol.DecodeEvents(p, ev.schema, &ev.sc, &ev.batch); err != nil {
		c.stats.BadPackets++
		return
	}
	b := &ev.batch
	if ev.hasThrough && !b.Through.After(ev.through) {
		c.stats.BadPackets++ // the reliable channel delivers each once, in order
		return
	}
	for i := range b.List {
		rec := &b.List[i]
		win := ev.window(rec.Type)
		best, bestD := -1, 0
		for j := range ev.pending {
			q := &ev.pending[j]
			if near(rec.Type, rec.Ghost, rec.Tick, eventKey{q.typ, q.info.ghost, q.info.tick}, win) {
				if d := absTicks(rec.Tick.Sub(q.info.tick)); best < 0 || d < bestD {
					best, bestD = j, d
				}
			}
		}
		c.judged(eventKey{rec.Type, rec.Ghost, rec.Tick})
		if best >= 0 {
			q := &ev.pending[best]
			c.stats.EventsConfirmed++
			if h := ev.handlers[q.typ].confirm; h != nil {
				h(&q.info, ev.slot(q.slot))
			}
			ev.drop(best)
			continue
		}
		info := &ev.info
		*info = eventInfo{ghost: rec.Ghost, tick: rec.Tick, late: true, lateBy: max(0, int(c.world.Tick().Sub(rec.Tick)))}
		if rec.Ghost != 0 {
			info.entity, _ = c.ghosts.Entity(rec.Ghost)
		}
		c.stats.EventsLate++
		c.stats.EventLateTicks += uint64(info.lateBy)
		c.stats.EventLateMax = max(c.stats.EventLateMax, info.lateBy)
		if h := ev.handlers[rec.Type].play; h != nil {
			h(info, rec.Data)
		}
	}
	ev.through, ev.hasThrough = b.Through, true
	for j := 0; j < len(ev.pending); {
		q := ev.pending[j]
		if q.info.tick.Add(ev.window(q.typ)).After(ev.through) {
			j++
			continue
		}
		c.stats.EventsCancelled++
		if h := ev.handlers[q.typ].cancel; h != nil {
			h(&ev.pending[j].info, ev.slot(q.slot))
		}
		ev.drop(j)
	}
	keep := ev.done[:0]
	for _, k := range ev.done {
		if k.tick.Add(ev.window(k.typ)).After(ev.through) {
			keep = append(keep, k)
		}
	}
	ev.done = keep
}

// judged notes an event the server had, so a replay raising it is not
// played again; the oldest note makes room when the list is full.
func (c *Client) judged(k eventKey) {
	ev := &c.events
	if len(ev.done) == cap(ev.done) {
		copy(ev.done, ev.done[1:])
		ev.done = ev.done[:len(ev.done)-1]
		c.stats.EventsForgotten++
	}
	ev.done = append(ev.done, k)
}

// drop removes pending event j, freeing its slot.
func (ev *clientEvents) drop(j int) {
	ev.free = append(ev.free, ev.pending[j].slot)
	last := len(ev.pending) - 1
	ev.pending[j] = ev.pending[last]
	ev.pending = ev.pending[:last]
}

// absTicks returns |d|.
func absTicks(d int32) int {
	if d < 0 {
		return -int(d)
	}
	return int(d)
}
