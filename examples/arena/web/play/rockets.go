package play

import (
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
)

// Rocket is a rocket in flight as a view draws it.
type Rocket struct {
	// Ghost is its ghost ID, 0 while the server has not confirmed this
	// client's prediction of it.
	Ghost uint32
	X, Y  float32
	// Own is set for this client's rockets, predicted from the tick they
	// were fired (and drawn smoothed); the others' are interpolated.
	Own bool
}

// Explosion is where a rocket exploded, shown for ExplosionShown.
type Explosion struct {
	X, Y float32
	// Own is set for an explosion of this client's rockets, predicted
	// (the server's splash damage follows a round trip later).
	Own bool
	// AgeMS is how long ago it was seen.
	AgeMS float64
}

// ExplosionShown is how long a view shows an explosion.
const ExplosionShown = 400 * time.Millisecond

// seenExplosion is an explosion and when it was seen.
type seenExplosion struct {
	Explosion
	at time.Duration
}

// rockets tracks the client's rockets for the view: the explosions seen,
// and the own rockets already shown exploding (a predicted explosion is
// seen on the rocket's despawn mark, before the server's despawn removes
// it). The Player's lock guards it.
type rockets struct {
	flying     *generic.Filter3[game.Position, components.Ghost, game.Rocket]
	marked     *generic.Filter1[game.Position]
	pred       generic.Map[components.Predicted]
	exploded   map[ecs.Entity]bool
	explosions []seenExplosion
}

func newRockets(w *gw.World) rockets {
	return rockets{
		flying:   generic.NewFilter3[game.Position, components.Ghost, game.Rocket]().Without(generic.T[components.Despawned]()),
		marked:   generic.NewFilter1[game.Position]().With(generic.T2[game.Rocket, components.Despawned]()...),
		pred:     generic.NewMap[components.Predicted](w.Arche()),
		exploded: map[ecs.Entity]bool{},
	}
}

// note notes, at now, the explosions the prediction marked since the
// last frame (a presentation system): a rocket marked despawned is one
// that exploded on this client.
func (r *rockets) note(w *gw.World, now time.Duration) {
	q := r.marked.Query(w.Arche())
	for q.Next() {
		if e := q.Entity(); !r.exploded[e] {
			r.exploded[e] = true
			p := q.Get()
			r.explosions = append(r.explosions, seenExplosion{Explosion{X: p.X, Y: p.Y, Own: true}, now})
		}
	}
	for e := range r.exploded {
		if !w.Arche().Alive(e) {
			delete(r.exploded, e)
		}
	}
}

// despawned notes, at now, the explosion of a rocket the server removed
// before this client saw it explode: another client's, interpolated, or
// one of its own the server ended otherwise than predicted (it hit a
// player this client showed elsewhere). isRocket says g is one.
func (r *rockets) despawned(w *gw.World, e ecs.Entity, isRocket bool, now time.Duration) {
	if !isRocket || r.exploded[e] {
		return
	}
	a := w.Arche()
	id := ecs.ComponentID[game.Position](a)
	if !a.Has(e, id) {
		return
	}
	p := (*game.Position)(a.Get(e, id))
	r.explosions = append(r.explosions, seenExplosion{Explosion{X: p.X, Y: p.Y, Own: r.pred.Has(e)}, now})
}

// shown returns the rockets in flight, the own ones where visual draws
// them, and the explosions seen within ExplosionShown of now, forgetting
// the older ones.
func (r *rockets) shown(w *gw.World, now time.Duration, visual func(ecs.Entity) [3]float32) ([]Rocket, []Explosion) {
	flying := []Rocket{}
	q := r.flying.Query(w.Arche())
	for q.Next() {
		p, g, _ := q.Get()
		rk := Rocket{Ghost: uint32(g.ID), X: p.X, Y: p.Y, Own: r.pred.Has(q.Entity())}
		if rk.Own {
			v := visual(q.Entity())
			rk.X, rk.Y = v[0], v[1]
		}
		flying = append(flying, rk)
	}
	keep := r.explosions[:0]
	for _, x := range r.explosions {
		if now-x.at < ExplosionShown {
			keep = append(keep, x)
		}
	}
	clear(r.explosions[len(keep):])
	r.explosions = keep
	booms := make([]Explosion, len(keep))
	for i, x := range keep {
		booms[i] = x.Explosion
		booms[i].AgeMS = float64(now-x.at) / float64(time.Millisecond)
	}
	return flying, booms
}
