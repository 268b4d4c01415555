package systems

import (
	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// spawnQueries are the filters of the spawn and despawn requests, made
// once per endpoint.
type spawnQueries struct {
	spawns    *generic.Filter1[components.SpawnGhost]
	despawns  *generic.Filter1[components.Despawned]
	spawnID   ecs.ID
	despawnID ecs.ID
	took      []ecs.Entity
	requests  []components.SpawnGhost
}

func newSpawnQueries(w *gw.World) spawnQueries {
	a := w.Arche()
	return spawnQueries{
		spawns:    generic.NewFilter1[components.SpawnGhost](),
		despawns:  generic.NewFilter1[components.Despawned](),
		spawnID:   ecs.ComponentID[components.SpawnGhost](a),
		despawnID: ecs.ComponentID[components.Despawned](a),
	}
}

// collect lists the entities carrying a spawn request, with the requests,
// closing the query before anything changes the world.
func (q *spawnQueries) collect(w *gw.World) {
	q.took, q.requests = q.took[:0], q.requests[:0]
	it := q.spawns.Query(w.Arche())
	for it.Next() {
		q.took = append(q.took, it.Entity())
		q.requests = append(q.requests, *it.Get())
	}
}

// takeSpawns makes the tick's components.SpawnGhost requests ghosts,
// before the tick's state is quantized and sent. A request made while
// replaying (the determinism check's replays) is dropped with its entity:
// the tick's first run made it.
func (s *Server) takeSpawns(w *gw.World) {
	q := &s.spawnQ
	a := w.Arche()
	q.collect(w)
	for i, e := range q.took {
		if w.IsReplaying() {
			a.RemoveEntity(e)
			continue
		}
		r := q.requests[i]
		a.Remove(e, q.spawnID)
		if _, err := s.ghosts.Spawn(e, codec.GhostTypeID(r.Type), r.Owner); err != nil {
			s.stats.SpawnsRefused++
			s.log.Error("ghostwire: a spawn request was refused; its entity is removed", "type", r.Type, "owner", r.Owner, "err", err)
			a.RemoveEntity(e)
			continue
		}
		s.stats.GhostsSpawned++
	}
}

// takeDespawns removes the ghosts marked components.Despawned, first in
// StageHistory: after the tick's state is recorded and the game's
// StageSimulation has seen them (a projectile's splash damage), before
// lag compensation records the tick and the snapshot is sent. A removal
// after the record is a change outside the prediction stages, which the
// determinism check's windows do not reach back across: a rollback could
// not bring the entity back.
func (s *Server) takeDespawns(w *gw.World) {
	q := &s.spawnQ
	a := w.Arche()
	q.took = q.took[:0]
	it := q.despawns.Query(a)
	for it.Next() {
		q.took = append(q.took, it.Entity())
	}
	for _, e := range q.took {
		if s.ghosts.Despawn(e) {
			s.stats.GhostsDespawned++
		}
		a.RemoveEntity(e)
	}
}
