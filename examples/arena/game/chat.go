package game

import (
	"math"
	"unicode/utf8"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// ChatMaxBytes is the most bytes of UTF-8 text a chat line carries.
const ChatMaxBytes = 64

// chatBuffer is Chat.Text's size: more than a line may carry, so that the
// cap is ChatRules.MaxBytes, a rule of the schema both ends check (the
// client's send errors, the server refuses a longer line unread), and not
// the size of an array that would silently cut it.
const chatBuffer = 128

// Chat is a line of chat. A client sends it to the server with From 0;
// the server relays it to every client with From set to the connection
// that said it. Its text is valid UTF-8 without control characters on
// arrival: the wire form (netsync.Stream.Text) sends a '?' for invalid
// bytes and a space for a control character, and a receiver refuses
// anything else.
type Chat struct {
	From components.ConnID
	Text [chatBuffer]byte
	Len  uint32
}

// Serialize is Chat's wire form.
func (m *Chat) Serialize(s *netsync.Stream) {
	netsync.Int(s, &m.From, 0, math.MaxUint32)
	s.Text(m.Text[:], &m.Len)
}

// ChatRules are the chat's message rules: both ways on the reliable
// ordered channel (the lines of one player arrive in the order said),
// MaxBytes the size of a line of ChatMaxBytes bytes of text (From's 4
// bytes, the length's byte, the text), and a person's pace: a line a
// second, three at once.
var ChatRules = netsync.MessageRules{Channel: netsync.ReliableOrdered, Direction: netsync.BothWays,
	MaxBytes: 4 + 1 + ChatMaxBytes, PerSecond: 1, Burst: 3}

// SetText sets the line's text: s cut to ChatMaxBytes bytes, at a rune's
// boundary so that the cut leaves valid UTF-8.
func (m *Chat) SetText(s string) {
	if len(s) > ChatMaxBytes {
		cut := ChatMaxBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	m.Len = uint32(copy(m.Text[:], s))
}

// String returns the line's text.
func (m *Chat) String() string { return string(m.Text[:min(int(m.Len), len(m.Text))]) }

// relayChat is the server's chat handler: it relays every line to every
// client, naming the connection that said it, with the tick its sender
// gave.
func relayChat(w *gw.World, e systems.Envelope, m *Chat) {
	m.From = e.From
	// A failure is a client whose reliable queue is full, which the
	// server drops at its next flush: nothing to do here.
	_ = systems.SendToClients(w, systems.ToAll(), e.Tick, m)
}
