package game

import (
	"errors"
	"math/rand/v2"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// The pause between two lines of a chatting bot is drawn uniformly from
// [ChatPauseMin, ChatPauseMax): now and then, well within the chat's rate
// (ChatRules).
const (
	ChatPauseMin = 5 * time.Second
	ChatPauseMax = 15 * time.Second
)

// chatLines are what the bots say.
var chatLines = [...]string{
	"gl hf", "nice shot", "who has the ball?", "rocket incoming!", "lag? what lag", "gg",
	"one more round", "that was close", "o/", "behind the pillar!", "ouch", "wp",
}

// Chatter makes a bot say a line of chat now and then (the arena's -chat),
// a presentation system of the bot's client: from its own seeded source,
// on the time of its clock, so the same seed says the same lines at the
// same times. The first line comes a pause after its first frame; it is
// silent from stopAt on, when the bots stand still.
type Chatter struct {
	rng     *rand.Rand
	clock   gw.TimeSource
	stopAt  time.Duration
	next    time.Duration
	started bool
	// Said counts the lines sent; Failed the sends that errored otherwise
	// than for a connection not yet made (then the line waits for it).
	Said, Failed uint64
	line         Chat
	pending      bool // line is drawn and waits for the connection
}

// NewChatter returns a bot's chatter with its own seed, silent from
// virtual time stopAt of clock.
func NewChatter(seed uint64, clock gw.TimeSource, stopAt time.Duration) *Chatter {
	return &Chatter{rng: rand.New(rand.NewPCG(seed^0x3c6ef372fe94f82b, seed)), clock: clock, stopAt: stopAt}
}

// Update says the line that is due, if any, on the client whose world is w.
func (c *Chatter) Update(w *gw.World) {
	now := c.clock.Now()
	if !c.started {
		c.started = true
		c.next = now + c.pause()
	}
	if now < c.next || now >= c.stopAt {
		return
	}
	if !c.pending {
		c.line.SetText(chatLines[c.rng.IntN(len(chatLines))])
		c.pending = true
	}
	err := systems.SendToServer(w, w.Tick(), &c.line)
	switch {
	case errors.Is(err, systems.ErrNotConnected):
		return // the same line, once connected
	case err != nil:
		c.Failed++
	default:
		c.Said++
	}
	c.pending = false
	c.next = now + c.pause()
}

// pause draws the time to the next line.
func (c *Chatter) pause() time.Duration {
	return ChatPauseMin + time.Duration(c.rng.Int64N(int64(ChatPauseMax-ChatPauseMin)))
}
