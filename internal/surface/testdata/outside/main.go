// Command outside is a game written outside ghostwire's module, built by
// TestAnOutsideModuleUsesEveryCapability with a replace to the checkout:
// it uses each capability a game needs of the public API and prints what
// it saw, so the test can check the values too.
package main

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
	"github.com/ghostwire/ghostwire/transport"
)

type Pos struct{ X, Y float32 }
type Move struct {
	X    float32
	Fire components.Press
}
type Bad struct{ Names []string }

var coord = netsync.Range(-100, 100, 1.0/64)

func (p *Pos) Serialize(s *netsync.Stream) { s.Float(&p.X, coord); s.Float(&p.Y, coord) }
func (m *Move) Serialize(s *netsync.Stream) {
	s.Float(&m.X, netsync.Range(-1, 1, 1.0/64))
	s.Press(&m.Fire)
}
func (b *Bad) Serialize(s *netsync.Stream) {}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	// A schema refuses a component that is not plain data, naming it.
	var bad netsync.SchemaBuilder
	netsync.Component[Bad](&bad)
	_, err := bad.Build()
	var pe *gw.PlainDataError
	fmt.Println("plain data refused:", errors.As(err, &pe), pe.Field)

	var b netsync.SchemaBuilder
	pos := netsync.Component[Pos](&b)
	player := b.GhostType("player", pos)
	netsync.Input[Move](&b, netsync.InputRules[Move]{})
	schema, err := b.Build()
	if err != nil {
		return err
	}
	// Quantizing through the schema, outside the endpoints.
	p := Pos{X: 1.0 / 3}
	if err := netsync.Quantize(schema, &p); err != nil {
		return err
	}
	fmt.Println("quantized:", p.X)

	move := func(*gw.World) gw.System {
		f := generic.NewFilter2[Pos, Move]().With(generic.T[components.Predicted]())
		runs := 0 // state outside the world, which rollback never restores
		return gw.SystemFunc(func(w *gw.World) {
			q := f.Query(w.Arche())
			for q.Next() {
				p, m := q.Get()
				p.X += m.X / 60
				if runs++; runs%30 == 0 {
					p.Y++ // a desync the determinism check names
				}
			}
		})
	}
	var compensator *lagcomp.Compensator
	var confirmed int
	game := &systems.Game{
		Schema: schema,
		OnConnect: func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			m := generic.NewMap2[Pos, components.Hitboxes](w.Arche())
			hb := components.Hitboxes{N: 1}
			hb.Boxes[0] = components.Hitbox{Shape: components.ShapeSphere, Radius: 0.5}
			return m.NewWith(&Pos{X: float32(conn) * 3}, &hb), player, nil
		},
		Prediction: []func(*gw.World) gw.System{move},
	}
	h, err := harness.New(harness.Options{
		Seed: 1,
		Game: game,
		Clients: []harness.ClientSpec{{
			Link: transport.Conditions{Up: transport.LinkConfig{Latency: 40 * time.Millisecond}, Down: transport.LinkConfig{Latency: 40 * time.Millisecond}},
			Options: systems.ClientOptions{
				Input:     systems.InputFunc(func(*gw.World, gw.Tick) Move { return Move{X: 1} }),
				SyncTest:  4,
				OnConfirm: func(*gw.World, gw.Tick, bool, string, ecs.Entity, uint8) { confirmed++ },
				OnMisprediction: func(_ gw.Tick, _ components.GhostID, d netsync.FieldDiff) {
					if d.Kind != reflect.Float32 || d.Component == "" || d.Field == "" {
						panic("a FieldDiff without its fields")
					}
				},
			},
		}, {}},
		SetupServer: func(s *systems.Server) error {
			compensator, err = lagcomp.New(s.World(), lagcomp.Options{
				Pose: func(r *lagcomp.Rewound) ([3]float32, float32) {
					p := lagcomp.Get[Pos](r)
					return [3]float32{p.X, p.Y, 0}, 0
				},
				Server: s, // a lagcomp.Confirmer
			})
			if err != nil {
				return err
			}
			if err := lagcomp.Register[Pos](compensator); err != nil {
				return err
			}
			s.Schedule().Add(gw.StageHistory, compensator)
			return nil
		},
	})
	if err != nil {
		return err
	}
	h.Run(2 * time.Second)

	c := h.Clients[0]
	e, ok := c.Player()
	conn, _ := c.Conn()
	se, sok := h.Server.Player(conn)
	st, cok := h.Server.ConnStats(conn)
	fmt.Println("players found:", ok, sok, cok, st.Player > 0, st.Inputs.Applied > 0)

	// The client's own history, read.
	hist := c.World().History()
	newest, _ := hist.Newest()
	_, held := gw.ValueAt[Pos](hist, newest, e)
	fmt.Println("history read:", held, hist.Capacity() > 0)

	// The determinism check's finding, as a typed error.
	var de *gw.DesyncError
	found := errors.As(c.Stats().FirstDesync, &de)
	fmt.Println("desync found:", found, found && de.Entity == e, found && de.Component.String() == "main.Pos", found && de.Field == "Y")

	// Lag compensation from a game: a probe against the history, the
	// occlusion test, a verdict confirmed to the shooter's client.
	other, _ := h.Server.Player(h.Server.Conns()[1])
	sp := generic.NewMap[Pos](h.Server.World().Arche())
	from, to := sp.Get(se), sp.Get(other)
	shot := lagcomp.Shot{Shooter: se, Tick: h.Server.World().Tick(), ViewTick: h.Server.World().Tick().Add(-2), MaxViewAge: 10,
		Origin: [3]float32{from.X, from.Y, 0}, Dir: [3]float32{to.X - from.X, to.Y - from.Y, 0}}
	v := compensator.Probe(shot, false)
	fmt.Println("probe:", v.Reason != "", lagcomp.LineOfSight(nil, shot.Origin, [3]float32{to.X, to.Y, 0}))
	compensator.Judge(shot)
	h.Run(500 * time.Millisecond)
	fmt.Println("confirmed:", confirmed == 1, compensator.History().Capacity() > 0)
	return nil
}
