package systems_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// reconnectRig is a harness of the test game whose clients have
// identities and always move right, counting the game's connection
// hooks.
type reconnectRig struct {
	g        *testGame
	h        *harness.Harness
	connects int
	left     []leftCall
	back     []backCall
	ends     []transport.Conn // each client's end of its link, to cut it
}

type leftCall struct {
	conn  components.ConnID
	owned []ecs.Entity
}

type backCall struct {
	conn, old components.ConnID
	owned     []ecs.Entity
}

// newReconnectRig starts clients of the identities given, with opts as
// the server's options.
func newReconnectRig(t *testing.T, opts systems.ServerOptions, identities ...string) *reconnectRig {
	t.Helper()
	r := &reconnectRig{g: newTestGame()}
	game := r.g.game()
	game.OnConnect = func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
		r.connects++
		return r.g.spawn(w, conn)
	}
	game.OnDisconnect = func(w *gw.World, conn components.ConnID, owned []ecs.Entity) {
		r.left = append(r.left, leftCall{conn, append([]ecs.Entity(nil), owned...)})
		for _, e := range owned {
			w.Arche().RemoveEntity(e)
		}
	}
	game.OnReconnect = func(_ *gw.World, conn, old components.ConnID, owned []ecs.Entity) {
		r.back = append(r.back, backCall{conn, old, append([]ecs.Entity(nil), owned...)})
	}
	h, err := harness.New(harness.Options{Seed: 11, Game: game, Server: opts})
	require.NoError(t, err)
	r.h = h
	for _, id := range identities {
		r.add(t, id)
	}
	return r
}

// add connects one more client of identity id.
func (r *reconnectRig) add(t *testing.T, id string) *systems.Client {
	t.Helper()
	i := len(r.ends)
	r.ends = append(r.ends, nil)
	require.NoError(t, r.h.AddClient(harness.ClientSpec{Identity: id, Link: link(60*time.Millisecond, 5*time.Millisecond, 0.02),
		Wrap: func(c transport.Conn) transport.Conn { r.ends[i] = c; return c },
		Options: systems.ClientOptions{
			Input: systems.InputFunc(func(*gw.World, gw.Tick) Move { return Move{X: 1} }),
		}}))
	return r.h.Clients[i]
}

// cut closes client i's end of its link without a word: the server hears
// nothing more from it and times it out.
func (r *reconnectRig) cut(i int) { _ = r.ends[i].Close() }

// connected runs until client i has its player, and returns its
// connection and its player's ghost.
func (r *reconnectRig) connected(t *testing.T, i int) (components.ConnID, components.Ghost) {
	t.Helper()
	c := r.h.Clients[i]
	require.True(t, r.h.RunUntil(func() bool { _, ok := c.Player(); return ok }, 3*time.Second), "client %d has its player", i)
	conn, _ := c.Conn()
	e, _ := c.Player()
	m := generic.NewMap[components.Ghost](c.World().Arche())
	return conn, *m.Get(e)
}

// x is the server's position of entity e.
func (r *reconnectRig) x(e ecs.Entity) float32 {
	m := generic.NewMap[Pos](r.h.Server.World().Arche())
	return m.Get(e).X
}

// players counts the player ghosts world w holds.
func players(w *gw.World) int {
	q := generic.NewFilter1[components.Ghost]().Query(w.Arche())
	n := q.Count()
	q.Close()
	return n
}

// A player whose link is cut is held: its ghost stands on the server
// and never leaves the other client; its new connection within the grace
// takes back the same ghost and entity, predicts it as its own, moves it
// again, and neither end holds a second player. The determinism check
// runs on the server across it all.
func TestReconnectWithinTheGraceTakesBackTheSameGhost(t *testing.T) {
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: 3 * time.Second, Timeout: 500 * time.Millisecond, SyncTest: 8},
		"alice", "bob")
	h := r.h
	conn, ghost := r.connected(t, 0)
	r.connected(t, 1)
	h.Run(time.Second)
	server, ok := h.Server.Player(conn)
	require.True(t, ok)
	bob := h.Clients[1]
	require.True(t, h.RunUntil(func() bool { _, ok := bob.Ghosts().Entity(ghost.ID); return ok }, time.Second))
	seen, _ := bob.Ghosts().Entity(ghost.ID)
	bobGhosts := generic.NewMap[components.Ghost](bob.World().Arche())
	// stays checks, every step from now on, that bob shows alice's
	// ghost on the entity it always had.
	stays := func() bool {
		e, ok := bob.Ghosts().Entity(ghost.ID)
		require.True(t, ok && e == seen, "at %v: alice's ghost left bob's world", h.Time.Now())
		return true
	}

	r.cut(0)
	require.True(t, h.RunUntil(func() bool { return stays() && h.Server.Stats().Held == 1 }, 2*time.Second))
	assert.Empty(t, r.left, "held: OnDisconnect waits")
	e, ok := h.Server.Ghosts().Entity(ghost.ID)
	require.True(t, ok, "the ghost stays in the server's world")
	assert.Equal(t, server, e)
	_, ok = h.Server.Player(conn)
	assert.False(t, ok, "the connection is gone")
	h.Run(100 * time.Millisecond) // the last inputs from before the cut are applied
	stands := r.x(server)
	for range 300 {
		h.Step()
		stays()
	}
	assert.Equal(t, stands, r.x(server), "a held player stands: nobody is at the controls")

	alice := r.add(t, "alice")
	require.True(t, h.RunUntil(func() bool { _, ok := alice.Player(); return stays() && ok }, 3*time.Second))
	again, _ := alice.Conn()
	assert.NotEqual(t, conn, again, "a new connection")
	e, _ = alice.Player()
	aliceGhosts := generic.NewMap[components.Ghost](alice.World().Arche())
	mine := *aliceGhosts.Get(e)
	assert.Equal(t, ghost.ID, mine.ID, "the same ghost")
	assert.Equal(t, again, mine.Owner, "its own")
	assert.Equal(t, ghost.Spawned, mine.Spawned)
	a := alice.World().Arche()
	assert.True(t, a.Has(e, ecs.ComponentID[components.Predicted](a)), "alice predicts her player")
	assert.True(t, a.Has(e, ecs.ComponentID[components.InputHeader](a)), "and drives it")
	e, ok = h.Server.Player(again)
	require.True(t, ok)
	assert.Equal(t, server, e, "the same entity on the server")
	st, _ := h.Server.ConnStats(again)
	assert.Equal(t, ghost.ID, st.Player)
	assert.Equal(t, "alice", st.Identity)
	assert.Equal(t, 2, r.connects, "no OnConnect for the place taken back")
	assert.Empty(t, r.left)
	require.Len(t, r.back, 1)
	assert.Equal(t, backCall{again, conn, []ecs.Entity{server}}, r.back[0])
	ss := h.Server.Stats()
	assert.Equal(t, uint64(1), ss.Reconnects)
	assert.Zero(t, ss.Held)
	assert.Zero(t, ss.ReconnectsExpired)

	require.True(t, h.RunUntil(func() bool { return stays() && bobGhosts.Get(seen).Owner == again }, time.Second),
		"bob learns the new owner")
	b := bob.World().Arche()
	assert.True(t, b.Has(seen, ecs.ComponentID[components.Interpolated](b)), "bob still interpolates it")
	bobConn, _ := bob.Conn()
	bobServer, _ := h.Server.Player(bobConn)
	for range 300 { // alice's inputs flow again
		h.Step()
		stays()
	}
	from, bobFrom := r.x(server), r.x(bobServer)
	for range 1000 {
		h.Step()
		stays()
	}
	moved := r.x(server) - from
	assert.Greater(t, moved, float32(2.5), "alice's inputs move it again (3 a second, 2.8 quantized)")
	assert.InDelta(t, r.x(bobServer)-bobFrom, moved, 0.1, "as fast as bob, who never left")
	st, _ = h.Server.ConnStats(again)
	assert.Greater(t, st.Inputs.Applied, uint64(30))
	assert.Equal(t, 2, players(h.Server.World()), "no duplicate player on the server")
	assert.Equal(t, 2, players(bob.World()), "nor on bob's client")
	assert.Equal(t, 2, players(alice.World()))
	assert.Zero(t, h.Server.Stats().Desyncs, "the determinism check holds across the takeover: %v", h.Server.Stats().FirstDesync)
	assert.Greater(t, h.Server.Stats().SyncTestChecks, uint64(0))
}

// After the grace the place is given up through OnDisconnect, and the
// player's next connection gets a fresh player.
func TestReconnectAfterTheGraceGetsAFreshPlayer(t *testing.T) {
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: time.Second, Timeout: 500 * time.Millisecond}, "alice", "bob")
	h := r.h
	conn, ghost := r.connected(t, 0)
	r.connected(t, 1)
	server, _ := h.Server.Player(conn)
	r.cut(0)
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Held == 1 }, 2*time.Second))
	held := h.Time.Now()
	require.True(t, h.RunUntil(func() bool { return len(r.left) == 1 }, 2*time.Second))
	assert.InDelta(t, time.Second, h.Time.Now()-held, float64(10*time.Millisecond), "given up when the grace is over")
	assert.Equal(t, leftCall{conn, []ecs.Entity{server}}, r.left[0], "OnDisconnect for the old player")
	ss := h.Server.Stats()
	assert.Equal(t, uint64(1), ss.ReconnectsExpired)
	assert.Zero(t, ss.Held)
	_, ok := h.Server.Ghosts().Entity(ghost.ID)
	assert.False(t, ok)
	require.True(t, h.RunUntil(func() bool { _, ok := h.Clients[1].Ghosts().Entity(ghost.ID); return !ok }, time.Second),
		"bob sees it go")

	r.add(t, "alice")
	_, fresh := r.connected(t, 2)
	assert.NotEqual(t, ghost.ID, fresh.ID, "a fresh player")
	assert.Equal(t, 3, r.connects)
	assert.Empty(t, r.back)
	assert.Zero(t, h.Server.Stats().Reconnects)
	h.Run(500 * time.Millisecond)
	assert.Equal(t, 2, players(h.Server.World()))
}

// MaxHeld bounds the held places: one more gives up the oldest through
// OnDisconnect, counted. A held place counts toward MaxClients: a
// newcomer is refused while the held player would not fit on its return,
// and the held player is not.
func TestReconnectHeldPlacesAreCapped(t *testing.T) {
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: 10 * time.Second, Timeout: 500 * time.Millisecond,
		MaxClients: 3, MaxHeld: 1}, "a", "b", "c")
	h := r.h
	connA, _ := r.connected(t, 0)
	connB, ghostB := r.connected(t, 1)
	r.connected(t, 2)
	r.cut(0)
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Held == 1 }, 2*time.Second))
	r.cut(1)
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().HeldEvicted == 1 }, 2*time.Second))
	ss := h.Server.Stats()
	assert.Equal(t, 1, ss.Held, "b's place is held now")
	assert.Zero(t, ss.ReconnectsExpired)
	require.Len(t, r.left, 1)
	assert.Equal(t, connA, r.left[0].conn, "a's place, the oldest, was given up")

	r.add(t, "d")
	r.connected(t, 3) // in a's place, given up
	e := r.add(t, "e")
	require.True(t, h.RunUntil(func() bool { return e.Err() != nil }, 2*time.Second))
	var ce *systems.ConnError
	require.True(t, errors.As(e.Err(), &ce))
	assert.Equal(t, netsync.RejectFull, ce.Reason, "c, d and b's held place fill the server")

	r.add(t, "b")
	_, back := r.connected(t, 5)
	assert.Equal(t, ghostB.ID, back.ID, "b is let in to its place")
	require.Len(t, r.back, 1)
	assert.Equal(t, connB, r.back[0].old)
	a := r.add(t, "a")
	require.True(t, h.RunUntil(func() bool { return a.Err() != nil }, 2*time.Second))
	require.True(t, errors.As(a.Err(), &ce))
	assert.Equal(t, netsync.RejectFull, ce.Reason, "a's place is gone, and the server is full")
}

// A new connection of a player whose old one is still open takes over:
// the old client is told (a disconnect, closed, saying why), the new one
// gets the same ghost, and nobody joins or leaves the game.
func TestReconnectTakesOverALiveConnection(t *testing.T) {
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: 3 * time.Second}, "alice")
	h := r.h
	conn, ghost := r.connected(t, 0)
	r.add(t, "alice")
	again, mine := r.connected(t, 1)
	assert.NotEqual(t, conn, again)
	assert.Equal(t, ghost.ID, mine.ID)
	require.True(t, h.RunUntil(func() bool { return h.Clients[0].Err() != nil }, time.Second))
	var ce *systems.ConnError
	require.True(t, errors.As(h.Clients[0].Err(), &ce))
	assert.Equal(t, netsync.RejectClosed, ce.Reason)
	assert.Contains(t, ce.Detail, "took its place")
	ss := h.Server.Stats()
	assert.Equal(t, uint64(1), ss.Replaced)
	assert.Equal(t, uint64(1), ss.Reconnects)
	assert.Equal(t, 1, ss.Connections)
	assert.Equal(t, 1, r.connects)
	assert.Empty(t, r.left)
	h.Run(500 * time.Millisecond)
	assert.Equal(t, 1, players(h.Server.World()))
}

// A player who leaves on purpose (Client.Close) is not held: a quit is
// not a lost link. Nor is a connection without an identity.
func TestReconnectHoldsNoPlaceForAPlayerWhoLeft(t *testing.T) {
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: 3 * time.Second, Timeout: 500 * time.Millisecond}, "alice", "")
	h := r.h
	conn, _ := r.connected(t, 0)
	nobody, _ := r.connected(t, 1)
	h.Clients[0].Close()
	require.True(t, h.RunUntil(func() bool { return len(r.left) == 1 }, time.Second))
	assert.Equal(t, conn, r.left[0].conn)
	r.cut(1)
	require.True(t, h.RunUntil(func() bool { return len(r.left) == 2 }, 2*time.Second))
	assert.Equal(t, nobody, r.left[1].conn, "no identity: no place to hold")
	assert.Zero(t, h.Server.Stats().Held)
}

// The same seed plays the same reconnect: every position and counter.
func TestReconnectIsDeterministic(t *testing.T) {
	play := func() (float32, systems.ServerStats) {
		r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: 3 * time.Second, Timeout: 500 * time.Millisecond}, "alice", "bob")
		conn, _ := r.connected(t, 0)
		e, _ := r.h.Server.Player(conn)
		r.h.Run(300 * time.Millisecond)
		r.cut(0)
		r.h.Run(time.Second)
		r.add(t, "alice")
		r.h.Run(2 * time.Second)
		st := r.h.Server.Stats()
		st.LinkRTT, st.LinkLoss = 0, 0
		return r.x(e), st
	}
	x1, st1 := play()
	x2, st2 := play()
	assert.Equal(t, x1, x2)
	assert.Equal(t, st1, st2)
	assert.Equal(t, uint64(1), st1.Reconnects)
}

func TestReconnectOptionsAreChecked(t *testing.T) {
	g := newTestGame()
	l, err := transport.NewMemoryNetwork(&gw.VirtualTime{}, 1).Listen("s")
	require.NoError(t, err)
	id := func(transport.Conn) (string, bool) { return "", false }
	for _, tc := range []struct {
		opts systems.ServerOptions
		want string
	}{
		{systems.ServerOptions{ReconnectGrace: -time.Second, Identity: id}, "systems: reconnect grace -1s outside 0..1h0m0s"},
		{systems.ServerOptions{ReconnectGrace: 2 * time.Hour, Identity: id}, "systems: reconnect grace 2h0m0s outside 0..1h0m0s"},
		{systems.ServerOptions{MaxClients: 8, MaxHeld: 9}, "systems: max held places 9 outside 1..8 (MaxClients)"},
		{systems.ServerOptions{MaxHeld: -1}, "systems: max held places -1 outside 1..64 (MaxClients)"},
		{systems.ServerOptions{ReconnectGrace: time.Second}, "systems: ReconnectGrace needs ServerOptions.Identity (tokens.Identity reads a udp connect token's)"},
	} {
		_, err := systems.NewServer(&gw.VirtualTime{}, l, g.game(), tc.opts)
		assert.EqualError(t, err, tc.want)
	}
	_, err = systems.NewServer(&gw.VirtualTime{}, l, g.game(), systems.ServerOptions{ReconnectGrace: time.Hour, Identity: id})
	assert.NoError(t, err)
	assert.Equal(t, tokens.MaxIdentity, systems.MaxIdentity, "the server holds what a token carries")
}

// An identity longer than MaxIdentity is ignored and counted: the
// connection is let in without one.
func TestReconnectIgnoresALongIdentity(t *testing.T) {
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: time.Second, Timeout: 500 * time.Millisecond},
		strings.Repeat("x", systems.MaxIdentity+1), strings.Repeat("y", systems.MaxIdentity))
	long, _ := r.connected(t, 0)
	exact, _ := r.connected(t, 1)
	assert.Equal(t, uint64(1), r.h.Server.Stats().IdentitiesIgnored)
	st, _ := r.h.Server.ConnStats(long)
	assert.Empty(t, st.Identity)
	st, _ = r.h.Server.ConnStats(exact)
	assert.Equal(t, strings.Repeat("y", systems.MaxIdentity), st.Identity)
}

// A held place costs its ghosts' neutral input each tick and nothing
// allocated: the server's ticks with one held and one open connection
// allocate nothing in steady state, nor do the clients'.
func TestReconnectHeldPlaceAllocatesNothingPerTick(t *testing.T) {
	r := newReconnectRig(t, systems.ServerOptions{ReconnectGrace: time.Hour, Timeout: 500 * time.Millisecond}, "alice", "bob")
	r.connected(t, 0)
	r.connected(t, 1)
	r.cut(0)
	require.True(t, r.h.RunUntil(func() bool { return r.h.Server.Stats().Held == 1 }, 2*time.Second))
	r.h.Run(2 * time.Second)
	ticks := r.h.Server.Stats().Ticks
	assert.Zero(t, testing.AllocsPerRun(1000, r.h.Step))
	st := r.h.Server.Stats()
	assert.Equal(t, 1, st.Held)
	assert.Equal(t, 1, st.Connections)
	assert.Greater(t, st.Ticks, ticks+55, "a second of ticks measured")
}
