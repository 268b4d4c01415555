package game

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// Two players standing exactly on the same spot (two connections share a
// spawn point every 16) are pushed apart along x by ID order, as far as
// one tick's push allows, like any other overlap.
func TestCollideSeparatesPlayersOnTheSameSpot(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	spawn := generic.NewMap4[components.Ghost, Position, Health, components.Predicted](w.Arche())
	at := SpawnPoint(1)
	assert.Equal(t, at, SpawnPoint(17), "connections 1 and 17 spawn on the same spot")
	var es []ecs.Entity
	for id := components.GhostID(1); id <= 2; id++ {
		es = append(es, spawn.NewWith(&components.Ghost{ID: id}, &at, &Health{HP: MaxHP}, &components.Predicted{}))
	}
	pos := generic.NewMap[Position](w.Arche())
	NewCollideSystem(w).Update(w)
	a, b := *pos.Get(es[0]), *pos.Get(es[1])
	assert.InDelta(t, at.X-PushPerTick, a.X, 1e-6, "the lower ID goes to -x")
	assert.InDelta(t, at.X+PushPerTick, b.X, 1e-6, "the higher ID goes to +x")
	assert.Equal(t, at.Y, a.Y)
	assert.Equal(t, at.Y, b.Y)
}

// allPairsCollide is CollideSystem as it was before it chose candidates: every
// living predicted player tested against every other living player. It is
// the reference the system must match bit for bit, and its benchmark's
// baseline.
type allPairsCollide struct {
	players *generic.Filter3[components.Ghost, Position, Health]
	pos     generic.Map[Position]
	predID  ecs.ID
	all     []body
	push    []pushed
}

func newAllPairsCollide(w *gw.World) *allPairsCollide {
	return &allPairsCollide{
		players: generic.NewFilter3[components.Ghost, Position, Health](),
		pos:     generic.NewMap[Position](w.Arche()),
		predID:  ecs.ComponentID[components.Predicted](w.Arche()),
	}
}

func (s *allPairsCollide) Update(w *gw.World) {
	a := w.Arche()
	s.all = s.all[:0]
	q := s.players.Query(a)
	for q.Next() {
		g, p, h := q.Get()
		if !h.Alive() {
			continue
		}
		s.all = append(s.all, body{id: g.ID, e: q.Entity(), x: p.X, y: p.Y, predicted: a.Has(q.Entity(), s.predID)})
	}
	slices.SortFunc(s.all, func(a, b body) int { return int(a.id) - int(b.id) })
	s.push = s.push[:0]
	const minDist = 2 * Radius
	for i := range s.all {
		me := &s.all[i]
		if !me.predicted {
			continue
		}
		var px, py float32
		for j := range s.all {
			if i == j {
				continue
			}
			o := &s.all[j]
			dx, dy := me.x-o.x, me.y-o.y
			d := length(dx, dy)
			if d >= minDist {
				continue
			}
			n := d
			if d == 0 {
				dx, dy, n = 1, 0, 1
				if me.id < o.id {
					dx = -1
				}
			}
			k := (minDist - d) / 2 / n
			px, py = px+float32(dx*k), py+float32(dy*k)
		}
		if l := length(px, py); l > PushPerTick {
			k := PushPerTick / l
			px, py = float32(px*k), float32(py*k)
		}
		if px != 0 || py != 0 {
			s.push = append(s.push, pushed{e: me.e, dx: px, dy: py})
		}
	}
	lim := HalfSize - Radius
	for _, p := range s.push {
		pp := s.pos.Get(p.e)
		pp.X = max(-lim, min(lim, pp.X+p.dx))
		pp.Y = max(-lim, min(lim, pp.Y+p.dy))
	}
}

// collideScene is a seeded set of players meant to hit collision's edge
// cases: clusters where many overlap, players exactly on top of one
// another, exactly 2·Radius apart or one float32 step either side of it,
// dead ones, unpredicted ones, and some coordinates set to one of extreme
// (NaN, the infinities, or finite ones whose differences overflow).
type collideScene struct {
	ids       []components.GhostID
	at        []Position
	alive     []bool
	predicted []bool
	moving    []bool // has a Velocity: spreads storage over more archetypes, out of ID order
}

func newCollideScene(rng *rand.Rand, n int, extreme []float32) collideScene {
	var sc collideScene
	for _, id := range rng.Perm(3 * n) {
		if len(sc.ids) == n {
			break
		}
		sc.ids = append(sc.ids, components.GhostID(id+1))
	}
	centres := make([]Position, 1+rng.IntN(4))
	for c := range centres {
		centres[c] = Position{X: float32(rng.Float64()*19 - 9.5), Y: float32(rng.Float64()*19 - 9.5)}
	}
	spread := []float64{0.5, 2, 6, 19}[rng.IntN(4)]
	predictAll, predictOne := rng.IntN(3) == 0, rng.IntN(3) == 0
	const minDist = 2 * Radius
	for i := range n {
		var p Position
		switch k := rng.IntN(10); {
		case k < 5 || i == 0:
			c := centres[rng.IntN(len(centres))]
			p = Position{X: c.X + float32((rng.Float64()-0.5)*spread), Y: c.Y + float32((rng.Float64()-0.5)*spread)}
		case k < 7: // on a grid of half the minimum distance
			p = Position{X: float32(rng.IntN(9)-4) / 2, Y: float32(rng.IntN(9)-4) / 2}
		case k < 8: // on top of an earlier one
			p = sc.at[rng.IntN(i)]
		default: // 2·Radius from an earlier one on one axis, or one step either side
			p = sc.at[rng.IntN(i)]
			d := []float32{minDist, math.Nextafter32(minDist, 0), math.Nextafter32(minDist, 2)}[rng.IntN(3)]
			if rng.IntN(2) == 0 {
				d = -d
			}
			if rng.IntN(2) == 0 {
				p.X += d
			} else {
				p.Y += d
			}
		}
		if len(extreme) > 0 && rng.IntN(8) == 0 {
			v := extreme[rng.IntN(len(extreme))]
			if rng.IntN(2) == 0 {
				p.X = v
			} else {
				p.Y = v
			}
		}
		sc.at = append(sc.at, p)
		sc.alive = append(sc.alive, rng.IntN(6) != 0)
		sc.predicted = append(sc.predicted, predictAll || !predictOne && rng.IntN(2) == 0)
		sc.moving = append(sc.moving, rng.IntN(2) == 0)
	}
	if predictOne && n > 0 {
		sc.predicted[rng.IntN(n)] = true
	}
	return sc
}

// build makes a world of the scene, its players stored in scene order.
func (sc collideScene) build() (*gw.World, []ecs.Entity) {
	w := gw.NewWorld(gw.WorldOptions{})
	a := w.Arche()
	ghostID := ecs.ComponentID[components.Ghost](a)
	posID := ecs.ComponentID[Position](a)
	healthID := ecs.ComponentID[Health](a)
	predID := ecs.ComponentID[components.Predicted](a)
	velID := ecs.ComponentID[Velocity](a)
	es := make([]ecs.Entity, len(sc.ids))
	for i := range sc.ids {
		ids := []ecs.ID{ghostID, posID, healthID}
		if sc.predicted[i] {
			ids = append(ids, predID)
		}
		if sc.moving[i] {
			ids = append(ids, velID)
		}
		e := a.NewEntity(ids...)
		(*components.Ghost)(a.Get(e, ghostID)).ID = sc.ids[i]
		*(*Position)(a.Get(e, posID)) = sc.at[i]
		if sc.alive[i] {
			(*Health)(a.Get(e, healthID)).HP = MaxHP
		}
		es[i] = e
	}
	return w, es
}

// The system's candidates change only which pairs it measures: on every
// scene, tick after tick, every position it leaves is bit-identical to the
// one the all-pairs reference leaves. Scenes with all players predicted
// take the sweep, those with one (a client) or a few the scan, and those
// with a NaN or an infinity the scan of everyone.
func TestCollideMatchesAllPairs(t *testing.T) {
	extremes := [][]float32{
		{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))},
		{math.MaxFloat32, -math.MaxFloat32},
		nil, nil,
	}
	moved := 0
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 1))
		sc := newCollideScene(rng, rng.IntN(150), extremes[seed%4])
		want, wantEs := sc.build()
		got, gotEs := sc.build()
		wantPos, gotPos := generic.NewMap[Position](want.Arche()), generic.NewMap[Position](got.Arche())
		ref, sys := newAllPairsCollide(want), NewCollideSystem(got)
		for tick := range 3 {
			ref.Update(want)
			sys.Update(got)
			for i := range sc.ids {
				w, g := *wantPos.Get(wantEs[i]), *gotPos.Get(gotEs[i])
				if math.Float32bits(w.X) != math.Float32bits(g.X) || math.Float32bits(w.Y) != math.Float32bits(g.Y) {
					t.Fatalf("seed %d tick %d ghost %d: at %v, want %v (bits %08x %08x, want %08x %08x)", seed, tick, sc.ids[i], g, w,
						math.Float32bits(g.X), math.Float32bits(g.Y), math.Float32bits(w.X), math.Float32bits(w.Y))
				}
				if tick == 0 && w != sc.at[i] {
					moved++
				}
			}
		}
	}
	assert.Greater(t, moved, 50000, "the scenes are crowded enough that many players are pushed")
}

// Four players stand still in a row, the last one pressed into a pillar
// by its neighbour, as a pile at a shared spawn point left them at the end
// of `go run ./examples/arena -clients 64 -duration 60s` (client 23's
// player third). With nothing moving, each client must predict the
// server's state exactly. Colliding after the movement, the server pushed
// the third against the fourth where the movement had put it, out of the
// pillar (3.75), not where the snapshots left it (3.7578125): the third's
// client mispredicted by one grid step on every snapshot.
func TestStillPileAgainstAPillarConverges(t *testing.T) {
	schema, err := NewSchema()
	require.NoError(t, err)
	row := []Position{{X: 0.7734375}, {X: 1.7695312}, {X: 2.7617188}, {X: 3.7578125}} // on the wire's grid
	require.Less(t, Walls[0].Min[0]-row[3].X, Radius, "the last one overlaps the pillar")
	link := transport.LinkConfig{Latency: 50 * time.Millisecond}
	spawn := func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
		m := generic.NewMap5[Position, Velocity, Facing, Health, Launcher](w.Arche())
		return m.NewWith(&row[conn-1], &Velocity{}, &Facing{}, &Health{HP: MaxHP}, &Launcher{}), schema.Player, nil
	}
	opts := harness.Options{Seed: 1, Game: NewGame(schema, 60, spawn, nil)}
	still := systems.InputFunc(func(*gw.World, gw.Tick) Command { return Command{} })
	for range row {
		opts.Clients = append(opts.Clients, harness.ClientSpec{Link: transport.Conditions{Up: link, Down: link},
			Options: systems.ClientOptions{Input: still}})
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(3 * time.Second)
	for i := range row {
		assert.NoErrorf(t, h.CheckOwnState(i), "client %d", i)
	}
}
