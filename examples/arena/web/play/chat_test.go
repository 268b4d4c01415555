package play_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/systems"
)

// A line said on one client shows on every client, its sender named and
// its spaces trimmed; a blank line sends nothing; beyond the chat's rate
// Say refuses with ErrSlowDown; a view keeps the ChatLines newest lines.
func TestPlayerChats(t *testing.T) {
	a := newArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	other := a.join(t, 100*time.Millisecond, play.Options{})
	assert.ErrorIs(t, p.Say("too early"), systems.ErrNotConnected)
	a.run(time.Second)
	me := p.View().Conn
	require.NotZero(t, me)

	require.NoError(t, p.Say("  gl hf  "))
	require.NoError(t, p.Say("   "))
	require.NoError(t, other.Say(strings.Repeat("é", 40)))
	a.run(300 * time.Millisecond)
	want := []play.ChatLine{{From: me, Text: "gl hf"}, {From: other.View().Conn, Text: strings.Repeat("é", game.ChatMaxBytes/2)}}
	assert.Equal(t, want, p.View().Chat)
	assert.Equal(t, want, other.View().Chat)

	require.NoError(t, p.Say("two"))
	require.NoError(t, p.Say("three"))
	err := p.Say("four")
	assert.True(t, errors.Is(err, play.ErrSlowDown), "%v", err)
	assert.EqualError(t, err, `play: slow down, the chat takes a line a second: "four" not sent`)
	for i := range play.ChatLines {
		a.run(time.Second)
		require.NoError(t, p.Say(strings.Repeat("x", i+1)))
	}
	a.run(300 * time.Millisecond)
	lines := other.View().Chat
	require.Len(t, lines, play.ChatLines, "the newest only")
	for i, l := range lines {
		assert.Equal(t, strings.Repeat("x", i+1), l.Text)
	}
}

// A bot's client given a Chatter says a line now and then, which every
// client shows.
func TestPlayerBotChats(t *testing.T) {
	a := newArena(t)
	bot := a.join(t, 100*time.Millisecond, play.Options{Chat: game.NewChatter(1, a.clock, time.Hour)})
	p := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(game.ChatPauseMax + time.Second)
	lines := p.View().Chat
	require.NotEmpty(t, lines)
	assert.Equal(t, bot.View().Conn, lines[0].From)
	assert.NotEmpty(t, lines[0].Text)
}
