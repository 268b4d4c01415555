package systems_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// stallTimeout is the connection timeout of both ends in the stall tests,
// set explicitly: stalls of 0.2, 1.5 and 5 s are within it (such a client
// must get back in control), a stall of 30 s is beyond it (both ends must
// end the connection). With the default 5 s a 5 s stall would race the
// server's timer by half a round trip.
const stallTimeout = 10 * time.Second

// stallHarness runs the test game with two clients on a 100 ms link;
// client 0 is the one the tests stall. maxReplay reports the most ticks
// one rollback of client 0 replayed, removed how many players the game
// removed on a disconnect.
func stallHarness(t *testing.T) (h *harness.Harness, maxReplay func() uint64, removed func() int) {
	g := newTestGame()
	opts := g.options(2, link(100*time.Millisecond, 5*time.Millisecond, 0))
	opts.Server.Timeout = stallTimeout
	for i := range opts.Clients {
		opts.Clients[i].Options.Timeout = stallTimeout
	}
	var most uint64
	gone := 0
	opts.Game.OnDisconnect = func(w *gw.World, _ components.ConnID, owned []ecs.Entity) {
		for _, e := range owned {
			w.Arche().RemoveEntity(e)
			gone++
		}
	}
	var first *systems.Client
	var before uint64
	opts.Clients[0].Options.BeforeCorrection = func(*gw.World) { before = first.Schedule().Stats().ReplayedTicks }
	opts.Clients[0].Options.AfterCorrection = func(*gw.World) { most = max(most, first.Schedule().Stats().ReplayedTicks-before) }
	opts.SetupClient = func(i int, c *systems.Client) error {
		if i == 0 {
			first = c
		}
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	for i, c := range h.Clients {
		require.True(t, c.Connected(), "client %d", i)
	}
	return h, func() uint64 { return most }, func() int { return gone }
}

// The measurement: a client that stopped calling Update for 1.5 s
// or more stayed about 78 ticks behind for good, its player running on
// repeated input while it looked connected. After a stall within the
// timeout the server must apply the client's own inputs again within 1 s
// of its resuming, its lead must be back in band, and no rollback may
// replay more than the history holds.
func TestStalledClientIsBackInControlWithinOneSecond(t *testing.T) {
	for _, stall := range []time.Duration{200 * time.Millisecond, 1500 * time.Millisecond, 5 * time.Second} {
		t.Run(stall.String(), func(t *testing.T) {
			h, maxReplay, _ := stallHarness(t)
			c, other := h.Clients[0], h.Clients[1]
			conn, otherConn := (*ghostreg.ClientRegister)(c.Ghosts()).Conn(), (*ghostreg.ClientRegister)(other.Ghosts()).Conn()
			otherBefore, _ := h.Server.ConnStats(otherConn)
			skipped := c.Stats().SkippedTicks

			h.Stall(0, stall)
			h.Run(stall)
			resumed := h.Time.Now()
			during, ok := h.Server.ConnStats(conn)
			require.True(t, ok, "a stall within the timeout keeps the connection")
			require.Greater(t, during.Inputs.Missing, uint64(0), "the stalled client's ticks ran on substitutes")

			// Step for 3 s after resuming, noting when the server last ran a
			// tick without the client's own input.
			lastMissing, missing := resumed, during.Inputs.Missing
			var atOne systems.InputStats
			for h.Time.Now() < resumed+3*time.Second {
				h.Step()
				st, ok := h.Server.ConnStats(conn)
				require.True(t, ok, "still connected %v after resuming", h.Time.Now()-resumed)
				if st.Inputs.Missing != missing {
					missing, lastMissing = st.Inputs.Missing, h.Time.Now()
				}
				if atOne.Received == 0 && h.Time.Now() >= resumed+time.Second {
					atOne = st.Inputs
					assertInBand(t, h, "1 s after resuming")
				}
			}
			end, _ := h.Server.ConnStats(conn)
			t.Logf("stall %v: missing for %v after resuming, %d ticks skipped, %d applied in the last 2 s, lead %.2f, ahead %d",
				stall, lastMissing-resumed, c.Stats().SkippedTicks-skipped, end.Inputs.Applied-atOne.Applied,
				c.Stats().Lead, c.World().Tick().Sub(h.Server.World().Tick()))
			assert.LessOrEqual(t, lastMissing-resumed, time.Second, "the server runs on the client's own input again within 1 s")
			assert.Equal(t, atOne.Missing, end.Inputs.Missing, "no tick without the client's input after the first second")
			assert.GreaterOrEqual(t, end.Inputs.Applied-atOne.Applied, uint64(119), "2 s of the client's own inputs applied")
			assertInBand(t, h, "3 s after resuming")
			assert.LessOrEqual(t, maxReplay(), uint64(c.World().History().Capacity()), "no rollback replays more than the history")
			assert.Greater(t, c.Stats().SkippedTicks, skipped, "the ticks the catch-up cap dropped are skipped and counted")
			assert.True(t, c.Connected())
			require.NoError(t, c.Err())

			otherAfter, _ := h.Server.ConnStats(otherConn)
			assert.Equal(t, otherBefore.Inputs.Missing, otherAfter.Inputs.Missing, "the other client never noticed")
		})
	}
}

// assertInBand checks that client 0 keeps its lead: the server reports
// its inputs arriving about the target lead early (1 tick), and it runs
// about RTT/2 plus that lead (3 + 1 ticks) ahead of the server.
func assertInBand(t *testing.T, h *harness.Harness, when string) {
	t.Helper()
	c := h.Clients[0]
	assert.InDelta(t, 1, c.Stats().Lead, 1, "%s: the lead the server measures", when)
	assert.InDelta(t, 4, float64(c.World().Tick().Sub(h.Server.World().Tick())), 1.5, "%s: ticks ahead of the server", when)
}

// A stall beyond the timeout ends the connection on both ends with a
// reason: the server drops the silent client (its player goes), and the
// client, on resuming, is Disconnected with a timeout; it never looks
// connected while its player runs on repeated input.
func TestClientStalledPastTheTimeoutIsDisconnectedOnBothEnds(t *testing.T) {
	const stall = 30 * time.Second
	h, _, removed := stallHarness(t)
	c, other := h.Clients[0], h.Clients[1]
	id := (*ghostreg.ClientRegister)(c.Ghosts()).Conn()
	owned := (*ghostreg.ServerRegister)(h.Server.Ghosts()).Owned(nil, id)
	require.Len(t, owned, 1)
	player := owned[0]

	start := h.Time.Now()
	h.Stall(0, stall)
	require.True(t, h.RunUntil(func() bool { return h.Server.Stats().Connections == 1 }, stall),
		"the server drops the silent client")
	assert.InDelta(t, float64(stallTimeout), float64(h.Time.Now()-start), float64(200*time.Millisecond),
		"dropped after the timeout, counted from the client's last packet")
	st := h.Server.Stats()
	assert.Equal(t, uint64(1), st.Dropped)
	assert.Equal(t, uint64(1), st.TimedOut)
	_, ok := h.Server.ConnStats(id)
	assert.False(t, ok)
	assert.Empty(t, (*ghostreg.ServerRegister)(h.Server.Ghosts()).Owned(nil, id), "the dropped client owns no ghost any more")
	assert.Equal(t, 1, removed(), "the game heard of the disconnect")
	assert.False(t, h.Server.World().Arche().Alive(player), "the player of a dropped client does not run on")

	h.Run(start + stall - h.Time.Now())
	require.GreaterOrEqual(t, h.Time.Now(), start+stall, "the stall is over")
	h.Step() // the client's first Update after the stall
	assert.True(t, disconnected(c))
	assert.Equal(t, netsync.RejectTimeout, c.Stats().Reason)
	var ce *systems.ConnError
	require.True(t, errors.As(c.Err(), &ce))
	assert.Equal(t, netsync.RejectTimeout, ce.Reason)
	assert.Contains(t, c.Err().Error(), "timeout")

	ticks := c.Stats().Ticks
	h.Run(time.Second)
	assert.Equal(t, ticks, c.Stats().Ticks, "a disconnected client runs no tick")
	assert.True(t, other.Connected(), "the other client stays")
	assert.Equal(t, 1, h.Server.Stats().Connections)
}

// A client that hears nothing from the server for its timeout ends the
// connection itself, with a reason that says so, and tells the server.
func TestClientTimesOutWhenTheServerFallsSilent(t *testing.T) {
	h, _, _ := stallHarness(t)
	c := h.Clients[0]
	silent := h.Time.Now()
	// Only the clients run: the server neither sends nor reads.
	for c.Connected() && h.Time.Now() < silent+2*stallTimeout {
		h.Time.Advance(time.Millisecond)
		for _, c := range h.Clients {
			c.Update()
		}
	}
	assert.True(t, disconnected(c))
	assert.InDelta(t, float64(stallTimeout), float64(h.Time.Now()-silent), float64(100*time.Millisecond),
		"disconnected one timeout after the server's last packet")
	var ce *systems.ConnError
	require.True(t, errors.As(c.Err(), &ce))
	assert.True(t, ce.Local, "the client ended it")
	assert.Equal(t, netsync.RejectTimeout, ce.Reason)
	assert.Equal(t, "ghostwire: disconnected: timeout: nothing heard from the server for 10s", ce.Error())

	// The server, back, reads the client's disconnect before its own
	// timer would fire.
	h.Time.Advance(60 * time.Millisecond)
	h.Server.Update()
	assert.Equal(t, uint64(0), h.Server.Stats().TimedOut)
	assert.GreaterOrEqual(t, h.Server.Stats().Dropped, uint64(1))
}

// A client that falls far behind (its clock stopped without the catch-up
// cap noticing, or another implementation) sends inputs the server has
// long run without. The server must keep reporting how late they are,
// also once they are older than its input buffer, where it cannot tell a
// late input from a duplicate; a lead measured before the client fell
// behind, reported for good, leaves its clock sync blind.
func TestServerReportsTheLeadOfInputsOlderThanItsBuffer(t *testing.T) {
	g := newTestGame()
	h, err := harness.New(g.options(0, transport.Conditions{}))
	require.NoError(t, err)
	raw, err := h.Net.Dial("server", transport.Conditions{})
	require.NoError(t, err)
	conn := newPeer(t, raw, h.Time)
	conn.send(protocol.AppendHello(nil, &protocol.Hello{SchemaHash: (*codec.Schema)(g.schema).Hash(), TickRate: 60, ClientTime: 1}))
	h.Run(50 * time.Millisecond)
	require.Equal(t, 1, h.Server.Stats().Connections)

	// lead sends the input of tick, lets a snapshot come back and returns
	// its lead and how late the input came by the server's clock.
	var snap protocol.Snapshot
	lead := func(tick gw.Tick) (lead, want float64) {
		conn.send(protocol.AppendInputs(nil, (*codec.Schema)(g.schema), &protocol.InputBatch{ClientTime: 1,
			Heads: []components.InputHeader{{Tick: tick}}, Data: make([]byte, (*codec.Schema)(g.schema).InputSize())}))
		want = float64(tick.Sub(h.Server.World().Tick()))
		h.Run(20 * time.Millisecond)
		for {
			p, ok := conn.receive()
			if !ok {
				return float64(snap.Lead), want
			}
			if typ, _ := protocol.PeekType(p); typ == protocol.MsgSnapshot {
				require.NoError(t, protocol.DecodeSnapshot(p, (*codec.Schema)(g.schema), &snap))
			}
		}
	}
	stats := func() systems.InputStats {
		st, ok := h.Server.ConnStats(h.Server.Conns()[0])
		require.True(t, ok)
		return st.Inputs
	}
	tick := h.Server.World().Tick().Add(2)
	got, want := lead(tick)
	assert.InDelta(t, want, got, 1, "on time")

	h.Run(500 * time.Millisecond) // the client stalls, the server runs on
	tick++
	got, want = lead(tick)
	require.Less(t, want, -20.0, "test sanity: late")
	assert.InDelta(t, want, got, 1, "late within the buffer (64 ticks)")
	assert.Equal(t, uint64(1), stats().Late)

	h.Run(2 * time.Second)
	dups := stats().Duplicates
	tick++
	got, want = lead(tick)
	require.Less(t, want, -64.0, "test sanity: older than the buffer")
	assert.InDelta(t, want, got, 1, "late beyond the buffer: still measured")
	assert.Equal(t, dups+1, stats().Duplicates, "test sanity: the buffer took it for a duplicate")
}

func TestClientTimeoutOptionIsChecked(t *testing.T) {
	for _, d := range []time.Duration{time.Millisecond, 2 * time.Hour} {
		_, err := systems.NewClient(&gw.VirtualTime{}, nil, newTestGame().game(), systems.ClientOptions{Timeout: d})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "timeout "+d.String()+" outside 100ms..1h")
	}
}
