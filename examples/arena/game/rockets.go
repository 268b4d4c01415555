package game

import (
	"math"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// The rocket launcher: a projectile the shooter's client predicts from
// the tick it is fired, simulated on every endpoint, exploding on a wall,
// a player or at the end of its range, with splash damage the server
// alone deals.
const (
	RocketSpeed  = float32(15) // units per second
	RocketRange  = 20          // units of flight before it explodes
	RocketRadius = float32(0.15)
	// RocketCooldown is the launcher's interval: the client predicts it
	// (Launcher), so a press during it fires nothing on either end.
	RocketCooldown = 750 * time.Millisecond
	// MagazineSize is how many rockets a player carries, and
	// MagazineRefill how long the server takes to add one back: the
	// server's rule alone (Magazine), so a client may fire a rocket the
	// server then refuses.
	MagazineSize   = 3
	MagazineRefill = 2 * time.Second
	// RocketDamage is the damage at the explosion's centre, falling
	// linearly to nothing at SplashRadius from the player's edge.
	RocketDamage = 60
	SplashRadius = float32(2.5)
	// MaxRocketLife bounds Rocket.Left on the wire: the ticks of
	// RocketRange at the highest tick rate (240 Hz: 320).
	MaxRocketLife = 1023
)

// Rocket is a rocket in flight: its velocity in units per second and the
// ticks it has left before it explodes at the end of its range. Its
// position is a Position.
type Rocket struct {
	VX, VY float32
	Left   uint16
}

// Serialize is Rocket's wire form.
func (r *Rocket) Serialize(s *netsync.Stream) {
	s.Float(&r.VX, coord)
	s.Float(&r.VY, coord)
	netsync.Int(s, &r.Left, 0, MaxRocketLife)
}

// Launcher is a player's rocket launcher: the tick it can fire again.
// The client predicts it, since its own input drives it.
type Launcher struct {
	Ready gw.Tick
}

// Serialize is Launcher's wire form.
func (l *Launcher) Serialize(s *netsync.Stream) { s.Tick(&l.Ready) }

// Magazine is the rockets a player has left on the server: a server-only
// component (not replicated), so a client cannot know it is empty and
// predicts a rocket the server refuses (ClientStats.SpawnsUnmatched).
// Refill is the tick the next rocket comes back.
type Magazine struct {
	Rockets int8
	Refill  gw.Tick
}

// take spends a rocket fired on tick, after adding back those due since
// the last one was spent; it reports false when none is left.
func (m *Magazine) take(tick gw.Tick, refill int) bool {
	for m.Rockets < MagazineSize && !tick.Before(m.Refill) {
		m.Rockets++
		m.Refill = m.Refill.Add(refill)
	}
	if m.Rockets == 0 {
		return false
	}
	if m.Rockets == MagazineSize {
		m.Refill = tick.Add(refill)
	}
	m.Rockets--
	return true
}

// ticksOf is d in ticks at a tick rate, rounded up.
func ticksOf(d time.Duration, tickRate int) int {
	return int((d*time.Duration(tickRate) + time.Second - 1) / time.Second)
}

// RocketLife is a rocket's flight in ticks at a tick rate: RocketRange at
// RocketSpeed.
func RocketLife(tickRate int) uint16 {
	return uint16(math.Ceil(float64(RocketRange) / float64(RocketSpeed) * float64(tickRate)))
}

// RocketSystem is the launcher and the rockets' flight, a prediction
// system of every endpoint (Physics): on the server for every rocket, on
// a client for its own. Each tick it first moves every rocket in flight
// and marks those that explode (components.Despawned, a predicted
// despawn): on a pillar or the arena's edge, within reach of a living
// player other than its shooter, or at the end of its range. Then every
// living player whose input presses Command.Rocket with its launcher
// ready fires one from its edge toward its aim: a new entity carrying
// components.SpawnGhost, which the server makes a ghost and the
// shooter's client predicts at once. A client tests its rockets against
// the other players where the server last showed them (the framework
// poses them so), the server against where they are: a hit the client
// did not foresee is corrected like any misprediction.
type RocketSystem struct {
	dt         float32
	life       uint16
	cooldown   int
	rocketType uint16
	shooters   *generic.Filter5[Position, Health, Launcher, Command, components.Ghost]
	rockets    *generic.Filter3[Position, Rocket, components.Ghost]
	players    *generic.Filter3[components.Ghost, Position, Health]
	posID      ecs.ID
	rocketID   ecs.ID
	spawnID    ecs.ID
	goneID     ecs.ID
	targets    []target
}

// target is a living player a rocket may hit.
type target struct {
	owner components.ConnID
	x, y  float32
}

// NewRocketSystem returns the rocket system of a world for a schema's
// rocket type at a tick rate.
func NewRocketSystem(w *gw.World, schema *Schema, tickRate int) *RocketSystem {
	a := w.Arche()
	return &RocketSystem{
		dt:         1 / float32(tickRate),
		life:       RocketLife(tickRate),
		cooldown:   ticksOf(RocketCooldown, tickRate),
		rocketType: uint16(schema.Rocket),
		shooters:   generic.NewFilter5[Position, Health, Launcher, Command, components.Ghost]().With(generic.T[components.Predicted]()),
		rockets: generic.NewFilter3[Position, Rocket, components.Ghost]().With(generic.T[components.Predicted]()).
			Without(generic.T[components.Despawned]()),
		players:  generic.NewFilter3[components.Ghost, Position, Health](),
		posID:    ecs.ComponentID[Position](a),
		rocketID: ecs.ComponentID[Rocket](a),
		spawnID:  ecs.ComponentID[components.SpawnGhost](a),
		goneID:   ecs.ComponentID[components.Despawned](a),
	}
}

// Update moves the rockets, explodes those that hit, and fires new ones.
func (s *RocketSystem) Update(w *gw.World) {
	a := w.Arche()
	s.targets = s.targets[:0]
	pq := s.players.Query(a)
	for pq.Next() {
		g, p, h := pq.Get()
		if h.Alive() {
			s.targets = append(s.targets, target{owner: g.Owner, x: p.X, y: p.Y})
		}
	}
	rq := s.rockets.Query(a)
	for rq.Next() {
		p, r, g := rq.Get()
		p.X, p.Y = p.X+float32(r.VX*s.dt), p.Y+float32(r.VY*s.dt)
		if r.Left > 0 {
			r.Left--
		}
		if r.Left == 0 || blocked(p.X, p.Y) || s.hits(p.X, p.Y, g.Owner) {
			w.Commands().Add(rq.Entity(), ecs.Component{ID: s.goneID, Comp: &components.Despawned{Tick: w.Tick()}})
		}
	}
	sq := s.shooters.Query(a)
	for sq.Next() {
		p, h, l, in, g := sq.Get()
		if !in.Rocket.Pressed() || !h.Alive() || w.Tick().Before(l.Ready) {
			continue
		}
		l.Ready = w.Tick().Add(s.cooldown)
		sin, cos := math.Sincos(float64(in.Aim))
		dx, dy := float32(cos), float32(sin)
		muzzle := Radius + RocketRadius
		at := Position{X: coord.Quantize(p.X + float32(dx*muzzle)), Y: coord.Quantize(p.Y + float32(dy*muzzle))}
		r := Rocket{VX: coord.Quantize(float32(dx * RocketSpeed)), VY: coord.Quantize(float32(dy * RocketSpeed)), Left: s.life}
		w.Commands().Spawn(nil, ecs.Component{ID: s.posID, Comp: &at}, ecs.Component{ID: s.rocketID, Comp: &r},
			ecs.Component{ID: s.spawnID, Comp: &components.SpawnGhost{Type: s.rocketType, Owner: g.Owner}})
	}
}

// hits reports whether a rocket of owner's at (x, y) touches a living
// player other than its shooter.
func (s *RocketSystem) hits(x, y float32, owner components.ConnID) bool {
	for _, t := range s.targets {
		if t.owner != owner && length(x-t.x, y-t.y) < Radius+RocketRadius {
			return true
		}
	}
	return false
}

// blocked reports whether a rocket at (x, y) touches a pillar or the
// arena's edge.
func blocked(x, y float32) bool {
	lim := HalfSize - RocketRadius
	if x > lim || x < -lim || y > lim || y < -lim {
		return true
	}
	for i := range Walls {
		w := &Walls[i]
		if x > w.Min[0]-RocketRadius && x < w.Max[0]+RocketRadius && y > w.Min[1]-RocketRadius && y < w.Max[1]+RocketRadius {
			return true
		}
	}
	return false
}

// RocketStats counts what the server's Armoury did.
type RocketStats struct {
	// Fired counts the rockets the server made ghosts of, Refused those
	// it refused for an empty magazine (the client's prediction of each
	// is removed: ClientStats.SpawnsUnmatched).
	Fired, Refused uint64
	// Exploded counts the explosions, Hits the players they damaged and
	// Kills those they killed.
	Exploded, Hits, Kills uint64
}

// Armoury is the server's side of the launcher, two server-only systems
// NewArmoury installs. In the prediction stage, after the arena's own, it
// refuses a rocket fired from an empty Magazine before the server makes
// it a ghost; the server's determinism-check replays (ServerOptions.SyncTest)
// repeat that from the magazines the history recorded, and only the
// counters wait for the first run. In StageSimulation, where the rockets
// that exploded this tick are still there (the server removes despawned
// ghosts after it), it deals each explosion's splash damage to the living
// players within SplashRadius in line of sight, the shooter spared.
// Health is server-owned: the clients take the damage as it arrives, no
// misprediction.
type Armoury struct {
	Stats    RocketStats
	server   *systems.Server
	refill   int
	respawn  int
	fresh    *generic.Filter2[components.SpawnGhost, Rocket]
	booms    *generic.Filter3[Position, components.Despawned, components.Ghost]
	players  *generic.Filter3[components.Ghost, Position, Health]
	mags     generic.Map[Magazine]
	refused  []ecs.Entity
	explodes []target
}

// NewArmoury installs the Armoury on a server: its refusals in the
// prediction stage, after the arena's systems, and its splash damage in
// StageSimulation. A server with a determinism check records the
// magazines in its history. It errors only if the history refuses
// Magazine.
func NewArmoury(s *systems.Server, tickRate int) (*Armoury, error) {
	w := s.World()
	if h := w.History(); h != nil {
		if err := gw.Register[Magazine](h); err != nil {
			return nil, err
		}
	}
	ar := &Armoury{
		server:  s,
		refill:  ticksOf(MagazineRefill, tickRate),
		respawn: respawnTicks(tickRate),
		fresh:   generic.NewFilter2[components.SpawnGhost, Rocket](),
		booms:   generic.NewFilter3[Position, components.Despawned, components.Ghost]().With(generic.T[Rocket]()),
		players: generic.NewFilter3[components.Ghost, Position, Health](),
		mags:    generic.NewMap[Magazine](w.Arche()),
	}
	s.Schedule().Add(gw.StagePrediction, gw.SystemFunc(ar.refuse))
	s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(ar.explode))
	return ar, nil
}

// refuse removes the tick's rockets fired from an empty magazine.
func (ar *Armoury) refuse(w *gw.World) {
	first := !w.IsReplaying()
	ar.refused = ar.refused[:0]
	q := ar.fresh.Query(w.Arche())
	for q.Next() {
		req, _ := q.Get()
		shooter, ok := ar.server.Player(req.Owner)
		if !ok || !ar.mags.Has(shooter) {
			continue // a player without a magazine has no limit
		}
		switch {
		case ar.mags.Get(shooter).take(w.Tick(), ar.refill):
			if first {
				ar.Stats.Fired++
			}
		default:
			ar.refused = append(ar.refused, q.Entity())
			if first {
				ar.Stats.Refused++
			}
		}
	}
	for _, e := range ar.refused {
		w.Arche().RemoveEntity(e)
	}
}

// explode deals the damage of the rockets that exploded this tick; the
// kill feed hears of the kills.
func (ar *Armoury) explode(w *gw.World) {
	ar.explodes = ar.explodes[:0]
	bq := ar.booms.Query(w.Arche())
	for bq.Next() {
		p, _, g := bq.Get()
		ar.explodes = append(ar.explodes, target{owner: g.Owner, x: p.X, y: p.Y})
	}
	for _, b := range ar.explodes {
		ar.Stats.Exploded++
		ar.splash(w, b)
	}
}

// splash deals one explosion's damage.
func (ar *Armoury) splash(w *gw.World, b target) {
	q := ar.players.Query(w.Arche())
	for q.Next() {
		g, p, h := q.Get()
		if g.Owner == b.owner || !h.Alive() {
			continue
		}
		dmg := SplashDamage(length(p.X-b.x, p.Y-b.y))
		if dmg == 0 || !LineOfSight(b.x, b.y, p.X, p.Y) {
			continue
		}
		ar.Stats.Hits++
		h.HP -= dmg
		if !h.Alive() {
			ar.Stats.Kills++
			h.Respawn = w.Tick().Add(ar.respawn)
			killed(w, b.owner, g.Owner, WeaponRocket)
		}
	}
}

// SplashDamage is the damage of an explosion d units from a player's
// centre: RocketDamage within Radius, falling linearly to 0 at
// SplashRadius beyond it.
func SplashDamage(d float32) int16 {
	k := (d - Radius) / SplashRadius
	if k >= 1 {
		return 0
	}
	return int16(math.Ceil(float64(RocketDamage * (1 - max(k, 0)))))
}
