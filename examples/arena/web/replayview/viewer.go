// Package replayview serves a recorded arena match to a browser: a
// timeline to scrub, play and pause at a chosen speed, the kills and the
// disputed shots to jump to, and for each shot the kill-cam: the
// shooter's view at the tick and fraction it saw, its ray and the
// server's verdict with its reason, beside the server's view of the tick
// the shot was judged on. The arena serves it with -replay FILE -web ADDR.
//
// Load replays the file once, with no network, checking every state
// hash, and keeps what the page shows: every player's pose each tick and
// the scene of every hit and disputed shot (lagcomp.Compensator.Capture).
package replayview

import (
	"fmt"
	"math"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// MaxShots bounds the shots a Viewer keeps a scene of: hits and disputed
// shots, oldest first; later ones are counted in Info.ShotsDropped.
const MaxShots = 4096

// Body is one player on one tick.
type Body struct {
	Conn  uint32
	X, Y  float32
	Yaw   float32
	HP    int16
	Alive bool
}

// Frame is the players on one tick.
type Frame struct {
	Tick   uint32
	Bodies []Body
}

// Kill is one kill of the match.
type Kill struct {
	Tick           uint32
	Killer, Victim uint32
	Weapon         string // "gun" or "rocket"
	// Shot is the index of the killing shot's scene (GET /shot?i=), -1
	// for a rocket's kill (splash, judged on the present) or a scene
	// beyond MaxShots.
	Shot int
}

// ShotRef lists one kept shot: a hit or a disputed one.
type ShotRef struct {
	Index   int
	Tick    uint32
	Shooter uint32
	Reason  string
	Hit     bool
}

// Info is what the page loads first.
type Info struct {
	First, Last uint32 // the ticks the frames span
	TickRate    int
	Players     []uint32 // the players' connections
	Kills       []Kill
	// Shots are the kept shots: every hit, and every shot refused for a
	// reason other than missing (occluded, not visible, outside the
	// window, too old a view, too fast, a dead shooter, a wrong origin).
	Shots        []ShotRef
	ShotsDropped int
	// Hashes is how many recorded state hashes the replay checked, every
	// one equal (Load fails otherwise).
	Hashes uint64
}

// Posed is one entity of a kill-cam scene, as the page draws it.
type Posed struct {
	Conn    uint32
	Shooter bool
	X, Y    float32
	Yaw     float32
	Visible bool
	// Circles are the hitboxes seen from above: centre and radius.
	Circles [][3]float32
}

// Shot is one kept shot's kill-cam: the shooter's view and the server's
// present when it judged the shot.
type Shot struct {
	Index       int
	Tick        uint32 // the tick the server judged the shot on
	View        float64
	Shooter     uint32
	Origin, Dir [2]float32 // Dir normalized
	Length      float32    // to the hit, else the range
	Hit         bool
	Reason      string
	// Refused says a rule refused the shot before its ray was cast
	// (lagcomp.Scene.Refused); CastAgain is then what the ray would
	// have met.
	Refused        bool
	Target         uint32 // 0 when none
	Part           uint8
	Distance       float32
	CastAgain      string // the reason the scene's own cast gives
	ShooterView    []Posed
	ServerAtJudged Frame
}

// Viewer is a recorded match prepared for the page.
type Viewer struct {
	info   Info
	frames []Frame
	shots  []Shot
}

// Load replays f and keeps what the page shows. It errors when the game
// cannot replay f (another schema, a bad configuration) and when a state
// hash differs from the recording's (naming the tick).
func Load(f *replay.File) (*Viewer, error) {
	v := &Viewer{}
	var m *game.Match
	inner := game.ReplayBuild(&m)
	var owner func(e ecs.Entity) uint32
	var scene lagcomp.Scene
	build := func(h *replay.Header) (*replay.Setup, error) {
		st, err := inner(h)
		if err != nil {
			return nil, err
		}
		// A seek backwards builds the match again: start over.
		v.frames, v.shots, v.info.ShotsDropped = v.frames[:0], v.shots[:0], 0
		m.OnJudge = func(c *lagcomp.Compensator, s lagcomp.Shot, vd lagcomp.Verdict) {
			if vd.Reason == lagcomp.ReasonNoTarget {
				return // a miss: nothing to dispute
			}
			if len(v.shots) == MaxShots {
				v.info.ShotsDropped++
				return
			}
			c.Capture(s, vd, &scene)
			v.shots = append(v.shots, shotOf(len(v.shots), &scene, owner))
		}
		inner := st.Server
		st.Server = func(s *systems.Server) error {
			a := s.World().Arche()
			ghosts := generic.NewMap[components.Ghost](a)
			owner = func(e ecs.Entity) uint32 {
				if e.IsZero() || !a.Alive(e) || !ghosts.Has(e) {
					return 0
				}
				return uint32(ghosts.Get(e).Owner)
			}
			return inner(s)
		}
		return st, nil
	}
	p, err := replay.NewPlayer(f, build)
	if err != nil {
		return nil, err
	}
	players := generic.NewFilter4[components.Ghost, game.Position, game.Facing, game.Health]()
	for {
		ran, err := p.Step()
		if err != nil {
			return nil, err
		}
		if !ran {
			break
		}
		w := p.Server().World()
		fr := Frame{Tick: uint32(w.Tick())}
		q := players.Query(w.Arche())
		for q.Next() {
			g, pos, f, h := q.Get()
			fr.Bodies = append(fr.Bodies, Body{Conn: uint32(g.Owner), X: pos.X, Y: pos.Y, Yaw: f.Yaw, HP: h.HP, Alive: h.Alive()})
		}
		v.frames = append(v.frames, fr)
	}
	if len(v.frames) == 0 {
		return nil, fmt.Errorf("replayview: the recording holds no tick")
	}
	v.info.First, v.info.Last = v.frames[0].Tick, v.frames[len(v.frames)-1].Tick
	v.info.TickRate = m.Config.TickRate
	v.info.Hashes = p.Checked()
	seen := map[uint32]bool{}
	for _, fr := range v.frames {
		for _, b := range fr.Bodies {
			if !seen[b.Conn] {
				seen[b.Conn] = true
				v.info.Players = append(v.info.Players, b.Conn)
			}
		}
	}
	for i := range v.shots {
		sh := &v.shots[i]
		sh.ServerAtJudged, _ = v.frame(sh.Tick)
		v.info.Shots = append(v.info.Shots, ShotRef{Index: i, Tick: sh.Tick, Shooter: sh.Shooter, Reason: sh.Reason, Hit: sh.Hit})
	}
	if feed := game.KillFeedOf(p.Server().World()); feed != nil {
		for _, k := range feed.All() {
			kill := Kill{Tick: uint32(k.Tick), Killer: uint32(k.Killer), Victim: uint32(k.Victim), Weapon: "rocket", Shot: -1}
			if k.Weapon == game.WeaponGun {
				kill.Weapon = "gun"
				for i := range v.shots {
					if sh := &v.shots[i]; sh.Hit && sh.Tick == kill.Tick && sh.Shooter == kill.Killer && sh.Target == kill.Victim {
						kill.Shot = i
					}
				}
			}
			v.info.Kills = append(v.info.Kills, kill)
		}
	}
	return v, nil
}

// frame returns the frame of tick t.
func (v *Viewer) frame(t uint32) (Frame, bool) {
	if len(v.frames) == 0 || t < v.info.First || t > v.info.Last {
		return Frame{}, false
	}
	return v.frames[t-v.info.First], true
}

// Info returns what the page loads first.
func (v *Viewer) Info() Info { return v.info }

// Shots returns the kept shots' kill-cams, in the order they were judged.
func (v *Viewer) Shots() []Shot { return v.shots }

// shotOf turns a captured scene into what the page draws.
func shotOf(i int, sc *lagcomp.Scene, conn func(ecs.Entity) uint32) Shot {
	vd := sc.Verdict
	again := sc.Cast()
	sh := Shot{Index: i, Tick: uint32(sc.Shot.Tick), View: sc.View, Shooter: conn(sc.Shot.Shooter),
		Origin: [2]float32{sc.Origin[0], sc.Origin[1]}, Hit: vd.Hit, Reason: string(vd.Reason), Target: conn(vd.Target),
		Part: vd.Part, Distance: vd.Distance, CastAgain: string(again.Reason), Length: sc.Range, Refused: sc.Refused}
	if l := math.Hypot(float64(sc.Dir[0]), float64(sc.Dir[1])); l > 0 {
		sh.Dir = [2]float32{float32(float64(sc.Dir[0]) / l), float32(float64(sc.Dir[1]) / l)}
	}
	if vd.Hit || vd.Reason == lagcomp.ReasonOccluded && !sc.Refused {
		sh.Length = vd.Distance
	}
	for _, p := range sc.Posed {
		ps := Posed{Conn: conn(p.Entity), Shooter: p.Shooter, X: p.Position[0], Y: p.Position[1], Yaw: p.Yaw, Visible: p.Visible}
		sin, cos := math.Sincos(float64(p.Yaw))
		for k := 0; k < int(p.Hitboxes.N) && k < len(p.Hitboxes.Boxes); k++ {
			b := &p.Hitboxes.Boxes[k]
			ox, oy := float64(b.Offset[0]), float64(b.Offset[1])
			r := b.Radius
			if b.Shape == components.ShapeBox {
				r = float32(math.Hypot(float64(b.Half[0]), float64(b.Half[1])))
			}
			ps.Circles = append(ps.Circles, [3]float32{p.Position[0] + float32(ox*cos-oy*sin), p.Position[1] + float32(ox*sin+oy*cos), r})
		}
		sh.ShooterView = append(sh.ShooterView, ps)
	}
	return sh
}
