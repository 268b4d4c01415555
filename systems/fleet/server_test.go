package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/agones/agonestest"
	"github.com/ghostwire/ghostwire/systems/fleet"
	"github.com/ghostwire/ghostwire/systems/rooms"
	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

var key = [udp.KeySize]byte{9, 9, 9, 1}

const (
	protocolID = 0x666c656574 // "fleet"
	secret     = "the matchmaker's shared secret"
	period     = 2 * time.Second // the fleet's health period: a ping every second
)

// fixture is a fleet server of test-game rooms on a loopback UDP
// listener; with Agones, a fake sidecar on a fake clock tells it a public
// address that a host port forwards to the listener, as Agones' node
// port does.
type fixture struct {
	t        *testing.T
	schema   *testgame.Schema
	ln       *udp.Listener
	listened time.Time
	clock    *agonestest.Clock // nil without Agones
	sidecar  *agonestest.Sidecar
	hostPort *agonestest.HostPort
	srv      *fleet.Server
	cancel   context.CancelFunc
	done     chan result
	players  []*player
}

// result is what Run returned.
type result struct {
	r   fleet.Report
	err error
}

func newFixture(t *testing.T, onAgones bool, mutate func(*fleet.Options)) *fixture {
	t.Helper()
	schema, err := testgame.NewSchema()
	require.NoError(t, err)
	f := &fixture{t: t, schema: schema, done: make(chan result, 1)}
	f.ln, err = udp.Listen(udp.Options{BindAddress: "127.0.0.1:0", PrivateKey: key, ProtocolID: protocolID})
	require.NoError(t, err)
	f.listened = time.Now()
	opts := fleet.Options{
		Rooms: rooms.Options{Listener: f.ln, EmptyFor: -1, NewRoom: func(string) (*systems.Game, systems.ServerOptions, error) {
			return schema.Game(), systems.ServerOptions{}, nil
		}},
		Tokens: &tokens.Options{Key: key, ProtocolID: protocolID, Secret: secret},
		Grace:  3 * time.Second, Margin: time.Second,
	}
	if onAgones {
		f.hostPort, err = agonestest.NewHostPort(f.ln.Addr(), 16)
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.hostPort.Close() })
		f.clock = agonestest.NewClock()
		f.sidecar = agonestest.New(f.clock, "127.0.0.1", int32(f.hostPort.Addr().Port()), map[string]int64{"rooms": 16})
		web := httptest.NewServer(f.sidecar)
		t.Cleanup(web.Close)
		opts.Agones, err = agones.New(agones.Options{BaseURL: web.URL, Clock: f.clock})
		require.NoError(t, err)
		opts.Rooms.MaxRooms, opts.HealthPeriod, opts.Port, opts.Clock = 8, period, "default", f.clock
	}
	if mutate != nil {
		mutate(&opts)
	}
	f.srv, err = fleet.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, p := range f.players {
			p.c.Close()
			_ = p.conn.Close()
		}
	})
	return f
}

// run starts Run.
func (f *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		r, err := f.srv.Run(ctx)
		f.done <- result{r, err}
	}()
}

// player is a test-game bot client.
type player struct {
	c    *systems.Client
	conn *udp.Client
}

// token asks the server's token service for a token, as a matchmaker
// does; it returns the HTTP status and the answer.
func (f *fixture) token(room, identity string) (int, tokens.Response) {
	f.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(fmt.Sprintf(`{"room":%q,"identity":%q}`, room, identity)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	rec := httptest.NewRecorder()
	f.srv.Tokens().ServeHTTP(rec, req)
	var out tokens.Response
	if rec.Code == http.StatusOK {
		require.NoError(f.t, json.Unmarshal(rec.Body.Bytes(), &out))
	}
	return rec.Code, out
}

// join connects a bot with a connect token.
func (f *fixture) join(token []byte) *player {
	f.t.Helper()
	conn, err := udp.Dial(token, udp.ClientOptions{})
	require.NoError(f.t, err)
	bot := testgame.NewBot(uint64(len(f.players)+1), gw.Tick(1<<30))
	c, err := systems.NewClient(gw.NewRealTime(), conn, f.schema.Game(), systems.ClientOptions{Input: systems.InputFunc(bot.Input)})
	require.NoError(f.t, err)
	p := &player{c: c, conn: conn}
	f.players = append(f.players, p)
	return p
}

// joinRoom joins room with a token of the service.
func (f *fixture) joinRoom(room, identity string) *player {
	f.t.Helper()
	status, res := f.token(room, identity)
	require.Equal(f.t, http.StatusOK, status)
	return f.join(res.Token)
}

// until updates the players at 60 Hz, moving the fake clock on by step
// whenever a goroutine waits on it, until cond holds or 15 s of real time
// pass.
func (f *fixture) until(what string, step time.Duration, cond func() bool) {
	f.t.Helper()
	tick := time.NewTicker(time.Second / 60)
	defer tick.Stop()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		require.True(f.t, time.Now().Before(deadline), "no %s within 15 s", what)
		<-tick.C
		for _, p := range f.players {
			p.c.Update()
			p.c.Frame()
		}
		if f.clock != nil && f.clock.Waiting() > 0 {
			f.clock.Advance(step)
		}
	}
}

// finished returns Run's result once it has returned.
func (f *fixture) finished() (result, bool) {
	select {
	case r := <-f.done:
		f.done <- r
		return r, true
	default:
		return result{}, false
	}
}

// calls returns the sidecar's answered calls to path.
func (f *fixture) calls(path string) []agonestest.Call {
	var out []agonestest.Call
	for _, c := range f.sidecar.Calls() {
		if c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// counter returns the sidecar's rooms counter.
func (f *fixture) counter() agones.Counter { return f.sidecar.GameServer().Status.Counters["rooms"] }

// readyz returns the status of GET /readyz.
func (f *fixture) readyz() int {
	rec := httptest.NewRecorder()
	f.srv.Metrics().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code
}

// cars counts the car ghosts a client sees.
func cars(c *systems.Client) int {
	q := generic.NewFilter1[components.Ghost]().With(generic.T[testgame.Body]()).Query(c.World().Arche())
	n := 0
	for q.Next() {
		n++
	}
	return n
}

// closedByServer reports whether the server told the client it is
// closing.
func closedByServer(p *player) bool {
	var ce *systems.ConnError
	return errors.As(p.c.Err(), &ce) && ce.Reason == netsync.RejectClosed
}

// A whole life on the fake sidecar, on its fake clock: Ready within 2 s
// of listening; the public address learnt from the sidecar given to the
// listener and named by every token, a client connecting through the host
// port although the server is bound elsewhere; tokens for another
// address, protocol or room refused and counted; the rooms counter +1/−1
// per room, its capacity the rooms the process may run; health at least
// every half period, through a 3 s outage of the sidecar (the counter
// catching up after it); then Agones marks the game server Shutdown:
// /readyz not ready, no token, the capacity down to the count, the empty
// room finished at once, the busy one ended at the grace with its client
// told, the counter at zero, and Shutdown exactly once after the last
// room.
func TestLifeOnAgones(t *testing.T) {
	f := newFixture(t, true, nil)
	assert.Equal(t, http.StatusServiceUnavailable, f.readyz(), "not ready before Ready")
	f.run()
	f.until("Ready", 100*time.Millisecond, func() bool { return len(f.calls("/ready")) == 1 })
	t.Logf("Ready %v after listening", time.Since(f.listened).Round(time.Millisecond))
	assert.LessOrEqual(t, time.Since(f.listened), 2*time.Second, "Ready within 2 s of listening")
	f.until("readiness", 100*time.Millisecond, func() bool { return f.readyz() == http.StatusOK })

	public := f.hostPort.Addr()
	require.NotEqual(t, f.ln.Addr(), public)
	f.until("the public address", 100*time.Millisecond, func() bool { return f.ln.PublicAddress() == public })
	assert.Equal(t, public, f.srv.PublicAddress())
	status, res := f.token("a", "alice")
	require.Equal(t, http.StatusOK, status)
	tok, err := udp.ParseConnectToken(res.Token)
	require.NoError(t, err)
	assert.Equal(t, []netip.AddrPort{public}, tok.ServerAddresses, "tokens name the address learnt from the sidecar")
	assert.Equal(t, public.String(), res.Server)

	// The rooms counter: the capacity is the rooms the process may run,
	// the count +1 and −1 per room.
	f.until("the counter's capacity", 100*time.Millisecond, func() bool { return f.counter() == agones.Counter{Count: 0, Capacity: 8} })
	m := f.srv.Rooms()
	require.NoError(t, m.Open("a"))
	f.until("+1", 100*time.Millisecond, func() bool { return f.counter().Count == 1 })
	require.NoError(t, m.Open("b"))
	f.until("+1", 100*time.Millisecond, func() bool { return f.counter().Count == 2 })
	require.True(t, m.End("b"))
	f.until("−1", 100*time.Millisecond, func() bool { return f.counter().Count == 1 })

	// A public address that is not the bind address still connects.
	alice := f.join(res.Token)
	f.until("alice's car", 100*time.Millisecond, func() bool { _, ok := alice.c.Player(); return ok && cars(alice.c) == 1 })

	// Tokens for another address, protocol or room: refused, counted.
	now := time.Now()
	claims := tokens.Claims{Room: "a", Identity: "mallory"}
	ud, err := claims.UserData()
	require.NoError(t, err)
	bind := netip.AddrPortFrom(f.ln.Addr().Addr(), f.ln.Addr().Port())
	for i, p := range []udp.TokenParams{
		{ServerAddresses: []netip.AddrPort{bind}, ProtocolID: protocolID}, // the bind address, sent to it
		{ServerAddresses: []netip.AddrPort{public}, ProtocolID: protocolID + 1},
	} {
		p.PrivateKey, p.ClientID, p.Create, p.Expire, p.TimeoutSeconds, p.UserData = key, uint64(100+i), now, now.Add(time.Minute), 5, ud
		b, _, err := udp.MakeConnectToken(p)
		require.NoError(t, err)
		f.join(b)
	}
	f.joinRoom("nowhere", "bob")
	f.until("the refusals", 100*time.Millisecond, func() bool {
		st := f.ln.Stats()
		return st.WrongAddress > 0 && st.WrongProtocol > 0 && m.Stats().Refused[rooms.RefusedUnknownRoom] == 1
	})
	assert.Equal(t, 1, m.Rooms()[0].Clients, "none of them got in")

	// A 3 s outage of the sidecar: a room opens meanwhile; health pings
	// fail and go on; the counter catches up once the sidecar is back.
	down := f.clock.Now()
	f.sidecar.SetDown(true)
	require.NoError(t, m.Open("c"))
	f.until("3 s of outage", 100*time.Millisecond, func() bool { return f.clock.Now().Sub(down) >= 3*time.Second })
	assert.Equal(t, int64(1), f.counter().Count, "nothing reached the sidecar")
	f.sidecar.SetDown(false)
	up := f.clock.Now()
	f.until("the counter after the outage", 100*time.Millisecond, func() bool {
		pings := f.calls("/health")
		return f.counter().Count == 2 && pings[len(pings)-1].At.After(up)
	})
	pings := f.calls("/health")
	for i := 1; i < len(pings); i++ {
		if !pings[i-1].At.After(up) && !pings[i].At.Before(down) {
			continue // across the outage: the pings in it failed, unrecorded
		}
		assert.LessOrEqualf(t, pings[i].At.Sub(pings[i-1].At), period/2, "health ping %d", i)
	}

	// Agones marks the game server Shutdown: the drain.
	f.sidecar.SetState("Shutdown")
	drainBegan := time.Now()
	f.until("not ready", 100*time.Millisecond, func() bool { return f.readyz() == http.StatusServiceUnavailable })
	status, _ = f.token("a", "carol")
	assert.Equal(t, http.StatusNotFound, status, "no token once draining")
	var r result
	f.until("the end of the drain", 100*time.Millisecond, func() bool {
		var ok bool
		r, ok = f.finished()
		return ok
	})
	require.NoError(t, r.err)
	assert.Less(t, time.Since(drainBegan), 3*time.Second, "within the grace")
	assert.Equal(t, fleet.ReasonAgones, r.r.Reason)
	assert.Equal(t, 1, r.r.Finished, "the empty room c finished at once")
	assert.Equal(t, 1, r.r.Ended, "room a was ended at the grace")
	require.Len(t, r.r.Rooms, 2)
	assert.Equal(t, "c", r.r.Rooms[0].Name)
	assert.Equal(t, "a", r.r.Rooms[1].Name)
	assert.Equal(t, 1, r.r.Rooms[1].Clients, "alice was there, told the server is closing")
	f.until("alice told", 100*time.Millisecond, func() bool { return closedByServer(alice) })

	assert.Equal(t, agones.Counter{Count: 0, Capacity: 2}, f.counter(), "the capacity dropped to the count at the drain, the count to zero")
	assert.Equal(t, agones.Counter{Count: 0, Capacity: 2}, r.r.Counter)
	shutdowns := f.calls("/shutdown")
	require.Len(t, shutdowns, 1, "Shutdown exactly once")
	var lastCount agonestest.Call
	for _, c := range f.sidecar.Calls() {
		if strings.HasPrefix(c.Path, "/v1beta1/counters/") {
			lastCount = c
		}
	}
	assert.False(t, lastCount.At.After(shutdowns[0].At), "Shutdown after the last room's −1")
	pings = f.calls("/health")
	assert.False(t, pings[len(pings)-1].At.Before(shutdowns[0].At.Add(-period/2)), "health kept going through the drain")
	assert.Positive(t, r.r.Agones.PingErr, "the outage's failed pings, counted")
	assert.Equal(t, public, r.r.PublicAddress)
	assert.Equal(t, uint64(1), r.r.Routing.Routed)
}

// Drain with 3 rooms running, on SIGTERM (Run's context ending): nothing
// new is admitted (no token, no connection, no room), the room whose match
// ends in time finishes, the other two are ended at the grace minus the
// margin, every client gets a disconnect, and Run returns within the
// grace, leaving no goroutine behind.
func TestDrainWithThreeRooms(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // the last cleanup: after the clients close
	f := newFixture(t, false, nil)
	f.run()
	m := f.srv.Rooms()
	var ps []*player
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, m.Open(name))
		ps = append(ps, f.joinRoom(name, "p-"+name))
	}
	f.until("3 rooms playing", 0, func() bool {
		n := 0
		for _, r := range m.Rooms() {
			n += r.Clients
		}
		return n == 3 && f.readyz() == http.StatusOK
	})
	status, late := f.token("a", "late")
	require.Equal(t, http.StatusOK, status, "a token issued before the drain")

	began := time.Now()
	f.cancel() // SIGTERM
	f.until("the drain", 0, f.srv.Draining)
	assert.Equal(t, http.StatusServiceUnavailable, f.readyz())
	status, _ = f.token("a", "later")
	assert.Equal(t, http.StatusNotFound, status, "no token")
	f.join(late.Token)
	assert.ErrorContains(t, m.Open("d"), "draining", "no room")
	f.until("the late client refused", 0, func() bool { return m.Stats().Refused[rooms.RefusedDraining] == 1 })
	require.True(t, m.End("b"), "room b's match is over in time")
	var r result
	f.until("the end", 0, func() bool {
		var ok bool
		r, ok = f.finished()
		return ok
	})
	took := time.Since(began)
	t.Logf("drained in %v", took.Round(time.Millisecond))
	require.NoError(t, r.err)
	assert.Less(t, took, 3*time.Second, "within the grace")
	assert.GreaterOrEqual(t, took, 2*time.Second, "the rooms had the grace minus the margin")
	assert.Equal(t, fleet.ReasonContext, r.r.Reason)
	assert.Equal(t, 1, r.r.Finished)
	assert.Equal(t, 2, r.r.Ended)
	require.Len(t, r.r.Rooms, 3)
	assert.Equal(t, "b", r.r.Rooms[0].Name, "b finished first")
	for _, rs := range r.r.Rooms {
		assert.Equal(t, 1, rs.Clients, "room %s had its client when it ended", rs.Name)
	}
	f.until("every client told", 0, func() bool {
		for _, p := range ps {
			if !closedByServer(p) {
				return false
			}
		}
		return true
	})
	assert.Equal(t, uint64(3), r.r.Routing.Routed)
	assert.Equal(t, uint64(1), r.r.Routing.Refused[rooms.RefusedDraining])
	assert.Zero(t, r.r.Agones)
}

func TestNewRefusesBadOptions(t *testing.T) {
	ln, err := udp.Listen(udp.Options{BindAddress: "127.0.0.1:0", PrivateKey: key})
	require.NoError(t, err)
	defer ln.Close()
	newRoom := func(string) (*systems.Game, systems.ServerOptions, error) { return nil, systems.ServerOptions{}, nil }
	for _, tc := range []struct {
		opts fleet.Options
		want string
	}{
		{fleet.Options{HealthPeriod: 500 * time.Millisecond}, "fleet: HealthPeriod 500ms outside 1s..5m0s"},
		{fleet.Options{Grace: 2 * time.Hour}, "fleet: Grace 2h0m0s outside 1s..1h0m0s"},
		{fleet.Options{Grace: 10 * time.Second, Margin: 6 * time.Second}, "fleet: Margin 6s outside 0..5s (half the grace 10s)"},
		{fleet.Options{Counter: "rooms/x"}, `fleet: Counter "rooms/x": want a counter name of at most 63 characters, without '/', '?', '#', '%' or spaces`},
		{fleet.Options{}, "rooms: Options.Listener is nil"},
		{fleet.Options{Rooms: rooms.Options{Listener: ln, NewRoom: newRoom}, Tokens: &tokens.Options{Key: key}}, "tokens: Secret of 0 bytes; at least 16"},
	} {
		_, err := fleet.New(tc.opts)
		assert.EqualError(t, err, tc.want)
	}
	srv, err := fleet.New(fleet.Options{Rooms: rooms.Options{Listener: ln, NewRoom: newRoom}})
	require.NoError(t, err)
	assert.Nil(t, srv.Tokens())
	srv.Drain()
	r, err := srv.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, fleet.ReasonDrain, r.Reason)
	_, err = srv.Run(context.Background())
	assert.EqualError(t, err, "fleet: Run called twice")
}

// A signal before Ready landed drains for the signal, not for Ready,
// and still ends with Shutdown.
func TestSignalBeforeReady(t *testing.T) {
	f := newFixture(t, true, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := f.srv.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, fleet.ReasonContext, r.Reason)
	assert.Len(t, f.calls("/shutdown"), 1)
	assert.Equal(t, http.StatusServiceUnavailable, f.readyz())
}
