package systems_test

import (
	"errors"
	"fmt"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// Chat is a line of chat: up to 64 bytes of text, and the connection that
// said it (filled in by the server).
type Chat struct {
	From uint32
	Text [64]byte
	Len  uint32
}

func (m *Chat) Serialize(s *netsync.Stream) {
	netsync.Int(s, &m.From, 0, 1<<32-1)
	s.Text(m.Text[:], &m.Len) // valid UTF-8 without control characters, or refused
}

// Kill is a kill feed entry: who killed whom.
type Kill struct{ Killer, Victim uint32 }

func (m *Kill) Serialize(s *netsync.Stream) {
	netsync.Int(s, &m.Killer, 0, 1<<32-1)
	netsync.Int(s, &m.Victim, 0, 1<<32-1)
}

// Two players at 100 ms of round trip and 10 % loss: the first says
// three lines of chat, which the server relays to both, each once and in
// order (the newline of the third is sent as a space: text is printable);
// a fourth line at once is beyond the chat's burst of 3, and the client
// refuses to send it. The server then announces a kill to both,
// with the tick it happened on.
func ExampleHandle() {
	g := newTestGameWith(func(b *netsync.SchemaBuilder) {
		netsync.Message[Chat](b, netsync.MessageRules{MaxBytes: 48, PerSecond: 1, Burst: 3})
		netsync.Message[Kill](b, netsync.MessageRules{Channel: netsync.ReliableUnordered, Direction: netsync.ToClient})
	})
	h, err := harness.New(g.options(2, link(100*time.Millisecond, 0, 0.1)))
	if err != nil {
		panic(err)
	}
	sw := h.Server.World()
	// The server relays each line to every client, naming who said it.
	must(systems.Handle(sw, func(w *gw.World, e systems.Envelope, m *Chat) {
		m.From = uint32(e.From)
		must(systems.SendToClients(w, systems.ToAll(), e.Tick, m))
	}))
	var killedAt gw.Tick
	for i, c := range h.Clients {
		must(systems.Handle(c.World(), func(_ *gw.World, _ systems.Envelope, m *Chat) {
			fmt.Printf("client %d: %d says %q\n", i, m.From, m.Text[:m.Len])
		}))
		must(systems.Handle(c.World(), func(_ *gw.World, e systems.Envelope, m *Kill) {
			fmt.Printf("client %d: %d killed %d, at the tick sent: %v\n", i, m.Killer, m.Victim, e.Tick == killedAt)
		}))
	}
	h.Run(time.Second)

	w := h.Clients[0].World()
	for _, line := range []string{"hi", "gl hf", "gg\n", "spam"} {
		var m Chat
		m.Len = uint32(copy(m.Text[:], line))
		if err := systems.SendToServer(w, w.Tick(), &m); errors.Is(err, systems.ErrMessageRate) {
			fmt.Printf("%q not sent: beyond the rate\n", line)
		}
	}
	h.Run(2 * time.Second)
	killedAt = sw.Tick()
	must(systems.SendToClients(sw, systems.ToAll(), killedAt, &Kill{Killer: 2, Victim: 1}))
	h.Run(time.Second)
	// Output:
	// "spam" not sent: beyond the rate
	// client 0: 1 says "hi"
	// client 0: 1 says "gl hf"
	// client 0: 1 says "gg "
	// client 1: 1 says "hi"
	// client 1: 1 says "gl hf"
	// client 1: 1 says "gg "
	// client 0: 2 killed 1, at the tick sent: true
	// client 1: 2 killed 1, at the tick sent: true
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
