package web

import (
	"encoding/json"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/systems"
)

// Truth is the server's state as the spectator stream sends it.
type Truth struct {
	Tick    uint32
	Players []TruthPlayer
	// LagComp says whether shots are judged at the shooter's view.
	LagComp bool
	Shots   game.ShotStats
	// Rockets are the rockets in flight, RocketStats the server's counts.
	Rockets     []TruthRocket
	RocketStats game.RocketStats
	// HasBall says whether Ball is the ball (it is, in the web's arena).
	HasBall bool
	Ball    TruthBall
	Server  systems.ServerStats
	// Conns are the server's input counts of every connection.
	Conns []TruthConn
}

// TruthConn is what the server did with one connection's inputs: the
// ticks run with its own input (Applied) and with a substitute because
// none had arrived (Missing).
type TruthConn struct {
	Conn             uint32
	Applied, Missing uint64
}

// TruthRocket is one rocket on the server.
type TruthRocket struct {
	Ghost, Owner uint32
	X, Y         float32
}

// TruthBall is the ball on the server.
type TruthBall struct {
	X, Y, VX, VY float32
}

// TruthPlayer is one player on the server.
type TruthPlayer struct {
	Ghost, Owner uint32
	X, Y, Yaw    float32
	HP           int16
	// RespawnS is, for a dead player, the seconds until it respawns.
	RespawnS float64
}

// publish stores the server's state for the spectator streams and its
// counters for Stats, once per server tick.
func (s *Server) publish() {
	w := s.game.World()
	if s.published && w.Tick() == s.lastTick {
		return
	}
	s.published, s.lastTick = true, w.Tick()
	t := Truth{Tick: uint32(w.Tick()), Players: []TruthPlayer{}, LagComp: s.lagComp.Load(),
		Shots: s.shots.Stats, Rockets: []TruthRocket{}, RocketStats: s.armoury.Stats, Server: s.game.Stats()}
	f := generic.NewFilter4[game.Position, game.Facing, game.Health, components.Ghost]()
	q := f.Query(w.Arche())
	for q.Next() {
		p, fa, h, g := q.Get()
		tp := TruthPlayer{Ghost: uint32(g.ID), Owner: uint32(g.Owner), X: p.X, Y: p.Y, Yaw: fa.Yaw, HP: h.HP}
		if !h.Alive() {
			tp.RespawnS = max(float64(h.Respawn.Sub(w.Tick()))/play.TickRate, 0)
		}
		t.Players = append(t.Players, tp)
	}
	rq := generic.NewFilter2[game.Position, components.Ghost]().With(generic.T[game.Rocket]()).Query(w.Arche())
	for rq.Next() {
		p, g := rq.Get()
		t.Rockets = append(t.Rockets, TruthRocket{Ghost: uint32(g.ID), Owner: uint32(g.Owner), X: p.X, Y: p.Y})
	}
	bq := generic.NewFilter2[game.Position, game.Velocity]().With(generic.T[game.Ball]()).Query(w.Arche())
	for bq.Next() {
		p, v := bq.Get()
		t.HasBall, t.Ball = true, TruthBall{X: p.X, Y: p.Y, VX: v.X, VY: v.Y}
	}
	t.Conns = []TruthConn{}
	for _, id := range s.game.Conns() {
		if cs, ok := s.game.ConnStats(id); ok {
			t.Conns = append(t.Conns, TruthConn{Conn: uint32(id), Applied: cs.Inputs.Applied, Missing: cs.Inputs.Missing})
		}
	}
	b, err := json.Marshal(t)
	if err != nil {
		panic(err) // Truth has only plain fields: Marshal cannot fail
	}
	s.truth.Store(&b)
	s.serverStats.Store(&t.Server)
}
