package raycast_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/internal/raycast"
)

func ray(ox, oy, dx, dy float64) raycast.Ray {
	l := math.Hypot(dx, dy)
	return raycast.Ray{Origin: raycast.Vec{ox, oy, 0}, Dir: raycast.Vec{dx / l, dy / l, 0}, Max: 100}
}

func TestSphere(t *testing.T) {
	d, ok := raycast.Sphere(ray(0, 0, 1, 0), raycast.Vec{5, 0, 0}, 1)
	assert.True(t, ok)
	assert.InDelta(t, 4, d, 1e-12)
	_, ok = raycast.Sphere(ray(0, 0, 1, 0), raycast.Vec{5, 1.01, 0}, 1)
	assert.False(t, ok)
	_, ok = raycast.Sphere(ray(0, 0, -1, 0), raycast.Vec{5, 0, 0}, 1)
	assert.False(t, ok, "behind the origin")
	d, ok = raycast.Sphere(ray(5, 0.5, 1, 0), raycast.Vec{5, 0, 0}, 1)
	assert.True(t, ok)
	assert.Zero(t, d, "origin inside")
	r := ray(0, 0, 1, 0)
	r.Max = 3
	_, ok = raycast.Sphere(r, raycast.Vec{5, 0, 0}, 1)
	assert.False(t, ok, "out of range")
}

func TestCapsule(t *testing.T) {
	a, b := raycast.Vec{5, -1, 0}, raycast.Vec{5, 1, 0}
	d, ok := raycast.Capsule(ray(0, 0.5, 1, 0), a, b, 0.5)
	assert.True(t, ok)
	assert.InDelta(t, 4.5, d, 1e-9, "the cylinder's side")
	d, ok = raycast.Capsule(ray(5, 5, 0, -1), a, b, 0.5)
	assert.True(t, ok)
	assert.InDelta(t, 3.5, d, 1e-9, "the cap, along the axis")
	_, ok = raycast.Capsule(ray(0, 1.6, 1, 0), a, b, 0.5)
	assert.False(t, ok, "above the top cap")
	d, ok = raycast.Capsule(ray(0, 1.3, 1, 0), a, b, 0.5)
	assert.True(t, ok)
	assert.InDelta(t, 5-math.Sqrt(0.25-0.09), d, 1e-9, "the rounded end")
}

func TestBoxes(t *testing.T) {
	d, ok := raycast.AABB(ray(0, 0, 1, 0), raycast.Vec{3, -1, -1}, raycast.Vec{4, 1, 1})
	assert.True(t, ok)
	assert.InDelta(t, 3, d, 1e-12)
	_, ok = raycast.AABB(ray(0, 2, 1, 0), raycast.Vec{3, -1, -1}, raycast.Vec{4, 1, 1})
	assert.False(t, ok)
	// A 2x0.2 box turned 90°: its long side now spans y -1..1.
	d, ok = raycast.Box(ray(0, 0.9, 1, 0), raycast.Vec{5, 0, 0}, raycast.Vec{1, 0.1, 1}, math.Pi/2)
	assert.True(t, ok)
	assert.InDelta(t, 4.9, d, 1e-9)
	_, ok = raycast.Box(ray(0, 0.9, 1, 0), raycast.Vec{5, 0, 0}, raycast.Vec{1, 0.1, 1}, 0)
	assert.False(t, ok, "unturned it is too thin there")
}

// A capsule is solid like the sphere and the box: a ray starting inside it
// hits at distance 0, also between the end spheres and looking outward.
func TestCapsuleFromInside(t *testing.T) {
	a, b := raycast.Vec{5, -1, 0}, raycast.Vec{5, 1, 0}
	for _, r := range []raycast.Ray{
		ray(5.4, 0, 1, 0),    // inside the cylinder, looking away from the axis
		ray(5.45, 0.5, 0, 1), // inside the cylinder, along the axis
		ray(5, 0, -1, 0),     // on the axis
	} {
		d, ok := raycast.Capsule(r, a, b, 0.5)
		assert.True(t, ok, "origin %v inside the capsule", r.Origin)
		assert.Zero(t, d, "origin %v inside the capsule", r.Origin)
	}
	_, ok := raycast.Capsule(ray(5.6, 0, 1, 0), a, b, 0.5)
	assert.False(t, ok, "just outside, looking away")
}
