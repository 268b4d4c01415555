package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/websocket"
)

func TestSessionsForgetTheLeastRecentlyUsed(t *testing.T) {
	var ss sessions
	first := ss.get("first")
	first.link = Link{RTTms: 100}
	for i := range MaxSessions - 1 {
		ss.get(fmt.Sprint("s", i))
	}
	assert.Same(t, first, ss.get("first"), "used again: now the most recent")
	assert.Zero(t, ss.evicted)
	ss.get("new")
	assert.Equal(t, uint64(1), ss.evicted)
	assert.Len(t, ss.list, MaxSessions)
	assert.Equal(t, "s1", ss.list[0].id, "s0 was forgotten")
	assert.Equal(t, Link{RTTms: 100}, ss.get("first").link)
}

func TestValidSession(t *testing.T) {
	assert.NoError(t, validSession("a-Z-09"))
	assert.NoError(t, validSession(strings.Repeat("x", 64)))
	for _, bad := range []string{"", strings.Repeat("x", 65), "a b", "é", "a/b"} {
		assert.EqualError(t, validSession(bad), fmt.Sprintf("session %q: want 1..64 letters, digits or dashes", bad))
	}
}

// TestSocketsBeyondTheQueueAreClosed fills the hand-over queue of a
// server whose game loop does not run.
func TestSocketsBeyondTheQueueAreClosed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()
	s, err := New(ctx, Options{})
	require.NoError(t, err)
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	url := strings.Replace(hs.URL, "http", "ws", 1) + "/ws?session=flood"
	var conns []transport.Conn
	for range maxAccepted + 1 {
		c, err := websocket.Dial(ctx, url, websocket.Options{})
		require.NoError(t, err)
		conns = append(conns, c)
	}
	last := conns[maxAccepted]
	waitFor(t, slow, "the server closes the last socket", func() bool { return last.Send([]byte{1}) == transport.ErrClosed })
	st := s.Stats()
	assert.Equal(t, uint64(1), st.SocketsRefused)
	assert.Equal(t, uint64(maxAccepted), st.Sockets)
	assert.NoError(t, conns[0].Send([]byte{1}), "the queued ones stay open")
	for _, c := range conns {
		c.Close()
	}
	s.closeAll()
}
