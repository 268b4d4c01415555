package testgame

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

func TestValidateDriveClampsOntoTheGrid(t *testing.T) {
	for _, tc := range []struct {
		in, want Drive
		clamped  bool
	}{
		{Drive{Steer: 0.5, Throttle: -1, Brake: 1}, Drive{Steer: 0.5, Throttle: -1, Brake: 1}, false},
		{Drive{Steer: 1.75, Throttle: -2, Brake: -0.5}, Drive{Steer: 1, Throttle: -1, Brake: 0}, true},
		{Drive{Steer: -1.25, Handbrake: 1}, Drive{Steer: -1, Handbrake: 1}, true},
	} {
		d := tc.in
		clamped, refuse := ValidateDrive(&d)
		assert.Equal(t, tc.want, d, "from %+v", tc.in)
		assert.Equal(t, tc.clamped, clamped, "from %+v", tc.in)
		assert.Empty(t, refuse)
		q := d
		(&netsync.Coder{}).QuantizeInput(newSchema(t).Schema, unsafe.Pointer(&q))
		assert.Equal(t, d, q, "a clamped input lies on the wire's grid")
	}
}

// The server counts an out-of-range input, as a hostile client sends it,
// as clamped, and applies the clamped value.
func TestServerCountsClampedInputs(t *testing.T) {
	s := newSchema(t)
	b, err := netsync.NewInputBuffer(s.Schema, netsync.InputBufferOptions{})
	require.NoError(t, err)
	d := Drive{Steer: 2, Throttle: 0.5, Brake: 1.5, Handbrake: 1}
	rec := unsafe.Slice((*byte)(unsafe.Pointer(&d)), unsafe.Sizeof(d))
	assert.Equal(t, netsync.Accepted, b.Add(components.InputHeader{Tick: 11}, rec, 10))
	assert.Equal(t, uint64(1), b.Stats().Clamped)
	_, out, real := b.Take(11)
	require.True(t, real)
	assert.Equal(t, Drive{Steer: 1, Throttle: 0.5, Brake: 1, Handbrake: 1}, *(*Drive)(unsafe.Pointer(&out[0])))
}

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

func TestBotIsSeededAndLetsGo(t *testing.T) {
	a, b := NewBot(3, 600), NewBot(3, 600)
	for tick := gw.Tick(0); tick < 700; tick++ {
		da, db := a.Input(nil, tick), b.Input(nil, tick)
		require.Equal(t, da, db, "tick %d", tick)
		if tick >= 600 {
			require.Equal(t, Drive{}, da, "tick %d: the bot let go", tick)
		}
	}
	assert.Greater(t, a.Pulls, uint64(0))
	assert.Equal(t, a.Pulls, b.Pulls)
}
