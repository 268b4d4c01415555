package play

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
)

// ChatLine is a line of chat as a view shows it: the connection that said
// it (View.Conn is this client's) and its text.
type ChatLine struct {
	From uint32
	Text string
}

// ChatLines is how many lines a view shows: the newest.
const ChatLines = 8

// ErrSlowDown is matched (errors.Is) by Say's error for a line beyond the
// chat's rate (game.ChatRules: a line a second, three at once): it was not
// sent.
var ErrSlowDown = errors.New("play: slow down, the chat takes a line a second")

// chatLog holds the lines the server relayed, newest last; the Player's
// lock guards it.
type chatLog struct {
	lines []ChatLine
}

// add notes a line relayed by the server.
func (l *chatLog) add(m *game.Chat) {
	if len(l.lines) == ChatLines {
		l.lines = append(l.lines[:0], l.lines[1:]...)
	}
	l.lines = append(l.lines, ChatLine{From: uint32(m.From), Text: m.String()})
}

// shown returns a copy of the lines, oldest first.
func (l *chatLog) shown() []ChatLine { return append([]ChatLine{}, l.lines...) }

// Say sends a line of chat to the server, which relays it to every
// player: text without its leading and trailing spaces, cut to
// game.ChatMaxBytes bytes (at a rune's boundary). A line of nothing but
// spaces sends nothing. It errors with ErrSlowDown beyond the chat's
// rate, with systems.ErrNotConnected before the connection is made or
// after it ended, and when the connection's reliable queue is full (see
// systems.SendToServer); nothing is sent then.
func (p *Player) Say(text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var m game.Chat
	m.SetText(text)
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.client.World()
	err := systems.SendToServer(w, w.Tick(), &m)
	if errors.Is(err, systems.ErrMessageRate) {
		return fmt.Errorf("%w: %q not sent", ErrSlowDown, m.String())
	}
	return err
}
