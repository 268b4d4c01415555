package lagcomp

import (
	"math"

	"github.com/ghostwire/ghostwire/internal/raycast"
)

// gridMin is the fewest entities a shot walks its tick's grid for: with
// fewer, it tests every reach. A walk costs less than 16 tests
// (BenchmarkShotBroadphase), but about one grid is built a recorded tick:
// at 16 players the arena's server ran 0.27 M instructions more over 600
// ticks with the grid (0.08 %), at 64 players 19 M fewer (1 %).
const gridMin = 24

// grid bins the entities recorded at a tick by the x and y of their
// positions into square cells, so that a shot tests the reaches of the
// entities in the cells its ray passes within a reach of, plus the few the
// grid leaves to every shot, rather than every entity's: a sphere the ray
// passes through has its centre within its radius of the ray, in x and y
// too. The first shot that walks it builds it, in three passes over the
// entities; it has at most about three cells per entity. Recording the
// tick again discards it unless every position and reach is unchanged
// (see recordReaches).
type grid struct {
	built bool
	// x0, y0 and x1, y1 are the least and greatest x and y of the binned
	// positions; cell (i, j) starts at x0 + i·side, y0 + j·side.
	x0, y0, x1, y1 float64
	// side is a cell's side, and the longest radius an entity is walked
	// with: a shot walks the cells within the longest such radius of its
	// ray, so one long radius would widen every walk; longer ones are in
	// the far lists.
	side, inv  float64 // inv is 1/side
	cols, rows int
	// mag is the largest magnitude of a binned position's coordinates,
	// which bounds the rounding of the reaches' test (see walk).
	mag float64
	// start and ents are the binned rows by cell, in row then column
	// order: cell k holds ents[start[k]:start[k+1]].
	start, ents []int32
	// modes are what depends on which radius a shot tests: the reach
	// (unswept) or the sweep.
	modes [2]gridMode
}

// gridMode is what a shot walking a grid needs for one radius (reach or
// sweep): how far the binned entities reach, and which entities every
// shot tests since the grid does not bound them.
type gridMode struct {
	built bool
	// pad is the longest radius of a binned entity that is at most the
	// grid's side.
	pad float64
	// far lists, by row, the entities with no finite position or whose
	// radius is not at most the side (NaN and teleports included).
	far []int32
}

// radius is the radius a shot tests a's reach with (see mayHit).
func (a *reach) radius(swept bool) float32 {
	if swept {
		return a.sweep
	}
	return a.r
}

// finite32 reports whether every coordinate of p is finite.
func finite32(p *[3]float32) bool { return p[0]-p[0] == 0 && p[1]-p[1] == 0 && p[2]-p[2] == 0 }

// finite64 reports whether every coordinate of v is finite.
func finite64(v *raycast.Vec) bool { return v[0]-v[0] == 0 && v[1]-v[1] == 0 && v[2]-v[2] == 0 }

// cellOf returns the cell, in 0..n-1, of coordinate v on an axis whose
// cells start at lo. It is monotonic in v, so the cells of a range's ends
// bound the cells of every coordinate within it, rounding included.
func (g *grid) cellOf(v, lo float64, n int) int {
	f := (v - lo) * g.inv
	if !(f >= 0) {
		return 0
	}
	if f >= float64(n) {
		return n - 1
	}
	return int(f)
}

// clip returns the intersection of the intervals [t0, t1] and the one
// between ta and tb, in either order; empty when its start is past its
// end. Plain comparisons, not min and max: every value is a number.
func clip(t0, t1, ta, tb float64) (float64, float64) {
	if ta > tb {
		ta, tb = tb, ta
	}
	if ta > t0 {
		t0 = ta
	}
	if tb < t1 {
		t1 = tb
	}
	return t0, t1
}

// build bins rows, the reaches of a tick, by position. A side from the
// positions' spread gives about one cell per entity; it doubles (up to
// eight times) while more than an eighth of the entities reach farther
// than it, so that large entities do not all fall to the far lists.
// cells is scratch, one per row. Plain comparisons, not min and max: the
// binned coordinates are numbers, and build runs once per recorded tick
// shots view.
func (g *grid) build(rows []reach, cells *[]int32) {
	g.built, g.modes[0].built, g.modes[1].built = true, false, false
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	zm, rmax, n := 0.0, 0.0, 0
	for i := range rows {
		a := &rows[i]
		if !finite32(&a.pos) {
			continue
		}
		x, y, z := float64(a.pos[0]), float64(a.pos[1]), math.Abs(float64(a.pos[2]))
		if x < x0 {
			x0 = x
		}
		if x > x1 {
			x1 = x
		}
		if y < y0 {
			y0 = y
		}
		if y > y1 {
			y1 = y
		}
		if z > zm {
			zm = z
		}
		if r := float64(a.r); !(r <= rmax) {
			rmax = r // NaN sticks: the doubling below counts
		}
		n++
	}
	g.x0, g.y0, g.x1, g.y1 = x0, y0, x1, y1
	g.mag = max(-x0, x1, -y0, y1, zm)
	g.ents = g.ents[:0]
	if n == 0 {
		g.cols, g.rows, g.side = 0, 0, 0
		return
	}
	w, h := x1-x0, y1-y0
	// At least the spread over n, so neither axis has more than n+1
	// cells, and the cells number at most 3n+1.
	side := max(math.Sqrt(w*h/float64(n)), max(w, h)/float64(n))
	if !(side > 0) {
		side = 1 // every position on one point: one cell whatever its side
	}
	for k := 0; k < 8 && !(rmax <= side); k++ {
		longer := 0
		for i := range rows {
			if finite32(&rows[i].pos) && !(float64(rows[i].r) <= side) {
				longer++
			}
		}
		if 8*longer <= n {
			break
		}
		side *= 2
	}
	g.side, g.inv = side, 1/side
	g.cols, g.rows = g.cellOf(x1, x0, math.MaxInt)+1, g.cellOf(y1, y0, math.MaxInt)+1
	nc := g.cols * g.rows
	if cap(g.start) < nc+1 { // room for the most cells n entities make: no new high at every spread
		g.start = make([]int32, nc+1, max(nc+1, 3*n+2))
	}
	g.start = g.start[:nc+1]
	clear(g.start)
	if cap(*cells) < len(rows) {
		*cells = make([]int32, len(rows))
	}
	cs := (*cells)[:len(rows)]
	inv := g.inv
	for i := range rows {
		p := &rows[i].pos
		cs[i] = -1
		if !finite32(p) {
			continue
		}
		// cellOf without its bounds: a binned coordinate lies between
		// the least and the greatest, whose cells are the first and the
		// last.
		k := int((float64(p[1])-y0)*inv)*g.cols + int((float64(p[0])-x0)*inv)
		cs[i] = int32(k)
		g.start[k]++
	}
	// Counts to ends, then each row placed backwards, which turns each
	// end into its cell's start and keeps each cell's rows ascending.
	for k := 1; k < nc; k++ {
		g.start[k] += g.start[k-1]
	}
	g.start[nc] = int32(n)
	if cap(g.ents) < n {
		g.ents = make([]int32, n, len(rows))
	}
	g.ents = g.ents[:n]
	for i := len(rows) - 1; i >= 0; i-- {
		if k := cs[i]; k >= 0 {
			g.start[k]--
			g.ents[g.start[k]] = int32(i)
		}
	}
}

// mode returns the grid's mode for the reach (swept false) or the sweep,
// computing it in one pass over rows the first time.
func (g *grid) mode(rows []reach, swept bool) *gridMode {
	m := &g.modes[0]
	if swept {
		m = &g.modes[1]
	}
	if m.built {
		return m
	}
	m.built, m.pad, m.far = true, 0, m.far[:0]
	if cap(m.far) < len(rows) { // room for every entity: the far ones grow to a new high in no later tick
		m.far = make([]int32, 0, len(rows))
	}
	for i := range rows {
		a := &rows[i]
		r := float64(a.radius(swept))
		if !finite32(&a.pos) || !(r <= g.side) {
			m.far = append(m.far, int32(i))
		} else if r > m.pad {
			m.pad = r
		}
	}
	return m
}

// walk appends to c.near the entities recorded in slot that ray may hit
// (mayHit), unordered, testing the reaches of the entities binned in the
// cells the ray passes within the mode's pad of, up to its range, and of
// the mode's far list. It builds the slot's grid and mode if need be. It
// returns false, having appended nothing, for a ray it cannot walk: one
// not finite, or of infinite range with no finite end in the grid's
// bounds. Its cost is a few dozen instructions a row of cells the ray
// crosses, a cross product an entity in the cells walked, and a test for
// those within pad of the ray's line and the far ones.
//
// The test's rounding can pass a sphere whose centre lies a hair beyond
// its radius from the ray, far less than a millionth of the coordinates'
// magnitude (TestGridKeepsWhatTheTestsRoundingPasses); the pad's margin,
// 1e-5 of it, keeps such an entity's cell walked and its cross product
// within bounds, so the entities that pass are exactly those testing
// every reach would pass.
func (c *Compensator) walk(slot *tickReaches, ray *raycast.Ray, swept bool) bool {
	o, d := &ray.Origin, &ray.Dir
	if !finite64(o) || !finite64(d) {
		return false
	}
	g := &slot.grid
	if !g.built {
		g.build(slot.rows, &c.cells)
	}
	m := g.mode(slot.rows, swept)
	rows := slot.rows
	tested := len(m.far)
	if g.cols > 0 {
		mag := g.mag + math.Abs(o[0]) + math.Abs(o[1]) + math.Abs(o[2]) // bounds every coordinate the test subtracts
		pad := m.pad + 1e-5*(1+mag+m.pad)
		// The part of the ray in the grid's bounds widened by pad.
		t0, t1 := 0.0, ray.Max
		lo, hi := [2]float64{g.x0 - pad, g.y0 - pad}, [2]float64{g.x1 + pad, g.y1 + pad}
		for k := range 2 {
			if d[k] == 0 {
				if o[k] < lo[k] || o[k] > hi[k] {
					t1 = -1
				}
				continue
			}
			ta, tb := (lo[k]-o[k])/d[k], (hi[k]-o[k])/d[k]
			t0, t1 = clip(t0, t1, ta, tb)
		}
		if math.IsInf(t1, 1) {
			return false
		}
		if t0 <= t1 {
			tested += c.walkCells(g, rows, ray, swept, t0, t1, pad)
		}
	}
	for _, i := range m.far {
		if t, ok := mayHit(ray, &rows[i], swept); ok {
			c.near = append(c.near, nearEntity{row: i, near: t})
		}
	}
	c.stats.tested += uint64(tested)
	return true
}

// walkCells tests the binned entities of the cells within pad of the
// ray's points from t0 to t1 (see walk), row of cells by row: in each, the
// part of the ray within pad of the row's y bounds gives the columns. An
// entity whose position lies farther than pad from the ray's line in x
// and y is passed over without its test: a cross product, where the test
// costs a dozen. It returns how many entities it tested.
func (c *Compensator) walkCells(g *grid, rows []reach, ray *raycast.Ray, swept bool, t0, t1, pad float64) int {
	o, d := &ray.Origin, &ray.Dir
	// |d × (p−o)| is the distance from the line times |d| in x and y,
	// rounded far less than pad's margin for either.
	line := pad * math.Sqrt(d[0]*d[0]+d[1]*d[1])
	ya, yb := o[1]+t0*d[1], o[1]+t1*d[1]
	if ya > yb {
		ya, yb = yb, ya
	}
	j0, j1 := g.cellOf(ya-pad, g.y0, g.rows), g.cellOf(yb+pad, g.y0, g.rows)
	inv := 1 / d[1]
	tested := 0
	for j := j0; j <= j1; j++ {
		ta, tb := t0, t1
		if d[1] != 0 {
			b0 := g.y0 + float64(j)*g.side - pad
			if ta, tb = clip(ta, tb, (b0-o[1])*inv, (b0+g.side+2*pad-o[1])*inv); ta > tb {
				continue
			}
		}
		xa, xb := o[0]+ta*d[0], o[0]+tb*d[0]
		if xa > xb {
			xa, xb = xb, xa
		}
		base := j * g.cols
		for _, i := range g.ents[g.start[base+g.cellOf(xa-pad, g.x0, g.cols)]:g.start[base+g.cellOf(xb+pad, g.x0, g.cols)+1]] {
			a := &rows[i]
			if x := d[0]*(float64(a.pos[1])-o[1]) - d[1]*(float64(a.pos[0])-o[0]); x > line || -x > line {
				continue
			}
			if !(float64(a.radius(swept)) <= g.side) {
				continue // the far list tests it
			}
			tested++
			if t, ok := mayHit(ray, a, swept); ok {
				c.near = append(c.near, nearEntity{row: i, near: t})
			}
		}
	}
	return tested
}
