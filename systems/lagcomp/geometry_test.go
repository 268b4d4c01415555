package lagcomp_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

func ray(ox, oy, dx, dy float64) lagcomp.Ray {
	l := math.Hypot(dx, dy)
	return lagcomp.Ray{Origin: lagcomp.Vec{ox, oy, 0}, Dir: lagcomp.Vec{dx / l, dy / l, 0}, Max: 100}
}

func TestRaySphere(t *testing.T) {
	d, ok := lagcomp.RaySphere(ray(0, 0, 1, 0), lagcomp.Vec{5, 0, 0}, 1)
	assert.True(t, ok)
	assert.InDelta(t, 4, d, 1e-12)
	_, ok = lagcomp.RaySphere(ray(0, 0, 1, 0), lagcomp.Vec{5, 1.01, 0}, 1)
	assert.False(t, ok)
	_, ok = lagcomp.RaySphere(ray(0, 0, -1, 0), lagcomp.Vec{5, 0, 0}, 1)
	assert.False(t, ok, "behind the origin")
	d, ok = lagcomp.RaySphere(ray(5, 0.5, 1, 0), lagcomp.Vec{5, 0, 0}, 1)
	assert.True(t, ok)
	assert.Zero(t, d, "origin inside")
	r := ray(0, 0, 1, 0)
	r.Max = 3
	_, ok = lagcomp.RaySphere(r, lagcomp.Vec{5, 0, 0}, 1)
	assert.False(t, ok, "out of range")
}

func TestRayCapsule(t *testing.T) {
	a, b := lagcomp.Vec{5, -1, 0}, lagcomp.Vec{5, 1, 0}
	d, ok := lagcomp.RayCapsule(ray(0, 0.5, 1, 0), a, b, 0.5)
	assert.True(t, ok)
	assert.InDelta(t, 4.5, d, 1e-9, "the cylinder's side")
	d, ok = lagcomp.RayCapsule(ray(5, 5, 0, -1), a, b, 0.5)
	assert.True(t, ok)
	assert.InDelta(t, 3.5, d, 1e-9, "the cap, along the axis")
	_, ok = lagcomp.RayCapsule(ray(0, 1.6, 1, 0), a, b, 0.5)
	assert.False(t, ok, "above the top cap")
	d, ok = lagcomp.RayCapsule(ray(0, 1.3, 1, 0), a, b, 0.5)
	assert.True(t, ok)
	assert.InDelta(t, 5-math.Sqrt(0.25-0.09), d, 1e-9, "the rounded end")
}

func TestRayBoxes(t *testing.T) {
	d, ok := lagcomp.RayAABB(ray(0, 0, 1, 0), lagcomp.Vec{3, -1, -1}, lagcomp.Vec{4, 1, 1})
	assert.True(t, ok)
	assert.InDelta(t, 3, d, 1e-12)
	_, ok = lagcomp.RayAABB(ray(0, 2, 1, 0), lagcomp.Vec{3, -1, -1}, lagcomp.Vec{4, 1, 1})
	assert.False(t, ok)
	// A 2x0.2 box turned 90°: its long side now spans y -1..1.
	d, ok = lagcomp.RayBox(ray(0, 0.9, 1, 0), lagcomp.Vec{5, 0, 0}, lagcomp.Vec{1, 0.1, 1}, math.Pi/2)
	assert.True(t, ok)
	assert.InDelta(t, 4.9, d, 1e-9)
	_, ok = lagcomp.RayBox(ray(0, 0.9, 1, 0), lagcomp.Vec{5, 0, 0}, lagcomp.Vec{1, 0.1, 1}, 0)
	assert.False(t, ok, "unturned it is too thin there")
}

// A capsule is solid like the sphere and the box: a ray starting inside it
// hits at distance 0, also between the end spheres and looking outward.
func TestRayCapsuleFromInside(t *testing.T) {
	a, b := lagcomp.Vec{5, -1, 0}, lagcomp.Vec{5, 1, 0}
	for _, r := range []lagcomp.Ray{
		ray(5.4, 0, 1, 0),    // inside the cylinder, looking away from the axis
		ray(5.45, 0.5, 0, 1), // inside the cylinder, along the axis
		ray(5, 0, -1, 0),     // on the axis
	} {
		d, ok := lagcomp.RayCapsule(r, a, b, 0.5)
		assert.True(t, ok, "origin %v inside the capsule", r.Origin)
		assert.Zero(t, d, "origin %v inside the capsule", r.Origin)
	}
	_, ok := lagcomp.RayCapsule(ray(5.6, 0, 1, 0), a, b, 0.5)
	assert.False(t, ok, "just outside, looking away")
}
