package game

import (
	"math"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// Weapon and life.
const (
	MaxHP        = 100 // hit points of a fresh player
	Damage       = 25  // per hit
	FireInterval = 15  // ticks between shots (4 per second at 60 Hz)
	// RespawnDelay is how long a dead player waits: a time, not ticks, so
	// that at every tick rate a client sees its death (about a round trip
	// after it) before it is alive elsewhere. In 60 ticks at 240 Hz it
	// could not on a 200 ms link: it went on predicting itself where it
	// died, and its shots from there were refused as origin_mismatch.
	RespawnDelay = time.Second
	ShotRange    = 40 // arena units
	// MaxOriginError is how far a shot's claimed origin may be from the
	// server's shooter: a client's own position can be mispredicted by a
	// shove it could not foresee, about a unit at 250 ms.
	MaxOriginError = 2
)

// Body parts of the hitboxes.
const (
	PartBody uint8 = 1
	PartHead uint8 = 2
)

// PlayerHitboxes returns a player's hit volume: a body capsule and a head
// sphere toward where it faces.
func PlayerHitboxes() components.Hitboxes {
	hb := components.Hitboxes{N: 2}
	hb.Boxes[0] = components.Hitbox{Shape: components.ShapeCapsule, Part: PartBody, Half: [3]float32{0, 0.15, 0}, Radius: 0.35}
	hb.Boxes[1] = components.Hitbox{Shape: components.ShapeSphere, Part: PartHead, Offset: [3]float32{0.25, 0, 0}, Radius: 0.2}
	return hb
}

// ShotStats counts the server's verdicts.
type ShotStats struct {
	Fired    uint64
	Hits     uint64
	Kills    uint64
	Verdicts map[string]uint64
	// OtherModeHits counts the shots that the other mode (present if lag
	// compensation is on, rewound if off) would have judged hits: the
	// comparison in the same run.
	OtherModeHits uint64
	// ByConn counts the judged shots and hits of each connection's player.
	ByConn map[components.ConnID]*ConnShots
}

// ConnShots counts one connection's judged shots.
type ConnShots struct {
	Judged, Hits uint64
}

// ShotSystem is the server's trigger: for every player whose input of this
// tick pulls the trigger (the compensator's death rule judges the dead) it asks the compensator for a verdict (and
// the other mode's, for comparison) and applies damage to the target's
// present state. It runs in StageHistory after the compensator recorded
// the tick, and records the tick again when damage changed it, so the
// history of a tick holds what the snapshot of that tick carries.
type ShotSystem struct {
	LC *lagcomp.Compensator
	// Judge decides the shots when set: a game's own rules in the
	// compensator's place (lagcomp.Judge); LC when nil.
	Judge   lagcomp.Judge
	Stats   ShotStats
	shooter *generic.Filter3[Health, Command, components.InputHeader]
	health  generic.Map[Health]
	ghost   generic.Map[components.Ghost]
	shots   []lagcomp.Shot
	inputs  map[ecs.Entity]*recentInputs
	respawn int // RespawnDelay in ticks
}

// recentInputs is what the server saw of one player's recent inputs: which
// ticks ran on a substitute (their input missing when they ran), and how
// far behind its tick the last view it claimed was.
type recentInputs struct {
	tick    gw.Tick // the newest tick seen
	missing uint64  // bit d: tick − d ran on a substitute
	viewAge float64 // ticks, of the newest input with a view
	hasView bool
}

// observe notes the header of the input a player's tick ran on. A
// substitute has no view (components.InputHeader); so has a real input
// before its client showed anything, which may then pass for a missing
// one: that only lets a shot claim such a tick (see fired).
func (r *recentInputs) observe(h *components.InputHeader) {
	if d := h.Tick.Sub(r.tick); d >= 64 || d < 0 {
		r.missing = 0
	} else {
		r.missing <<= uint(d)
	}
	r.tick = h.Tick
	if !h.HasView {
		r.missing |= 1
		return
	}
	r.viewAge, r.hasView = float64(h.Tick.Sub(h.ViewTick))-float64(h.ViewFraction), true
}

// fired returns the tick a pressed shot was fired on and the view its
// shooter showed then. A shot is fired on the tick of its input, unless
// its command claims an earlier tick that ran on a substitute: then its
// input arrived late and the server applies its press now
// (components.Press), and the shot is judged as fired then, with the view
// as far behind that tick as this input's (or, on a substitute, the last
// claimed view) is behind its own. A shooter that showed nothing yet is
// judged against the present.
func (r *recentInputs) fired(h *components.InputHeader, claimed gw.Tick) (tick, view gw.Tick, frac float32) {
	tick = h.Tick
	if d := h.Tick.Sub(claimed); d > 0 && d < 64 && r.missing>>uint(d)&1 == 1 {
		tick = claimed
	}
	switch {
	case h.HasView:
		return tick, h.ViewTick.Add(-int(h.Tick.Sub(tick))), h.ViewFraction
	case r.hasView:
		whole := math.Ceil(r.viewAge)
		return tick, tick.Add(-int(whole)), float32(whole - r.viewAge)
	}
	return tick, tick, 0
}

// NewShotSystem returns the trigger system of a server world.
func NewShotSystem(w *gw.World, lc *lagcomp.Compensator) *ShotSystem {
	s := &ShotSystem{LC: lc, shooter: generic.NewFilter3[Health, Command, components.InputHeader](),
		health: generic.NewMap[Health](w.Arche()), ghost: generic.NewMap[components.Ghost](w.Arche()),
		Stats:  ShotStats{Verdicts: map[string]uint64{}, ByConn: map[components.ConnID]*ConnShots{}},
		inputs: map[ecs.Entity]*recentInputs{}}
	s.respawn = respawnTicks(lc.TickRate())
	for _, r := range lagcomp.Reasons() {
		s.Stats.Verdicts[string(r)] = 0
	}
	return s
}

// Update judges this tick's shots.
func (s *ShotSystem) Update(w *gw.World) {
	q := s.shooter.Query(w.Arche())
	if n := q.Count(); cap(s.shots) < n { // room for every shooter: no new high in a busy tick
		s.shots = make([]lagcomp.Shot, 0, n)
	}
	s.shots = s.shots[:0]
	for q.Next() {
		_, in, head := q.Get()
		if head.Tick != w.Tick() {
			continue
		}
		r := s.inputs[q.Entity()]
		if r == nil {
			r = &recentInputs{tick: head.Tick}
			s.inputs[q.Entity()] = r
		}
		r.observe(head)
		if !in.Fire.Pressed() {
			continue
		}
		// A dead shooter's shot goes to the judge too: its death rule
		// (lagcomp.Options.TradeWindow) decides, with a reason.
		sin, cos := math.Sincos(float64(in.Aim))
		tick, view, frac := r.fired(head, shotTick(in.Shot, head.Tick))
		s.shots = append(s.shots, lagcomp.Shot{Shooter: q.Entity(), Tick: tick, ViewTick: view, ViewFraction: frac,
			Origin: [3]float32{in.OriginX, in.OriginY, 0}, Dir: [3]float32{float32(cos), float32(sin), 0}, MaxViewAge: head.MaxViewAge, InterpolationDelay: head.InterpolationDelay, Acked: head.Acked})
	}
	anyKill := false
	for _, shot := range s.shots {
		s.Stats.Fired++
		v := s.judge().Judge(shot)
		s.Stats.Verdicts[string(v.Reason)]++
		if s.ghost.Has(shot.Shooter) {
			owner := s.ghost.Get(shot.Shooter).Owner
			cs := s.Stats.ByConn[owner]
			if cs == nil {
				cs = &ConnShots{}
				s.Stats.ByConn[owner] = cs
			}
			cs.Judged++
			if v.Hit {
				cs.Hits++
			}
		}
		// The fire rate does not depend on the mode: a shot refused for it
		// would be refused in the other mode too (Probe does not check it).
		if v.Reason != lagcomp.ReasonFireRate && s.LC.Probe(shot, !s.LC.Present()).Hit {
			s.Stats.OtherModeHits++
		}
		if !v.Hit {
			continue
		}
		s.Stats.Hits++
		anyKill = s.damage(w, shot.Shooter, v.Target) || anyKill
	}
	// The tick's history must say who died in it, as its snapshot does.
	// The arena's rules (Visible, Alive) read nothing of Health but
	// whether a player is alive, so a hit that leaves its target alive
	// changes no later verdict: the tick is recorded again, every player,
	// only after a kill (at 64 players a hit lands almost every tick).
	if anyKill {
		s.LC.Update(w)
	}
	if w.Tick()%64 == 0 {
		for e := range s.inputs {
			if !w.Arche().Alive(e) {
				delete(s.inputs, e)
			}
		}
	}
}

// damage applies a hit of shooter's to the target's present state:
// decided in the past, applied now. It reports whether the hit killed,
// and tells the kill feed.
func (s *ShotSystem) damage(w *gw.World, shooter, target ecs.Entity) bool {
	if !w.Arche().Alive(target) || !s.health.Has(target) {
		return false
	}
	h := s.health.Get(target)
	if !h.Alive() {
		return false
	}
	h.HP -= Damage
	if h.Alive() {
		return false
	}
	s.Stats.Kills++
	h.Respawn = w.Tick().Add(s.respawn)
	killed(w, s.owner(w, shooter), s.owner(w, target), WeaponGun)
	return true
}

// owner returns the connection of a player's ghost (0 for an entity that
// is no ghost, or no more).
func (s *ShotSystem) owner(w *gw.World, e ecs.Entity) components.ConnID {
	if !w.Arche().Alive(e) || !s.ghost.Has(e) {
		return 0
	}
	return s.ghost.Get(e).Owner
}

// respawnTicks is RespawnDelay in ticks at a tick rate, rounded up.
func respawnTicks(tickRate int) int { return ticksOf(RespawnDelay, tickRate) }

// RespawnSystem brings dead players back at their spawn point, a teleport
// the clients show as a jump, not a slide.
type RespawnSystem struct {
	filter *generic.Filter5[Position, Velocity, Health, Facing, components.Ghost]
}

// NewRespawnSystem returns the server's respawn system.
func NewRespawnSystem() *RespawnSystem {
	return &RespawnSystem{filter: generic.NewFilter5[Position, Velocity, Health, Facing, components.Ghost]()}
}

// Update respawns the players whose time has come.
func (s *RespawnSystem) Update(w *gw.World) {
	q := s.filter.Query(w.Arche())
	for q.Next() {
		p, v, h, f, g := q.Get()
		if h.Alive() || w.Tick().Before(h.Respawn) {
			continue
		}
		*p = SpawnPoint(g.Owner)
		*v = Velocity{}
		f.Yaw = 0
		*h = Health{HP: MaxHP}
	}
}

// SpawnPoint is where the player of a connection (re)appears: on circles
// of radius 3 and 8, eight to a circle, clear of the pillars.
func SpawnPoint(conn components.ConnID) Position {
	k := int(conn-1) % 16
	a := float64(k%8) * 2 * math.Pi / 8
	r := 3.0
	if k >= 8 {
		r = 8
	}
	return Position{X: coord.Quantize(float32(r * math.Cos(a))), Y: coord.Quantize(float32(r * math.Sin(a)))}
}

// judge returns the judge of the shots: Judge, or the compensator.
func (s *ShotSystem) judge() lagcomp.Judge {
	if s.Judge != nil {
		return s.Judge
	}
	return s.LC
}
