package game

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With -chat every bot says a line now and then (one every 5 to 15 s),
// and every client hears every line, its own included, the server
// refusing none; the same seed says the same lines at the same times, so
// the whole report is the same. Without -chat nobody says anything.
func TestBotsChatNowAndThen(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration, cfg.Chat = 40*time.Second, true
	report := func() (*Report, string) {
		_, r := run(t, cfg)
		r.Wall = WallReport{}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		return r, string(b)
	}
	r, first := report()
	assert.Equal(t, "on", r.Config.Chat)
	var said uint64
	for _, c := range r.Clients {
		assert.GreaterOrEqualf(t, c.Chat.Said, uint64(40/15), "client %d: a line every 15 s at most", c.ID)
		assert.LessOrEqualf(t, c.Chat.Said, uint64(40/5), "client %d: a line every 5 s at least", c.ID)
		said += c.Chat.Said
	}
	for _, c := range r.Clients {
		assert.Equalf(t, said, c.Chat.Heard, "client %d hears every line", c.ID)
		require.NotNilf(t, c.Messages.RefusedByServer, "client %d", c.ID)
		assert.Equalf(t, RefusalReport{}, *c.Messages.RefusedByServer, "client %d", c.ID)
		assert.Zerof(t, c.Messages.RateLimited, "client %d", c.ID)
		// Its lines and nothing else went up; the kills and every line
		// came down.
		assert.Equalf(t, c.Chat.Said, c.Messages.Sent, "client %d", c.ID)
		assert.Equalf(t, said+c.KillFeed.Received, c.Messages.Received, "client %d", c.ID)
	}
	assert.Equal(t, said, r.Server.Messages.Received)
	assert.Zero(t, r.Server.Messages.Refused)
	_, again := report()
	assert.Equal(t, first, again, "the same seed chats the same")

	cfg.Chat = false
	r, _ = report()
	for _, c := range r.Clients {
		assert.Zerof(t, c.Chat.Said+c.Chat.Heard, "client %d", c.ID)
	}
	assert.Zero(t, r.Server.Messages.Received)
}

// A chatter waits for the connection: a line due before it is said once
// the client is connected, the same line.
func TestChatterWaitsForTheConnection(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Chat = 1, 30*time.Second, true
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	ch := m.Players[0].Chatter
	require.NotNil(t, ch)
	ch.started, ch.next = true, 0 // due at once, before the welcome
	m.Harness.Step()
	require.False(t, m.Harness.Clients[0].Connected())
	assert.True(t, ch.pending)
	assert.Zero(t, ch.Said)
	line := ch.line
	m.Harness.Run(time.Second)
	assert.Equal(t, uint64(1), ch.Said)
	assert.Zero(t, ch.Failed)
	assert.Equal(t, line, ch.line, "the line drawn before")
	assert.Equal(t, uint64(1), m.Players[0].ChatHeard)
}
