package game

import (
	"math"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

func TestCratePointsCoverTheArenaOnTheGrid(t *testing.T) {
	ps := CratePoints(500)
	require.Len(t, ps, 500)
	seen := map[Position]bool{}
	lim := HalfSize - Radius
	for i, p := range ps {
		assert.Falsef(t, seen[p], "crate %d at %v twice", i, p)
		seen[p] = true
		assert.Equalf(t, coord.Quantize(p.X), p.X, "crate %d x on the grid", i)
		assert.Equalf(t, coord.Quantize(p.Y), p.Y, "crate %d y on the grid", i)
		assert.LessOrEqualf(t, max(p.X, -p.X, p.Y, -p.Y), lim+1.0/256, "crate %d inside the arena", i)
		q := p
		pushOutOfWalls(&q, &Velocity{})
		assert.InDeltaf(t, p.X, q.X, 1.0/256, "crate %d out of the pillars", i)
		assert.InDeltaf(t, p.Y, q.Y, 1.0/256, "crate %d out of the pillars", i)
	}
	assert.Equal(t, ps, CratePoints(500), "deterministic")
}

// A player overlapping a crate pushes it straight away to touching
// distance; crates out of reach, crates of other worlds' simulation (not
// predicted) and dead players do not move.
func TestShoveMovesOnlyTouchedPredictedCrates(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	player := generic.NewMap3[components.Ghost, Position, Health](w.Arche())
	player.NewWith(&components.Ghost{ID: 1}, &Position{X: 0, Y: 0}, &Health{HP: MaxHP})
	player.NewWith(&components.Ghost{ID: 2}, &Position{X: -7, Y: 7}, &Health{HP: 0})
	crate := generic.NewMap3[Position, Crate, components.Predicted](w.Arche())
	touched := crate.NewWith(&Position{X: 0.6, Y: 0}, &Crate{}, &components.Predicted{})
	far := crate.NewWith(&Position{X: 3, Y: 3}, &Crate{}, &components.Predicted{})
	underDead := crate.NewWith(&Position{X: -7, Y: 7}, &Crate{}, &components.Predicted{})
	plain := generic.NewMap2[Position, Crate](w.Arche())
	shown := plain.NewWith(&Position{X: 0, Y: 0.5}, &Crate{})

	NewShoveSystem().Update(w)
	pos := generic.NewMap[Position](w.Arche())
	at := func(e ecs.Entity) Position { return *pos.Get(e) }
	assert.InDelta(t, 2*Radius, at(touched).X, 1e-6, "pushed out to touching")
	assert.Equal(t, float32(0), at(touched).Y)
	assert.Equal(t, Position{X: 3, Y: 3}, at(far))
	assert.Equal(t, Position{X: -7, Y: 7}, at(underDead), "the dead shove nothing")
	assert.Equal(t, Position{X: 0, Y: 0.5}, at(shown), "an interpolated crate is the server's to move")
}

// Crates in a match: bots run into some and shove them on the server;
// once the bots stand still every client holds every crate where the
// server has it, and the players' predictions converge as without crates.
func TestCratesAreShovedAndReachEveryClient(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Crates = 3, 20*time.Second, 60
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	r := m.Run(nil)
	require.True(t, r.Converged, "predictions converge")
	assert.Equal(t, 60, r.Config.Crates)
	require.NotNil(t, r.Wall.ServerTickUS)
	assert.Positive(t, r.Wall.ServerTickUS.Mean)
	assert.GreaterOrEqual(t, r.Wall.ServerTickUS.P99, r.Wall.ServerTickUS.Mean*0.5)

	h := m.Harness
	server := generic.NewFilter2[components.Ghost, Position]().With(generic.T[Crate]())
	start := CratePoints(cfg.Crates)
	moved, crates := 0, 0
	// The ball is the first ghost, spawned when the server starts; the
	// crates follow in the order of their points.
	const first = 2
	q := server.Query(h.Server.World().Arche())
	for q.Next() {
		g, p := q.Get()
		if *p != start[int(g.ID)-first] {
			moved++
		}
		crates++
		for i, c := range h.Clients {
			e, ok := c.Ghosts().Entity(g.ID)
			if assert.Truef(t, ok, "client %d lacks crate %d", i, g.ID) {
				shownPos := generic.NewMap[Position](c.World().Arche())
				assert.Equalf(t, *p, *shownPos.Get(e), "client %d crate %d", i, g.ID)
			}
		}
	}
	assert.Equal(t, cfg.Crates, crates)
	assert.Positive(t, moved, "bots shoved crates")
}

// -view-radius: each client holds exactly the crates within the radius of
// its player on the server (once the match has settled: the scope is
// asked about every ghost once per 8 snapshots), each at the server's
// state; the report gives every client's staleness, and the relevant set
// is smaller than the arena's.
func TestViewRadiusSendsOnlyTheCratesNearby(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Crates, cfg.ViewRadius = 3, 10*time.Second, 200, 6
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	r := m.Run(nil)
	require.True(t, r.Converged, "predictions converge")
	assert.Equal(t, 6.0, r.Config.ViewRadius)
	h := m.Harness
	sa := h.Server.World().Arche()
	posOf := generic.NewMap[Position](sa)
	crates := generic.NewFilter2[components.Ghost, Position]().With(generic.T[Crate]())
	for i, c := range h.Clients {
		require.NotNil(t, r.Clients[i].MaxGhostStaleness, "client %d: staleness reported", i)
		assert.LessOrEqual(t, *r.Clients[i].MaxGhostStaleness, 8, "client %d", i)
		conn, _ := c.Conn()
		me := m.viewers[conn]
		p := *posOf.Get(me)
		near, held := 0, 0
		q := crates.Query(sa)
		for q.Next() {
			g, cp := q.Get()
			dx, dy := cp.X-p.X, cp.Y-p.Y
			in := dx*dx+dy*dy <= cfg.ViewRadius*cfg.ViewRadius
			e, ok := c.Ghosts().Entity(g.ID)
			if ok {
				held++
				shown := generic.NewMap[Position](c.World().Arche())
				assert.Equalf(t, *cp, *shown.Get(e), "client %d crate %d", i, g.ID)
			}
			if in {
				near++
				assert.Truef(t, ok, "client %d lacks crate %d, %.1f from its player", i, g.ID, math.Sqrt(float64(dx*dx+dy*dy)))
			} else {
				assert.Falsef(t, ok, "client %d holds crate %d, %.1f from its player", i, g.ID, math.Sqrt(float64(dx*dx+dy*dy)))
			}
		}
		t.Logf("client %d: %d crates in its radius, %d held, of %d", i, near, held, cfg.Crates)
		assert.Less(t, held, cfg.Crates/2, "client %d: the radius keeps most crates away", i)
	}
	assert.Positive(t, h.Server.Stats().ScopeExits, "crates left scopes as players ran")
}
