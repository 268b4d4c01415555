package systems

import (
	"testing"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
)

// ping is an event type with data; its window is 2 ticks.
type ping struct{ N int32 }

func (p *ping) Serialize(s *netsync.Stream) { netsync.Int(s, &p.N, 0, 1000) }

func pingSchema(t *testing.T) *codec.Schema {
	t.Helper()
	var b netsync.SchemaBuilder
	netsync.Event[ping](&b, netsync.EventRules{Window: 2})
	s, err := b.Build()
	require.NoError(t, err)
	return (*codec.Schema)(s)
}

// eventClient is a client with events and no connection, whose handler
// logs what it gets.
func eventClient(t *testing.T) (*Client, *[]string) {
	t.Helper()
	cs := pingSchema(t)
	w := gw.NewWorld(gw.WorldOptions{})
	c := &Client{world: w, binding: ghostreg.Bind(w, cs)}
	c.ghosts = ghostreg.NewClientRegister(c.binding)
	c.initEvents(cs)
	var log []string
	name := func(kind string) func(Event[ping]) {
		return func(ev Event[ping]) {
			if ev.Late {
				kind += " late"
			}
			log = append(log, kind+" "+string(rune('0'+ev.Data.N))+"@"+string(rune('0'+int(ev.Tick)%10)))
		}
	}
	require.NoError(t, HandleEvent(c, EventHandler[ping]{Play: name("play"), Cancel: name("cancel"), Confirm: name("confirm")}))
	return c, &log
}

// raiseAt raises ping n about ghost g on tick.
func raiseAt(c *Client, tick gw.Tick, g components.GhostID, n int32) {
	c.world.SetTick(tick)
	p := ping{N: n}
	c.raise(c.world, 0, ecs.Entity{}, g, unsafe.Pointer(&p))
}

// serverSays hands the client an events message through tick with pings
// n at the given ticks.
func serverSays(c *Client, through gw.Tick, ticks []gw.Tick, n []int32) {
	evs := make([]protocol.EventRecord, len(ticks))
	for i := range ticks {
		evs[i] = protocol.EventRecord{Type: 0, Tick: ticks[i], Data: unsafe.Pointer(&ping{N: n[i]})}
	}
	var st protocol.EventScratch
	c.takeEvents(protocol.AppendEvents(nil, c.events.schema, &st, through, evs))
}

// The matching, step by step: a raise plays once however often the
// replays raise it again; the server's event confirms the nearest
// predicted one within the window; a predicted one the server lacks is
// cancelled once the server's events cover its window; a server event
// with no prediction plays late; a replay's raise for a tick the server
// judged plays nothing.
func TestPredictedEventsAreJudgedByTheServers(t *testing.T) {
	c, log := eventClient(t)
	raiseAt(c, 10, 0, 1)
	raiseAt(c, 10, 0, 1) // a replay
	raiseAt(c, 11, 0, 1) // the replay moved it a tick: the same event
	raiseAt(c, 20, 0, 2)
	assert.Equal(t, []string{"play 1@0", "play 2@0"}, *log)
	serverSays(c, 12, []gw.Tick{11}, []int32{1})
	assert.Equal(t, []string{"play 1@0", "play 2@0", "confirm 1@0"}, *log)
	raiseAt(c, 12, 0, 1) // a replay raising the confirmed one again
	raiseAt(c, 13, 0, 1) // after the server's events, within the window of the confirmed one
	assert.Len(t, *log, 3)
	serverSays(c, 22, []gw.Tick{16}, []int32{3}) // 20 not had; 16 not predicted
	assert.Equal(t, []string{"play 1@0", "play 2@0", "confirm 1@0", "play late 3@6", "cancel 2@0"}, *log)
	st := c.stats
	assert.Equal(t, uint64(2), st.EventsPredicted)
	assert.Equal(t, uint64(1), st.EventsConfirmed)
	assert.Equal(t, uint64(1), st.EventsCancelled)
	assert.Equal(t, uint64(1), st.EventsLate)
	raiseAt(c, 18, 0, 4) // a replay of a tick the server judged
	assert.Equal(t, uint64(2), c.stats.EventsSettled, "this one and the replay of tick 12")
	assert.Len(t, *log, 5)
	assert.Empty(t, c.events.pending)
	assert.Empty(t, c.events.done, "judged events past their window are forgotten")
	serverSays(c, 22, nil, nil) // not newer: refused
	assert.Equal(t, uint64(1), c.stats.BadPackets)
}

// A client holds at most MaxPendingEvents unjudged; the raises beyond are
// not played, counted.
func TestPendingEventsAreCapped(t *testing.T) {
	c, log := eventClient(t)
	for g := range MaxPendingEvents + 44 {
		raiseAt(c, 100, components.GhostID(g+1), 1)
	}
	assert.Len(t, *log, MaxPendingEvents)
	assert.Equal(t, uint64(44), c.stats.EventsDropped)
	serverSays(c, 200, nil, nil)
	assert.Equal(t, uint64(MaxPendingEvents), c.stats.EventsCancelled)
	assert.Len(t, c.events.free, MaxPendingEvents, "every slot is free again")
}

// A server keeps at most MaxEventsPerSend events between two sends; the
// ones beyond are dropped, counted. A raise during the determinism check's
// replay is not an event.
func TestServerEventsAreCapped(t *testing.T) {
	cs := pingSchema(t)
	w := gw.NewWorld(gw.WorldOptions{Authoritative: true})
	s := &Server{world: w, binding: ghostreg.Bind(w, cs)}
	s.initEvents(cs)
	for range MaxEventsPerSend + 45 {
		Raise(w, ecs.Entity{}, &ping{N: 1})
	}
	assert.Equal(t, uint64(MaxEventsPerSend), s.stats.EventsRaised)
	assert.Equal(t, uint64(45), s.stats.EventsDropped)
	s.sendEvents(w.Tick()) // no connection: forgotten
	assert.Empty(t, s.events.list)
}

// Raise and HandleEvent refuse what the schema does not declare.
func TestRaiseRefusesAnUndeclaredType(t *testing.T) {
	assert.PanicsWithValue(t, "systems: Raise on a world that is not a Server's or a Client's", func() {
		Raise(gw.NewWorld(gw.WorldOptions{}), ecs.Entity{}, &ping{})
	})
	c, _ := eventClient(t)
	type other struct{ X int32 }
	assert.PanicsWithValue(t, "systems: Raise of systems.other, which is not an event type of the schema (declare it with netsync.Event)", func() {
		Raise(c.world, ecs.Entity{}, &other{})
	})
	err := HandleEvent(c, EventHandler[other]{})
	assert.EqualError(t, err, "systems: systems.other is not an event type of the schema (declare it with netsync.Event)")
}

// Raising, matching and judging events allocates nothing in steady state:
// the hot path of a tick with events.
func TestEventsAllocateNothing(t *testing.T) {
	c, _ := eventClient(t)
	played := 0
	require.NoError(t, HandleEvent(c, EventHandler[ping]{Play: func(Event[ping]) { played++ }, Cancel: func(Event[ping]) { played-- }}))
	tick := gw.Tick(1000)
	evs := []protocol.EventRecord{{Type: 0, Data: unsafe.Pointer(&ping{N: 1})}}
	var st protocol.EventScratch
	var msg []byte
	allocs := testing.AllocsPerRun(200, func() {
		tick += 20
		raiseAt(c, tick, 0, 1)
		raiseAt(c, tick, 0, 1)
		raiseAt(c, tick+5, 0, 2)
		evs[0].Tick = tick
		msg = protocol.AppendEvents(msg[:0], c.events.schema, &st, tick+10, evs)
		c.takeEvents(msg)
	})
	assert.Zero(t, allocs)
	assert.Positive(t, played)
	assert.Positive(t, c.stats.EventsConfirmed)
	assert.Positive(t, c.stats.EventsCancelled)

	cs := pingSchema(t)
	w := gw.NewWorld(gw.WorldOptions{Authoritative: true})
	s := &Server{world: w, binding: ghostreg.Bind(w, cs)}
	s.initEvents(cs)
	p := &ping{N: 3}
	allocs = testing.AllocsPerRun(200, func() {
		w.SetTick(w.Tick() + 1)
		Raise(w, ecs.Entity{}, p)
		s.sendEvents(w.Tick())
	})
	assert.Zero(t, allocs)
}
