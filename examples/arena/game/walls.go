package game

import "github.com/ghostwire/ghostwire/systems/lagcomp"

// Box is an axis-aligned box of static geometry.
type Box struct{ Min, Max [3]float32 }

// Walls are the arena's static geometry: four pillars that block players
// and shots alike.
var Walls = []Box{
	{Min: [3]float32{4.25, -0.75, -1}, Max: [3]float32{5.75, 0.75, 1}},
	{Min: [3]float32{-5.75, -0.75, -1}, Max: [3]float32{-4.25, 0.75, 1}},
	{Min: [3]float32{-0.75, 4.25, -1}, Max: [3]float32{0.75, 5.75, 1}},
	{Min: [3]float32{-0.75, -5.75, -1}, Max: [3]float32{0.75, -4.25, 1}},
}

// pushOutOfWalls moves a disc of Radius out of every pillar it overlaps
// and stops its velocity into the pillar.
func pushOutOfWalls(p *Position, v *Velocity) { collideWalls(p, v, Radius, 0) }

// collideWalls moves a disc of radius r out of every pillar it overlaps
// and, when it moves into one, reflects its velocity there, keeping the
// share bounce of it (0 stops it: the players; the ball bounces), then
// does the same at the arena's edge when bounce is not 0 (the players'
// step stops them there itself).
func collideWalls(p *Position, v *Velocity, r, bounce float32) {
	for i := range Walls {
		w := &Walls[i]
		cx := max(w.Min[0], min(w.Max[0], p.X))
		cy := max(w.Min[1], min(w.Max[1], p.Y))
		dx, dy := p.X-cx, p.Y-cy
		d := length(dx, dy)
		if d >= r {
			continue
		}
		if d == 0 { // centre inside: leave by the nearest side
			left, right := p.X-w.Min[0], w.Max[0]-p.X
			down, up := p.Y-w.Min[1], w.Max[1]-p.Y
			switch min(left, right, down, up) {
			case left:
				dx, dy, cx, cy = -1, 0, w.Min[0], p.Y
			case right:
				dx, dy, cx, cy = 1, 0, w.Max[0], p.Y
			case down:
				dx, dy, cx, cy = 0, -1, p.X, w.Min[1]
			default:
				dx, dy, cx, cy = 0, 1, p.X, w.Max[1]
			}
			d = 1
		}
		nx, ny := dx/d, dy/d
		p.X, p.Y = cx+float32(nx*r), cy+float32(ny*r)
		if into := float32(v.X*nx) + float32(v.Y*ny); into < 0 { // rounded: no fused multiply-add
			if bounce != 0 {
				into = float32(into * (1 + bounce))
			}
			v.X, v.Y = v.X-float32(into*nx), v.Y-float32(into*ny)
		}
	}
	if bounce == 0 {
		return
	}
	lim := HalfSize - r
	edge := func(c, vc *float32) {
		switch {
		case *c > lim:
			*c = lim
			if *vc > 0 {
				*vc = -float32(*vc * bounce)
			}
		case *c < -lim:
			*c = -lim
			if *vc < 0 {
				*vc = -float32(*vc * bounce)
			}
		}
	}
	edge(&p.X, &v.X)
	edge(&p.Y, &v.Y)
}

// LineOfSight reports whether no pillar lies between (ax, ay) and (bx, by),
// by the test lag compensation judges shots with.
func LineOfSight(ax, ay, bx, by float32) bool {
	return lagcomp.LineOfSight(wallBoxes, [3]float32{ax, ay, 0}, [3]float32{bx, by, 0})
}

// wallBoxes is Walls as lag compensation takes them.
var wallBoxes = wallCorners()

// wallCorners returns Walls as lag compensation takes them: min and max
// corners.
func wallCorners() [][2][3]float32 {
	cs := make([][2][3]float32, len(Walls))
	for i, w := range Walls {
		cs[i] = [2][3]float32{w.Min, w.Max}
	}
	return cs
}
