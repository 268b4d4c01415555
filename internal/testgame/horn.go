package testgame

import (
	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// Honk is the message a driver's client sends the server when its car's
// handbrake is pulled (the horn goes with it): the car's pull count after
// the pull, as its prediction counted it.
type Honk struct {
	Pulls uint16
}

// Honks is the server's answer to every client: connection Conn honked
// for the Count-th time.
type Honks struct {
	Conn  uint32
	Count uint32
}

// Serialize is Honk's wire form.
func (m *Honk) Serialize(s *netsync.Stream) { netsync.Int(s, &m.Pulls, 0, 65535) }

// Serialize is Honks' wire form.
func (m *Honks) Serialize(s *netsync.Stream) {
	netsync.Int(s, &m.Conn, 0, 1<<32-1)
	netsync.Int(s, &m.Count, 0, 1<<32-1)
}

// The rules of the two messages: a Honk goes to the server reliably and
// unordered, at most 20 a second (a bot pulls far less); Honks go to
// every client reliably and in order.
var (
	honkRules  = netsync.MessageRules{Channel: netsync.ReliableUnordered, Direction: netsync.ToServer, PerSecond: 20, Burst: 5}
	honksRules = netsync.MessageRules{Channel: netsync.ReliableOrdered, Direction: netsync.ToClient}
)

// Horns is what one end heard of the honks, a resource of its world
// (HornsOf).
type Horns struct {
	// Sent counts, on the server, the Honks each connection sent.
	Sent map[components.ConnID]uint32
	// Heard lists, on a client, the counts of each connection's Honks
	// from the server, in arrival order.
	Heard map[components.ConnID][]uint32
	// Failed counts the Honks a client could not send.
	Failed int
}

// HornsOf returns the Horns of an end's world, nil before its Game added
// them.
func HornsOf(w *gw.World) *Horns {
	a := w.Arche()
	h, _ := a.Resources().Get(ecs.ResourceID[Horns](a)).(*Horns)
	return h
}

// horns adds the Horns resource to w.
func horns(w *gw.World) *Horns {
	h := &Horns{Sent: map[components.ConnID]uint32{}, Heard: map[components.ConnID][]uint32{}}
	ecs.AddResource(w.Arche(), h)
	return h
}

// startHorns is the server's part (Game.OnStart): it counts each
// connection's Honks and tells every client.
func startHorns(s *systems.Server) error {
	h := horns(s.World())
	return systems.Handle(s.World(), func(w *gw.World, e systems.Envelope, _ *Honk) {
		h.Sent[e.From]++
		// A client that stopped reading is dropped at the next flush;
		// the others heard it.
		_ = systems.SendToClients(w, systems.ToAll(), e.Tick, &Honks{Conn: uint32(e.From), Count: h.Sent[e.From]})
	})
}

// HornEffect is the client's side effect (Game.Effects): the first time
// its own car's handbrake pull is predicted, it sends a Honk; it records
// the server's Honks in the world's Horns.
func HornEffect(w *gw.World) gw.System {
	h := horns(w)
	if err := systems.Handle(w, func(_ *gw.World, _ systems.Envelope, m *Honks) {
		c := components.ConnID(m.Conn)
		h.Heard[c] = append(h.Heard[c], m.Count)
	}); err != nil {
		panic(err) // Honks is the schema's: a bug
	}
	cars := generic.NewFilter2[Counters, Drive]().With(generic.T[components.Predicted]())
	return gw.SystemFunc(func(w *gw.World) {
		q := cars.Query(w.Arche())
		for q.Next() {
			c, d := q.Get()
			if d.Handbrake.Pressed() && systems.SendToServer(w, w.Tick(), &Honk{Pulls: c.Handbrakes}) != nil {
				h.Failed++
			}
		}
	})
}
