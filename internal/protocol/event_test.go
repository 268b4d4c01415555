package protocol_test

import (
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// hitEvent and beepEvent are event types of evSchema: one with data, one
// without.
type hitEvent struct {
	Damage float32
	Crit   bool
}

type beepEvent struct{}

// evSchema declares the two event types.
var evSchema = func() *codec.Schema {
	var b codec.SchemaBuilder
	b.AddEvent(reflect.TypeFor[hitEvent](), func(p unsafe.Pointer, s *codec.Stream) {
		h := (*hitEvent)(p)
		s.Float32(&h.Damage)
		s.Bool(&h.Crit)
	}, codec.EventRules{Window: 4})
	b.AddEvent(reflect.TypeFor[beepEvent](), func(unsafe.Pointer, *codec.Stream) {}, codec.EventRules{})
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	return s
}()

// eventsAt builds a message's events: a hit and a beep per tick before
// through, the newest last.
func eventsAt(through gw.Tick, n int) ([]protocol.EventRecord, []hitEvent) {
	hits := make([]hitEvent, n)
	var beep beepEvent
	var evs []protocol.EventRecord
	for i := range n {
		hits[i] = hitEvent{Damage: float32(i) + 0.5, Crit: i%2 == 0}
		tick := through.Add(i - n + 1)
		evs = append(evs, protocol.EventRecord{Type: 0, Ghost: 7, Tick: tick, Data: unsafe.Pointer(&hits[i])},
			protocol.EventRecord{Type: 1, Tick: tick, Data: unsafe.Pointer(&beep)})
	}
	return evs, hits
}

// Events travel with their type, ghost, tick and data, across the tick
// counter's wrap too; an empty message carries its tick alone.
func TestEventsRoundTrip(t *testing.T) {
	var st protocol.EventScratch
	var got protocol.Events
	for _, through := range []gw.Tick{0, 1000, math.MaxUint32, math.MaxUint32 - 2} {
		evs, hits := eventsAt(through, 3)
		p := protocol.AppendEvents(nil, evSchema, &st, through, evs)
		require.NoError(t, protocol.DecodeEvents(p, evSchema, &st, &got))
		assert.Equal(t, through, got.Through)
		require.Len(t, got.List, len(evs))
		for i, ev := range got.List {
			assert.Equal(t, evs[i].Type, ev.Type)
			assert.Equal(t, evs[i].Ghost, ev.Ghost)
			assert.Equal(t, evs[i].Tick, ev.Tick, "through %v, event %d", through, i)
			if ev.Type == 0 {
				assert.Equal(t, hits[i/2], *(*hitEvent)(ev.Data))
			}
		}
	}
	p := protocol.AppendEvents(nil, evSchema, &st, 42, nil)
	require.NoError(t, protocol.DecodeEvents(p, evSchema, &st, &got))
	assert.Equal(t, gw.Tick(42), got.Through)
	assert.Empty(t, got.List)
}

// A message naming an event type the schema lacks is refused, naming it.
func TestEventsRefuseAnUnknownType(t *testing.T) {
	var st protocol.EventScratch
	evs, _ := eventsAt(10, 1)
	p := protocol.AppendEvents(nil, evSchema, &st, 10, evs[:1])
	// The type is the first 6 bits after the tick (32) and the count (8).
	p[2+5] |= 0x3f
	var got protocol.Events
	err := protocol.DecodeEvents(p, evSchema, &st, &got)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "event type 63 outside 0..1")
	requireDecodeError(t, err)
}

// The server builds events messages: too many events, or one older than
// the message can say, is a bug it panics on.
func TestAppendEventsPanicsOnABadMessage(t *testing.T) {
	var st protocol.EventScratch
	evs, _ := eventsAt(1000, 128)
	assert.Panics(t, func() { protocol.AppendEvents(nil, evSchema, &st, 1000, evs) }, "256 events")
	old, _ := eventsAt(1000, 1)
	old[0].Tick = gw.Tick(1000).Add(-protocol.MaxEventAge - 1)
	assert.Panics(t, func() { protocol.AppendEvents(nil, evSchema, &st, 1000, old[:1]) })
}

func FuzzDecodeEvents(f *testing.F) {
	var st protocol.EventScratch
	for _, n := range []int{0, 1, 5, 100} {
		evs, _ := eventsAt(gw.Tick(n*1000+99), n)
		if len(evs) > protocol.MaxEventsPerMessage {
			evs = evs[:protocol.MaxEventsPerMessage]
		}
		f.Add(protocol.AppendEvents(nil, evSchema, &st, gw.Tick(n*1000+99), evs))
	}
	f.Add([]byte{protocol.ProtocolVersion, byte(protocol.MsgEvents), 0, 0, 0, 0, 255})
	f.Fuzz(func(t *testing.T, p []byte) {
		var st protocol.EventScratch
		var got protocol.Events
		if err := protocol.DecodeEvents(p, evSchema, &st, &got); err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, len(got.List), protocol.MaxEventsPerMessage)
		// What decodes encodes to a message that decodes the same.
		again := protocol.AppendEvents(nil, evSchema, &st, got.Through, got.List)
		var back protocol.Events
		require.NoError(t, protocol.DecodeEvents(again, evSchema, &st, &back))
		require.Equal(t, len(got.List), len(back.List))
		for i := range got.List {
			require.Equal(t, got.List[i].Tick, back.List[i].Tick)
			require.Equal(t, got.List[i].Ghost, back.List[i].Ghost)
		}
	})
}
