package protocol

import (
	"fmt"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// MaxEventsPerMessage is the most events one events message carries; a
// server with more sends several.
const MaxEventsPerMessage = 255

// MaxEventAge is the most ticks an event of a message may lie before the
// message's Through tick.
const MaxEventAge = 1<<16 - 1

// EventRecord is one event the server's prediction raised: its type, the
// ghost it is about (0: none), its tick and its data, a value of the
// event type's Go type.
type EventRecord struct {
	Type  codec.EventID
	Ghost components.GhostID
	Tick  ecs.Tick
	Data  unsafe.Pointer
}

// Events is a decoded events message: every event of the server's ticks
// up to Through not sent before, in order. Decoding reuses its memory.
type Events struct {
	Through ecs.Tick
	List    []EventRecord
	arena   []uint64 // the events' data, 8-byte aligned
}

// EventScratch is the reusable state of AppendEvents and DecodeEvents: a
// stream, a writer and a reader a description holds on to, kept here so
// that coding an events message allocates nothing. The zero value is
// ready.
type EventScratch struct {
	st codec.Stream
	w  bitstream.Writer
	r  bitstream.Reader
}

// noData is where an event type without data decodes to.
var noData uint64

// AppendEvents appends an events message of evs (0..MaxEventsPerMessage,
// ticks within MaxEventAge before through, data of their types) to buf and
// returns the extended buffer, as append does. It panics otherwise: the
// server builds them, never the network.
func AppendEvents(buf []byte, s *codec.Schema, sc *EventScratch, through ecs.Tick, evs []EventRecord) []byte {
	if len(evs) > MaxEventsPerMessage {
		panic(fmt.Sprintf("netsync: %d events in a message; want at most %d", len(evs), MaxEventsPerMessage))
	}
	w := &sc.w
	begin(w, buf, MsgEvents)
	w.WriteBits(uint64(through), 32)
	w.WriteBits(uint64(len(evs)), 8)
	for i := range evs {
		ev := &evs[i]
		t, ok := s.Event(ev.Type)
		age := through.Sub(ev.Tick)
		if !ok || age < 0 || age > MaxEventAge {
			panic(fmt.Sprintf("netsync: event %d of type %d at tick %v, through %v", i, ev.Type, ev.Tick, through))
		}
		w.WriteBits(uint64(ev.Type), 6)
		w.WriteBits(uint64(ev.Ghost), 32)
		w.WriteBits(uint64(age), 16)
		s.Encode(&sc.st, t.Comp, w, ev.Data)
	}
	return w.Bytes()
}

// DecodeEvents decodes an events message into e. It refuses an unknown
// event type or a field out of its range, naming it; on error e's
// contents are unspecified. The data of e.List point into e's memory,
// valid until the next decode.
func DecodeEvents(p []byte, s *codec.Schema, sc *EventScratch, e *Events) error {
	r := &sc.r
	if err := open(r, p, MsgEvents); err != nil {
		return err
	}
	through, _ := r.ReadBits(32)
	n, err := r.ReadBits(8)
	if err != nil {
		return err
	}
	e.Through, e.List = ecs.Tick(through), e.List[:0]
	// Room for n values of the largest event type: the arena never moves
	// while the list points into it.
	words := 0
	for i := range s.NumEvents() {
		t, _ := s.Event(codec.EventID(i))
		words = max(words, (s.ComponentSize(t.Comp)+7)/8)
	}
	if need := int(n) * words; cap(e.arena) < need {
		e.arena = make([]uint64, need)
	}
	e.arena = e.arena[:cap(e.arena)]
	for i := range int(n) {
		typ, _ := r.ReadBits(6)
		ghost, _ := r.ReadBits(32)
		age, err := r.ReadBits(16)
		if err != nil {
			return err
		}
		t, ok := s.Event(codec.EventID(typ))
		if !ok {
			return fmt.Errorf("netsync: event type %d outside 0..%d: %w", typ, s.NumEvents()-1, bitstream.ErrOutOfRange)
		}
		data := unsafe.Pointer(&noData)
		if words > 0 {
			slot := e.arena[i*words : (i+1)*words]
			clear(slot)
			data = unsafe.Pointer(&slot[0])
		}
		if err := s.Decode(&sc.st, t.Comp, r, data); err != nil {
			return fmt.Errorf("netsync: event %d: %w", i, err)
		}
		e.List = append(e.List, EventRecord{Type: codec.EventID(typ), Ghost: components.GhostID(ghost),
			Tick: e.Through.Add(-int(age)), Data: data})
	}
	return end(r)
}
