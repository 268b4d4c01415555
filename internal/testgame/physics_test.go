package testgame

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHandbrakeStopsAndCounts(t *testing.T) {
	b, c := Body{Speed: 10}, Counters{Handbrakes: 65535}
	Step(&b, &c, &Drive{Handbrake: 1})
	assert.Zero(t, b.Speed)
	assert.Zero(t, c.Handbrakes, "the counter wraps")
	Step(&b, &c, &Drive{})
	assert.Zero(t, c.Handbrakes, "a press counts on its tick only")
}

func TestCarLeftAloneStops(t *testing.T) {
	b, c := Body{Speed: MaxSpeed, Heading: 1}, Counters{}
	for range 2*TickRate + 1 {
		Step(&b, &c, &Drive{Steer: 0})
	}
	assert.Zero(t, b.Speed, "coasting stops a car after two seconds")
	x, y := b.X, b.Y
	Step(&b, &c, &Drive{Steer: 1})
	assert.Equal(t, Body{X: x, Y: y, Heading: 1}, b, "a standing car neither moves nor turns")
}

func TestCarWrapsAtTheEdge(t *testing.T) {
	b, c := Body{X: HalfSize - 0.01, Speed: MaxSpeed}, Counters{}
	Step(&b, &c, &Drive{Throttle: 1})
	assert.Less(t, b.X, -HalfSize+1)
	assert.GreaterOrEqual(t, b.X, -HalfSize)
}
