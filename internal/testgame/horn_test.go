package testgame

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// Two bots over a bad link (150 ms, 20 ms jitter, 5 % loss) for 20 s,
// their clients rolling back on every snapshot: each client honks once
// per handbrake pull, sent from a side effect (never again in a replay),
// and the server hears each honk exactly once and tells both clients,
// which hear every connection's counts once and in order. The capability
// of docs/messages.md, on a second game.
func TestEveryHonkIsHeardOnceAndInOrder(t *testing.T) {
	s := newSchema(t)
	const play = 20 * time.Second
	link := Link(150*time.Millisecond, 20*time.Millisecond, 0.05)
	stop := gw.Tick(play / (time.Second / TickRate))
	bots := []*Bot{NewBot(301, stop), NewBot(302, stop)}
	opts := s.Options(3, Player{Link: link, Input: bots[0].Source()}, Player{Link: link, Input: bots[1].Source()})
	for i := range opts.Clients {
		opts.Clients[i].Options.RollbackAlways = true
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(play + settle)
	server := HornsOf(h.Server.World())
	require.NotNil(t, server)
	for i, c := range h.Clients {
		conn, ok := c.Conn()
		require.True(t, ok)
		require.Greater(t, bots[i].Pulls, uint64(5), "bot %d must pull the handbrake", i)
		st := c.Stats()
		assert.Zero(t, HornsOf(c.World()).Failed, "client %d", i)
		assert.Equal(t, bots[i].Pulls, st.Messages.Sent, "client %d: one honk per pull, replays or not", i)
		assert.Positive(t, st.Rollbacks, "client %d replayed ticks", i)
		assert.Equal(t, uint32(bots[i].Pulls), server.Sent[conn], "client %d: the server heard every honk once", i)
		want := make([]uint32, bots[i].Pulls)
		for n := range want {
			want[n] = uint32(n + 1)
		}
		for j, other := range h.Clients {
			assert.Equal(t, want, HornsOf(other.World()).Heard[conn], "client %d heard client %d's honks", j, i)
		}
		cs, ok := h.Server.ConnStats(conn)
		require.True(t, ok)
		assert.Zero(t, cs.Messages.Refused.Total(), "client %d", i)
	}
}
