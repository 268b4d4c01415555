package rooms_test

import (
	"context"
	"errors"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/rooms"
	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

var key = [udp.KeySize]byte{7, 7, 7, 1}

const protocolID = 0x726f6f6d73

// fleet is a manager of test-game rooms on a loopback UDP listener.
type fleet struct {
	t      *testing.T
	schema *testgame.Schema
	ln     *udp.Listener
	m      *rooms.Manager
	cancel context.CancelFunc
	done   chan error
}

func newFleet(t *testing.T, mutate func(*rooms.Options)) *fleet {
	t.Helper()
	schema, err := testgame.NewSchema()
	require.NoError(t, err)
	ln, err := udp.Listen(udp.Options{BindAddress: "127.0.0.1:0", PrivateKey: key, ProtocolID: protocolID, MaxClients: 256})
	require.NoError(t, err)
	opts := rooms.Options{Listener: ln, EmptyFor: -1,
		NewRoom: func(string) (*systems.Game, systems.ServerOptions, error) {
			return schema.Game(), systems.ServerOptions{}, nil
		}}
	if mutate != nil {
		mutate(&opts)
	}
	m, err := rooms.New(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{t: t, schema: schema, ln: ln, m: m, cancel: cancel, done: make(chan error, 1)}
	go func() { f.done <- m.Run(ctx) }()
	return f
}

// stop ends Run and waits for it.
func (f *fleet) stop() {
	f.cancel()
	require.NoError(f.t, <-f.done)
}

// player is a bot client of a room.
type player struct {
	c    *systems.Client
	conn *udp.Client
}

// join connects a bot to room with a token whose claims name it; data,
// when not nil, replaces the claims with raw user data.
func (f *fleet) join(room string, id uint64, raw *[udp.UserDataSize]byte) *player {
	f.t.Helper()
	return f.joinAs(room, "p", id, raw)
}

// joinAs is join for a player of the given identity.
func (f *fleet) joinAs(room, identity string, id uint64, raw *[udp.UserDataSize]byte) *player {
	f.t.Helper()
	ud := [udp.UserDataSize]byte{}
	if raw != nil {
		ud = *raw
	} else {
		c := tokens.Claims{Room: room, Identity: identity}
		var err error
		ud, err = c.UserData()
		require.NoError(f.t, err)
	}
	now := time.Now()
	tok, _, err := udp.MakeConnectToken(udp.TokenParams{PrivateKey: key, ProtocolID: protocolID, ClientID: id,
		ServerAddresses: []netip.AddrPort{f.ln.PublicAddress()}, Create: now, Expire: now.Add(time.Minute), TimeoutSeconds: 5, UserData: ud})
	require.NoError(f.t, err)
	conn, err := udp.Dial(tok, udp.ClientOptions{})
	require.NoError(f.t, err)
	bot := testgame.NewBot(id, gw.Tick(1<<30))
	c, err := systems.NewClient(gw.NewRealTime(), conn, f.schema.Game(), systems.ClientOptions{Input: systems.InputFunc(bot.Input)})
	require.NoError(f.t, err)
	return &player{c: c, conn: conn}
}

// play updates the players at 60 Hz until cond holds or 10 s pass.
func play(t *testing.T, ps []*player, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Second / 60)
	defer tick.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "not reached in 10 s")
		<-tick.C
		for _, p := range ps {
			p.c.Update()
			p.c.Frame()
		}
	}
}

// cars counts the car ghosts a client sees (not the cones the bots drop).
func cars(c *systems.Client) int {
	q := generic.NewFilter1[components.Ghost]().With(generic.T[testgame.Body]()).Query(c.World().Arche())
	n := 0
	for q.Next() {
		n++
	}
	return n
}

// Three rooms on one port: every connection reaches the room its token
// names and sees only that room's players; a token for a room that is not
// open, or without claims, is refused and counted; a room the game ends
// tells its clients; a draining manager admits nothing; Run leaves no
// goroutine behind.
func TestRoomsShareOnePort(t *testing.T) {
	before := runtime.NumGoroutine()
	f := newFleet(t, nil)
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, f.m.Open(name))
	}
	assert.ErrorContains(t, f.m.Open("a"), `room "a" is open already`)
	var ps []*player
	var in []string
	per := map[string]int{"a": 1, "b": 2, "c": 3}
	id := uint64(1)
	for _, name := range []string{"a", "b", "c"} {
		for range per[name] {
			ps = append(ps, f.join(name, id, nil))
			in = append(in, name)
			id++
		}
	}
	allSeen := func() bool {
		for _, r := range f.m.Rooms() {
			if r.Clients != per[r.Name] {
				return false
			}
		}
		for i, p := range ps {
			if cars(p.c) != per[in[i]] {
				return false
			}
		}
		return true
	}
	play(t, ps, allSeen)
	ticks := f.m.Rooms()[0].Ticks
	play(t, ps, func() bool { return f.m.Rooms()[0].Ticks > ticks+30 })
	assert.True(t, allSeen(), "half a second on, each client still sees its own room's cars, and only those")

	lost := f.join("zzz", 100, nil)
	var junk [udp.UserDataSize]byte
	junk[0] = 0xee
	noClaims := f.join("", 101, &junk)
	play(t, append(ps, lost, noClaims), func() bool { return len(f.m.Stats().Refused) == 2 })
	assert.Equal(t, map[string]uint64{rooms.RefusedUnknownRoom: 1, rooms.RefusedNoClaims: 1}, f.m.Stats().Refused)

	require.True(t, f.m.End("c"))
	play(t, ps, func() bool { return len(f.m.Rooms()) == 2 })
	var closed int
	play(t, ps, func() bool {
		closed = 0
		for _, p := range ps {
			var ce *systems.ConnError
			if errors.As(p.c.Err(), &ce) && ce.Reason == netsync.RejectClosed {
				closed++
			}
		}
		return closed == 3
	})

	f.m.Drain()
	late := f.join("a", 200, nil)
	play(t, append(ps, late), func() bool { return f.m.Stats().Refused[rooms.RefusedDraining] == 1 })
	assert.ErrorContains(t, f.m.Open("d"), "draining")

	st := f.m.Stats()
	assert.Equal(t, uint64(6), st.Routed)
	assert.Equal(t, uint64(3), st.Opened)
	f.stop()
	for _, p := range append(ps, lost, noClaims, late) {
		p.c.Close()
		_ = p.conn.Close()
	}
	assert.Equal(t, uint64(3), f.m.Stats().Ended)
	// Closing a connection lets its goroutines return; give them a second.
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if !assert.LessOrEqualf(t, runtime.NumGoroutine(), before, "no goroutine left") {
		buf := make([]byte, 1<<16)
		t.Logf("%s", buf[:runtime.Stack(buf, true)])
	}
}

// A room with no client for EmptyFor ends by itself; OpenOnDemand opens
// a room the first connection names, within MaxRooms.
func TestRoomsOpenOnDemandAndEndWhenEmpty(t *testing.T) {
	f := newFleet(t, func(o *rooms.Options) { o.OpenOnDemand, o.MaxRooms, o.EmptyFor = true, 1, 300*time.Millisecond })
	defer f.stop()
	p := f.join("x", 1, nil)
	play(t, []*player{p}, func() bool { rs := f.m.Rooms(); return len(rs) == 1 && rs[0].Clients == 1 })
	other := f.join("y", 2, nil)
	play(t, []*player{p, other}, func() bool { return f.m.Stats().Refused[rooms.RefusedUnknownRoom] == 1 })
	p.c.Close()
	_ = p.conn.Close()
	play(t, nil, func() bool { return f.m.Stats().Ended == 1 })
	assert.Empty(t, f.m.Rooms())
	_ = other.conn.Close()
}

func TestNewRefusesBadOptions(t *testing.T) {
	_, err := rooms.New(rooms.Options{})
	assert.EqualError(t, err, "rooms: Options.Listener is nil")
	ln, err := udp.Listen(udp.Options{BindAddress: "127.0.0.1:0", PrivateKey: key})
	require.NoError(t, err)
	defer ln.Close()
	_, err = rooms.New(rooms.Options{Listener: ln})
	assert.EqualError(t, err, "rooms: Options.NewRoom is nil")
	_, err = rooms.New(rooms.Options{Listener: ln, MaxRooms: 5000,
		NewRoom: func(string) (*systems.Game, systems.ServerOptions, error) { return nil, systems.ServerOptions{}, nil }})
	assert.EqualError(t, err, "rooms: MaxRooms 5000 outside 0..1024")
}

// A player whose link drops takes back its car with a new token for the
// same room and identity, on loopback UDP through the manager: the room
// holds the place (the room stays open, the other player keeps seeing
// the car), the new connection is routed to the same room by its claims,
// and nobody sees two cars of it.
func TestRoomsGiveAReconnectingPlayerItsPlace(t *testing.T) {
	f := newFleet(t, func(o *rooms.Options) {
		o.EmptyFor = 200 * time.Millisecond
		base := o.NewRoom
		o.NewRoom = func(name string) (*systems.Game, systems.ServerOptions, error) {
			g, so, err := base(name)
			so.ReconnectGrace, so.Timeout = 5*time.Second, 300*time.Millisecond
			return g, so, err
		}
	})
	defer f.stop()
	require.NoError(t, f.m.Open("a"))
	alice, bob := f.joinAs("a", "alice", 1, nil), f.joinAs("a", "bob", 2, nil)
	both := []*player{alice, bob}
	play(t, both, func() bool { return cars(alice.c) == 2 && cars(bob.c) == 2 })
	e, _ := alice.c.Player()
	aliceGhosts := generic.NewMap[components.Ghost](alice.c.World().Arche())
	ghost := *aliceGhosts.Get(e)

	require.NoError(t, alice.conn.Close()) // the link drops: no disconnect reaches the game server
	play(t, []*player{bob}, func() bool { rs := f.m.Rooms(); return len(rs) == 1 && rs[0].Held == 1 })
	past := time.Now().Add(2 * 200 * time.Millisecond) // twice EmptyFor: the held place keeps the room open
	play(t, []*player{bob}, func() bool { return time.Now().After(past) })
	require.Len(t, f.m.Rooms(), 1)
	assert.Equal(t, 2, cars(bob.c), "bob still sees alice's car")

	again := f.joinAs("a", "alice", 3, nil)
	play(t, []*player{bob, again}, func() bool { _, ok := again.c.Player(); return ok && cars(bob.c) == 2 })
	e, _ = again.c.Player()
	againGhosts := generic.NewMap[components.Ghost](again.c.World().Arche())
	mine := *againGhosts.Get(e)
	assert.Equal(t, ghost.ID, mine.ID, "the same car")
	conn, _ := again.c.Conn()
	assert.Equal(t, conn, mine.Owner, "now the new connection's")
	a := again.c.World().Arche()
	assert.True(t, a.Has(e, ecs.ComponentID[components.Predicted](a)), "predicted by its driver")
	play(t, []*player{bob, again}, func() bool {
		rs := f.m.Rooms()
		return rs[0].Reconnects == 1 && rs[0].Held == 0 && cars(again.c) == 2
	})
	past = time.Now().Add(300 * time.Millisecond)
	play(t, []*player{bob, again}, func() bool { return time.Now().After(past) })
	assert.Equal(t, 2, cars(again.c))
	assert.Equal(t, 2, cars(bob.c), "no duplicate car")
	r := f.m.Rooms()[0]
	assert.Equal(t, 2, r.Clients)
	assert.Zero(t, r.HeldGivenUp)
	assert.Equal(t, uint64(3), f.m.Stats().Routed)

	// Bob quits; alice's link drops again: the room has no client, only
	// a held place, and stays open past EmptyFor for her.
	bob.c.Close()
	_ = bob.conn.Close()
	require.NoError(t, again.conn.Close())
	play(t, nil, func() bool { rs := f.m.Rooms(); return len(rs) == 1 && rs[0].Held == 1 && rs[0].Clients == 0 })
	past = time.Now().Add(2 * 200 * time.Millisecond)
	play(t, nil, func() bool { return time.Now().After(past) })
	require.Len(t, f.m.Rooms(), 1, "a room holding a place is not empty")
	last := f.joinAs("a", "alice", 4, nil)
	play(t, []*player{last}, func() bool { _, ok := last.c.Player(); return ok })
	e, _ = last.c.Player()
	lastGhosts := generic.NewMap[components.Ghost](last.c.World().Arche())
	assert.Equal(t, ghost.ID, lastGhosts.Get(e).ID)
	last.c.Close()
	_ = last.conn.Close()
}

// Shutdown with three rooms playing: nothing new is admitted, the room
// whose match ends in time finishes by itself, the other two are ended at
// the grace, every client is told the server is closing, and it returns
// within the grace.
func TestShutdownDrainsThreeRooms(t *testing.T) {
	f := newFleet(t, nil)
	defer f.stop()
	var ps []*player
	for i, name := range []string{"a", "b", "c"} {
		require.NoError(t, f.m.Open(name))
		ps = append(ps, f.join(name, uint64(i+1), nil))
	}
	play(t, ps, func() bool {
		n := 0
		for _, r := range f.m.Rooms() {
			n += r.Clients
		}
		return n == 3
	})
	type result struct{ finished, ended int }
	done := make(chan result, 1)
	begin := time.Now()
	go func() {
		fin, end := f.m.Shutdown(context.Background(), time.Second)
		done <- result{fin, end}
	}()
	late := f.join("a", 9, nil)
	all := append(ps, late)
	play(t, all, func() bool { return f.m.Stats().Refused[rooms.RefusedDraining] == 1 })
	f.m.End("a") // room a's match is over in time
	var r result
	play(t, all, func() bool {
		select {
		case r = <-done:
			return true
		default:
			return false
		}
	})
	took := time.Since(begin)
	assert.Equal(t, result{1, 2}, r)
	assert.Less(t, took, 1500*time.Millisecond, "within the grace")
	play(t, ps, func() bool {
		for _, p := range ps {
			var ce *systems.ConnError
			if !errors.As(p.c.Err(), &ce) || ce.Reason != netsync.RejectClosed {
				return false
			}
		}
		return true
	})
	assert.Empty(t, f.m.Rooms())
	for _, p := range all {
		p.c.Close()
		_ = p.conn.Close()
	}
}

// OnOpen sets a room's server up before its first update and may refuse
// the room; OnEnd gets each room's last stats and server once it has
// closed. A draining manager's room ends as soon as nobody plays in it,
// while a room with a player plays on.
func TestHooksAndDrainingRooms(t *testing.T) {
	var mu sync.Mutex
	opened := map[string]*systems.Server{}
	ended := map[string]rooms.RoomStats{}
	f := newFleet(t, func(o *rooms.Options) {
		o.OnOpen = func(name string, s *systems.Server) error {
			if name == "bad" {
				return errors.New("no such map")
			}
			mu.Lock()
			defer mu.Unlock()
			opened[name] = s
			return nil
		}
		o.OnEnd = func(st rooms.RoomStats, s *systems.Server) {
			mu.Lock()
			defer mu.Unlock()
			assert.Same(t, opened[st.Name], s, "the server OnOpen set up")
			_, again := ended[st.Name]
			assert.False(t, again, "once per room")
			ended[st.Name] = st
		}
	})
	defer f.stop()
	assert.EqualError(t, f.m.Open("bad"), `rooms: room "bad": OnOpen: no such map`)
	require.NoError(t, f.m.Open("empty"))
	require.NoError(t, f.m.Open("busy"))
	p := f.join("busy", 1, nil)
	play(t, []*player{p}, func() bool { rs := f.m.Rooms(); return len(rs) == 2 && rs[0].Clients == 1 })
	assert.Len(t, opened, 2)
	f.m.Drain()
	play(t, []*player{p}, func() bool { rs := f.m.Rooms(); return len(rs) == 1 && rs[0].Name == "busy" })
	mu.Lock()
	assert.Equal(t, 0, ended["empty"].Clients, "the empty room ended at once")
	mu.Unlock()
	ticks := f.m.Rooms()[0].Ticks
	play(t, []*player{p}, func() bool { return f.m.Rooms()[0].Ticks > ticks+10 })
	require.Len(t, f.m.Rooms(), 1, "the room with a player plays on")
	p.c.Close() // the last player leaves: the draining room is over
	play(t, []*player{p}, func() bool { return len(f.m.Rooms()) == 0 })
	_ = p.conn.Close()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ended, 2)
	busy := ended["busy"]
	assert.Equal(t, 1, busy.Peak)
	assert.Positive(t, busy.Ticks)
	assert.Positive(t, busy.BytesOut)
}
