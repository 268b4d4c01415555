package lagcomp

import "math"

// Vec is a point or direction in world space.
type Vec = [3]float64

func sub(a, b Vec) Vec           { return Vec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func add(a, b Vec) Vec           { return Vec{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func scale(a Vec, k float64) Vec { return Vec{a[0] * k, a[1] * k, a[2] * k} }
func dot(a, b Vec) float64       { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// Ray is a half-line from Origin along the unit vector Dir, up to Max.
type Ray struct {
	Origin, Dir Vec
	Max         float64
}

// At returns the point at distance t.
func (r Ray) At(t float64) Vec { return add(r.Origin, scale(r.Dir, t)) }

// Box is an axis-aligned box of static geometry (a wall).
type Box struct{ Min, Max [3]float32 }

// RaySphere returns the distance along r to the sphere (c, radius): 0 when
// the origin is inside, ok false when the ray misses within r.Max.
func RaySphere(r Ray, c Vec, radius float64) (float64, bool) {
	oc := sub(r.Origin, c)
	b := dot(oc, r.Dir)
	cc := dot(oc, oc) - radius*radius
	if cc <= 0 {
		return 0, true
	}
	h := b*b - cc
	if b > 0 || h < 0 {
		return 0, false
	}
	t := -b - math.Sqrt(h)
	return t, t <= r.Max
}

// RayCapsule returns the distance along r to the capsule of radius around
// the segment a–b: 0 when the origin is inside.
func RayCapsule(r Ray, a, b Vec, radius float64) (float64, bool) {
	// Inside the capsule (not only inside one of its end spheres): the
	// origin is within radius of the segment.
	{
		ab, ao := sub(b, a), sub(r.Origin, a)
		h := 0.0
		if l := dot(ab, ab); l > 0 {
			h = min(max(dot(ao, ab)/l, 0), 1)
		}
		if d := sub(ao, scale(ab, h)); dot(d, d) <= radius*radius {
			return 0, true
		}
	}
	best, hit := math.Inf(1), false
	if t, ok := RaySphere(r, a, radius); ok {
		best, hit = t, true
	}
	if t, ok := RaySphere(r, b, radius); ok && t < best {
		best, hit = t, true
	}
	ba := sub(b, a)
	oa := sub(r.Origin, a)
	baba, bard, baoa := dot(ba, ba), dot(ba, r.Dir), dot(ba, oa)
	rdoa, oaoa := dot(r.Dir, oa), dot(oa, oa)
	k2 := baba - bard*bard
	if k2 > 1e-12 {
		k1 := baba*rdoa - baoa*bard
		k0 := baba*oaoa - baoa*baoa - radius*radius*baba
		if h := k1*k1 - k2*k0; h >= 0 {
			t := (-k1 - math.Sqrt(h)) / k2
			if y := baoa + t*bard; t >= 0 && y > 0 && y < baba && t < best && t <= r.Max {
				best, hit = t, true
			}
		}
	}
	return best, hit
}

// RayAABB returns the distance along r to the axis-aligned box [lo, hi]
// (the slab method): 0 when the origin is inside.
func RayAABB(r Ray, lo, hi Vec) (float64, bool) {
	tmin, tmax := 0.0, r.Max
	for i := 0; i < 3; i++ {
		if math.Abs(r.Dir[i]) < 1e-12 {
			if r.Origin[i] < lo[i] || r.Origin[i] > hi[i] {
				return 0, false
			}
			continue
		}
		inv := 1 / r.Dir[i]
		t1, t2 := (lo[i]-r.Origin[i])*inv, (hi[i]-r.Origin[i])*inv
		if t1 > t2 {
			t1, t2 = t2, t1
		}
		tmin, tmax = math.Max(tmin, t1), math.Min(tmax, t2)
		if tmin > tmax {
			return 0, false
		}
	}
	return tmin, true
}

// RayBox returns the distance along r to a box centred on c with half
// extents half, turned by yaw about the Z axis.
func RayBox(r Ray, c, half Vec, yaw float64) (float64, bool) {
	s, co := math.Sincos(-yaw)
	o := sub(r.Origin, c)
	local := Ray{
		Origin: Vec{o[0]*co - o[1]*s, o[0]*s + o[1]*co, o[2]},
		Dir:    Vec{r.Dir[0]*co - r.Dir[1]*s, r.Dir[0]*s + r.Dir[1]*co, r.Dir[2]},
		Max:    r.Max,
	}
	return RayAABB(local, scale(half, -1), half)
}

// rotate turns v by yaw about the Z axis.
func rotate(v [3]float32, sin, cos float64) Vec {
	x, y := float64(v[0]), float64(v[1])
	return Vec{x*cos - y*sin, x*sin + y*cos, float64(v[2])}
}
