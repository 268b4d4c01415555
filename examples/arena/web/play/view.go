package play

import (
	"errors"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
)

// Body is one player as a view draws it.
type Body struct {
	Ghost uint32
	X, Y  float32
	Yaw   float32
	HP    int16
	// RespawnS is, for a dead player, the seconds until this client shows
	// it alive again (0 when alive, or due any moment).
	RespawnS float64
}

// View is what the client shows: its own player as predicted and smoothed
// (Own) and as the server last confirmed it (Confirmed, what a client that
// does not predict draws), the other players interpolated, the
// connection's state and the timeline.
type View struct {
	// State is "connecting", "connected", "refused" or "disconnected";
	// Err says why for the last two.
	State string
	Err   string `json:",omitempty"`
	// HasOwn is false until the own player has arrived.
	HasOwn    bool
	Own       Body
	Confirmed Body
	// HasConfirmed is false until a snapshot has confirmed the own player.
	HasConfirmed bool
	Others       []Body
	// Shots are the own player's shots judged within ShotShown, oldest
	// first.
	Shots []Shot
	// Rockets are the rockets in flight, Explosions those seen exploding
	// within ExplosionShown, oldest first.
	Rockets    []Rocket
	Explosions []Explosion
	// HasBall is false while the client holds no ball (none in the
	// match, or not yet arrived).
	HasBall bool
	Ball    Ball
	// Conn is this client's connection (0 until connected): the kills
	// and the lines of chat name players by theirs.
	Conn uint32
	// Kills are the kill feed's newest kills (KillFeedLines, each for
	// KillShown), KillsReceived every kill received; Chat the newest
	// lines of chat (ChatLines). Oldest first.
	Kills         []Kill
	KillsReceived uint64
	Chat          []ChatLine
	Timeline      Timeline
}

// state names the client's connection state for the page.
func state(c *systems.Client) string {
	if c.Connected() {
		return "connected"
	}
	var ce *systems.ConnError
	switch err := c.Err(); {
	case err == nil:
		return "connecting"
	case errors.As(err, &ce) && ce.Refused:
		return "refused"
	}
	return "disconnected"
}

// View returns what to draw now.
func (p *Player) View() View {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.client
	st := c.Stats()
	v := View{State: state(c), Others: []Body{}}
	if err := c.Err(); err != nil {
		v.Err = err.Error()
	}
	a := c.World().Arche()
	q := p.ghostOf.Query(a)
	for q.Next() {
		e, g := q.Entity(), q.Get()
		_, f, h := p.bodies.Get(e)
		vis := p.smoother.Visual(e)
		v.HasOwn = true
		// The respawn shows when the snapshot of its tick arrives.
		respawn := respawnIn(h, st.NewestSnapshot)
		v.Own = Body{Ghost: uint32(g.ID), X: vis[0], Y: vis[1], Yaw: f.Yaw, HP: h.HP, RespawnS: respawn}
		if cp, ok := p.confirmed(e, st); ok {
			v.HasConfirmed = true
			v.Confirmed = Body{Ghost: uint32(g.ID), X: cp.X, Y: cp.Y, Yaw: f.Yaw, HP: h.HP, RespawnS: respawn}
		}
	}
	// The others are shown at the render tick, behind the snapshots.
	render, _ := gw.TickAt(st.RenderTick)
	r := p.remote.Query(a)
	for r.Next() {
		pos, f, h, g := r.Get()
		v.Others = append(v.Others, Body{Ghost: uint32(g.ID), X: pos.X, Y: pos.Y, Yaw: f.Yaw, HP: h.HP, RespawnS: respawnIn(h, render)})
	}
	v.Shots = p.shots.shown(p.clock.Now())
	v.Rockets, v.Explosions = p.rockets.shown(c.World(), p.clock.Now(), p.smoother.Visual)
	v.Ball, v.HasBall = p.ball.shown(c.World(), p.smoother.Visual)
	if conn, ok := c.Conn(); ok {
		v.Conn = uint32(conn)
	}
	v.Kills, v.KillsReceived, v.Chat = p.kills.shown(p.clock.Now()), p.kills.received, p.chat.shown()
	v.Timeline = p.timeline.t
	v.Timeline.Tick = uint32(c.World().Tick())
	v.Timeline.Errors = append([]float64{}, p.timeline.t.Errors...)
	return v
}

// respawnIn returns the seconds from tick to a dead player's respawn (0
// when alive or past it).
func respawnIn(h *game.Health, tick gw.Tick) float64 {
	if h.Alive() {
		return 0
	}
	return max(float64(h.Respawn.Sub(tick))/TickRate, 0)
}
