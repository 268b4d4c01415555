package game

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// SetText keeps at most ChatMaxBytes bytes, cut where a rune starts, so
// that a long line still sends as valid UTF-8.
func TestChatSetTextCutsAtARune(t *testing.T) {
	var m Chat
	m.SetText("gl hf")
	assert.Equal(t, "gl hf", m.String())
	m.SetText(strings.Repeat("é", 40)) // 80 bytes
	assert.Equal(t, strings.Repeat("é", 32), m.String())
	m.SetText(strings.Repeat("a", 63) + "€") // the euro's 3 bytes straddle the cap
	assert.Equal(t, strings.Repeat("a", 63), m.String())
	m.SetText(strings.Repeat("b", ChatMaxBytes))
	assert.Len(t, m.String(), ChatMaxBytes)
	m.SetText("")
	assert.Empty(t, m.String())
}

// chatMatch is a match of n still players, its chat heard by every client.
func chatMatch(t *testing.T, n int) (*Match, [][]Chat) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Jitter, cfg.Loss = n, time.Second, 0, 0
	cfg.Ball, cfg.Rockets = false, false
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	m.stopBots(0)
	heard := make([][]Chat, n)
	for i, c := range m.Harness.Clients {
		require.NoError(t, systems.Handle(c.World(), func(_ *gw.World, _ systems.Envelope, line *Chat) {
			heard[i] = append(heard[i], *line)
		}))
	}
	m.Harness.Run(time.Second)
	require.True(t, m.Harness.Clients[n-1].Connected())
	return m, heard
}

// say sends a line from client i.
func say(m *Match, i int, line Chat) error {
	w := m.Harness.Clients[i].World()
	return systems.SendToServer(w, w.Tick(), &line)
}

// A line goes to the server and back to every client, its sender named
// and its control characters sent as spaces; a full line of
// ChatMaxBytes passes MaxBytes, a longer one is an error to send; beyond
// three at once the client refuses to send (ChatRules' rate), and the
// server refused nothing.
func TestChatIsRelayedToEveryClient(t *testing.T) {
	m, heard := chatMatch(t, 3)
	var hi, full, long Chat
	hi.SetText("hi\tall")
	require.NoError(t, say(m, 1, hi))
	full.SetText(strings.Repeat("x", ChatMaxBytes))
	require.NoError(t, say(m, 1, full))
	long.Len = uint32(copy(long.Text[:], strings.Repeat("y", ChatMaxBytes+1))) // past SetText's cut
	assert.Error(t, say(m, 1, long), "past MaxBytes")
	var third Chat
	third.SetText("three")
	require.NoError(t, say(m, 1, third))
	err := say(m, 1, third)
	assert.True(t, errors.Is(err, systems.ErrMessageRate), "the fourth at once: %v", err)
	m.Harness.Run(500 * time.Millisecond)

	conn, _ := m.Harness.Clients[1].Conn()
	for i := range heard {
		require.Lenf(t, heard[i], 3, "client %d", i+1)
		want := []string{"hi all", strings.Repeat("x", ChatMaxBytes), "three"}
		for j, line := range heard[i] {
			assert.Equalf(t, conn, line.From, "client %d, line %d: the sender named", i+1, j+1)
			assert.Equalf(t, want[j], line.String(), "client %d, line %d", i+1, j+1)
		}
	}
	ms := m.Harness.Clients[1].Stats().Messages
	assert.Equal(t, uint64(3), ms.Sent)
	assert.Equal(t, uint64(1), ms.RateLimited)
	ss := m.Harness.Server.Stats().Messages
	assert.Equal(t, uint64(3), ss.Received)
	assert.Equal(t, uint64(9), ss.Sent, "three lines to three clients")
	assert.Zero(t, ss.Refused.Total())
}

// A client cannot pass itself off as another: the server names the
// connection that said a line, whatever From the client sent.
func TestChatNamesTheRealSender(t *testing.T) {
	m, heard := chatMatch(t, 2)
	var forged Chat
	forged.SetText("i am client 2")
	forged.From = components.ConnID(2)
	require.NoError(t, say(m, 0, forged))
	m.Harness.Run(500 * time.Millisecond)
	conn, _ := m.Harness.Clients[0].Conn()
	require.NotEqual(t, components.ConnID(2), conn)
	for i := range heard {
		require.Lenf(t, heard[i], 1, "client %d", i+1)
		assert.Equalf(t, conn, heard[i][0].From, "client %d", i+1)
	}
}
