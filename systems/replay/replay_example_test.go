package replay_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// Pos is where a walker stands.
type Pos struct{ X float32 }

func (p *Pos) Serialize(s *netsync.Stream) { s.Float(&p.X, netsync.Range(-1000, 1000, 1.0/64)) }

// Walk is a walker's input: its step this tick.
type Walk struct{ Step float32 }

func (w *Walk) Serialize(s *netsync.Stream) { s.Float(&w.Step, netsync.Range(-1, 1, 1.0/64)) }

// walkers is a game of players walking along a line, built anew for
// every server (a recorded one and each replay).
func walkers() *systems.Game {
	var b netsync.SchemaBuilder
	walker := b.GhostType("walker", netsync.Component[Pos](&b))
	netsync.Input[Walk](&b, netsync.InputRules[Walk]{})
	schema, err := b.Build()
	if err != nil {
		panic(err)
	}
	return &systems.Game{
		Schema: schema,
		OnConnect: func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap2[Pos, Walk](w.Arche())
			return m.NewWith(&Pos{X: float32(conn)}, &Walk{}), walker, nil
		},
		Prediction: []func(*gw.World) gw.System{func(*gw.World) gw.System {
			f := generic.NewFilter2[Pos, Walk]()
			return gw.SystemFunc(func(w *gw.World) {
				q := f.Query(w.Arche())
				for q.Next() {
					p, in := q.Get()
					p.X += in.Step
				}
			})
		}},
	}
}

// A match is recorded as it runs (ServerOptions.Recorder), then run again
// from the file with no network: every state hash equal, and a seek
// lands on the state the match had at that tick.
func Example() {
	game := walkers()
	var file bytes.Buffer
	rec, err := replay.NewRecorder(&file, game, replay.RecorderOptions{Config: []byte(`{"seed":1}`)})
	if err != nil {
		panic(err)
	}
	h, err := harness.New(harness.Options{Seed: 1, Game: game, Server: systems.ServerOptions{Recorder: rec},
		Clients: []harness.ClientSpec{{Options: systems.ClientOptions{Input: systems.InputFunc(func(_ *gw.World, t gw.Tick) Walk {
			return Walk{Step: float32(t%8) / 8}
		})}}}})
	if err != nil {
		panic(err)
	}
	h.Run(2 * time.Second)
	if err := rec.Close(); err != nil {
		panic(err)
	}
	want := h.Server.StateHash()

	f, err := replay.Open(&file)
	if err != nil {
		panic(err)
	}
	p, err := replay.NewPlayer(f, func(h *replay.Header) (*replay.Setup, error) {
		return &replay.Setup{Game: walkers()}, nil // h.Config would configure it
	})
	if err != nil {
		panic(err)
	}
	if err := p.Run(); err != nil {
		panic(err) // a *replay.MismatchError names the first tick that differs
	}
	fmt.Println("ticks", p.Tick(), "hashes checked", p.Checked(), "same state", p.Server().StateHash() == want)
	if err := p.Seek(60); err != nil {
		panic(err)
	}
	fmt.Println("seeked to", p.Tick())
	// Output:
	// ticks 120 hashes checked 120 same state true
	// seeked to 60
}
