// Package raycast is the ray geometry of lag compensation: a ray against
// spheres, capsules, axis-aligned and turned boxes, in float64 world space.
package raycast

import "math"

// Vec is a point or direction in world space.
type Vec = [3]float64

// Sub returns a − b.
func Sub(a, b Vec) Vec { return Vec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

// Add returns a + b.
func Add(a, b Vec) Vec { return Vec{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

// Scale returns a·k.
func Scale(a Vec, k float64) Vec { return Vec{a[0] * k, a[1] * k, a[2] * k} }

// Dot returns the dot product of a and b.
func Dot(a, b Vec) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// Ray is a half-line from Origin along the unit vector Dir, up to Max.
type Ray struct {
	Origin, Dir Vec
	Max         float64
}

// Sphere returns the distance along r to the sphere (c, radius): 0 when
// the origin is inside, ok false when the ray misses within r.Max.
func Sphere(r Ray, c Vec, radius float64) (float64, bool) {
	oc := Sub(r.Origin, c)
	b := Dot(oc, r.Dir)
	cc := Dot(oc, oc) - radius*radius
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

// Capsule returns the distance along r to the capsule of radius around
// the segment a–b: 0 when the origin is inside.
func Capsule(r Ray, a, b Vec, radius float64) (float64, bool) {
	// Inside the capsule (not only inside one of its end spheres): the
	// origin is within radius of the segment.
	{
		ab, ao := Sub(b, a), Sub(r.Origin, a)
		h := 0.0
		if l := Dot(ab, ab); l > 0 {
			h = min(max(Dot(ao, ab)/l, 0), 1)
		}
		if d := Sub(ao, Scale(ab, h)); Dot(d, d) <= radius*radius {
			return 0, true
		}
	}
	best, hit := math.Inf(1), false
	if t, ok := Sphere(r, a, radius); ok {
		best, hit = t, true
	}
	if t, ok := Sphere(r, b, radius); ok && t < best {
		best, hit = t, true
	}
	ba := Sub(b, a)
	oa := Sub(r.Origin, a)
	baba, bard, baoa := Dot(ba, ba), Dot(ba, r.Dir), Dot(ba, oa)
	rdoa, oaoa := Dot(r.Dir, oa), Dot(oa, oa)
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

// AABB returns the distance along r to the axis-aligned box [lo, hi]
// (the slab method): 0 when the origin is inside.
func AABB(r Ray, lo, hi Vec) (float64, bool) {
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

// Box returns the distance along r to a box centred on c with half
// extents half, turned by yaw about the Z axis.
func Box(r Ray, c, half Vec, yaw float64) (float64, bool) {
	s, co := math.Sincos(-yaw)
	o := Sub(r.Origin, c)
	local := Ray{
		Origin: Vec{o[0]*co - o[1]*s, o[0]*s + o[1]*co, o[2]},
		Dir:    Vec{r.Dir[0]*co - r.Dir[1]*s, r.Dir[0]*s + r.Dir[1]*co, r.Dir[2]},
		Max:    r.Max,
	}
	return AABB(local, Scale(half, -1), half)
}

// Rotate turns v about the Z axis by the angle whose sine and cosine are
// sin and cos.
func Rotate(v [3]float32, sin, cos float64) Vec {
	x, y := float64(v[0]), float64(v[1])
	return Vec{x*cos - y*sin, x*sin + y*cos, float64(v[2])}
}
