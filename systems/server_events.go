package systems

import (
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// MaxEventsPerSend is the most predicted events a server keeps between two
// sends (ServerOptions.SendInterval ticks): one events message. It drops
// the ones raised beyond, counted as ServerStats.EventsDropped.
const MaxEventsPerSend = protocol.MaxEventsPerMessage

// eventHeartbeat is the most ticks a server lets pass without an events
// message while the schema declares events: an empty one says "none up
// to this tick", which is how a client learns that a predicted event did
// not happen.
const eventHeartbeat = 6

// serverEvents holds the events raised since the last send, their data in
// an arena of fixed slots (no allocation per event).
type serverEvents struct {
	list  []protocol.EventRecord
	arena []uint64
	words int // the largest event type's size, in 8-byte words
	// handlers are the server's own, by event type (HandleServerEvent).
	handlers []func(*eventInfo, unsafe.Pointer)
	info     eventInfo // what a handler gets, kept here: no allocation
	sc       protocol.EventScratch
	tx       []byte
	// sent is the tick of the last message; none before the first.
	sent    gw.Tick
	hasSent bool
}

// initEvents prepares the server's events when the schema declares some.
func (s *Server) initEvents(cs *codec.Schema) {
	if cs.NumEvents() == 0 {
		return
	}
	ev := &s.events
	for i := range cs.NumEvents() {
		t, _ := cs.Event(codec.EventID(i))
		ev.words = max(ev.words, (cs.ComponentSize(t.Comp)+7)/8)
	}
	ev.handlers = make([]func(*eventInfo, unsafe.Pointer), cs.NumEvents())
	ev.list = make([]protocol.EventRecord, 0, MaxEventsPerSend)
	ev.arena = make([]uint64, max(1, MaxEventsPerSend*ev.words))
	installEventSink(s.world, cs, s.raise)
}

// raise records an event of the tick the server runs.
func (s *Server) raise(w *gw.World, t codec.EventID, e ecs.Entity, g components.GhostID, data unsafe.Pointer) {
	if w.IsReplaying() {
		return // the determinism check's replay of a tick already run
	}
	ev := &s.events
	if len(ev.list) == MaxEventsPerSend {
		s.stats.EventsDropped++
		return
	}
	size := s.binding.Schema().ComponentSize(mustEvent(s.binding.Schema(), t).Comp)
	slot := ev.arena[len(ev.list)*ev.words:]
	dst := unsafe.Pointer(unsafe.SliceData(slot))
	copy(unsafe.Slice((*byte)(dst), size), unsafe.Slice((*byte)(data), size))
	ev.list = append(ev.list, protocol.EventRecord{Type: t, Ghost: g, Tick: w.Tick(), Data: dst})
	s.stats.EventsRaised++
	if h := ev.handlers[t]; h != nil {
		ev.info = eventInfo{entity: e, ghost: g, tick: w.Tick()}
		h(&ev.info, dst)
	}
}

// sendEvents sends every connection the events raised since the last
// send, or an empty message when none was sent for eventHeartbeat ticks.
// One encoding serves every connection.
func (s *Server) sendEvents(tick gw.Tick) {
	ev := &s.events
	if ev.arena == nil || len(s.conns) == 0 {
		ev.list = ev.list[:0]
		return
	}
	if len(ev.list) == 0 && ev.hasSent && tick.Sub(ev.sent) < eventHeartbeat {
		return
	}
	ev.tx = protocol.AppendEvents(ev.tx[:0], s.binding.Schema(), &ev.sc, tick, ev.list)
	for _, sc := range s.conns {
		if err := sc.link.pc.SendReliable(ev.tx); err != nil {
			s.stats.EventMessagesRefused++ // the connection's backlog: it is dropped by its link
		}
	}
	s.stats.EventMessages++
	ev.list, ev.sent, ev.hasSent = ev.list[:0], tick, true
}

// mustEvent returns a declared event type: t came from the schema.
func mustEvent(cs *codec.Schema, t codec.EventID) codec.Event {
	ev, ok := cs.Event(t)
	if !ok {
		panic("systems: unknown event type from the schema") // a bug
	}
	return ev
}
