package testgame

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
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
		(&codec.Coder{}).QuantizeInput((*codec.Schema)(newSchema(t).Schema), unsafe.Pointer(&q))
		assert.Equal(t, d, q, "a clamped input lies on the wire's grid")
	}
}

// The server counts an out-of-range input, as a hostile client sends it,
// as clamped, and applies the clamped value.
func TestServerCountsClampedInputs(t *testing.T) {
	s := newSchema(t)
	b, err := control.NewInputBuffer((*codec.Schema)(s.Schema), control.InputBufferOptions{})
	require.NoError(t, err)
	d := Drive{Steer: 2, Throttle: 0.5, Brake: 1.5, Handbrake: 1}
	rec := unsafe.Slice((*byte)(unsafe.Pointer(&d)), unsafe.Sizeof(d))
	assert.Equal(t, control.AddAccepted, b.Add(components.InputHeader{Tick: 11}, rec, 10))
	assert.Equal(t, uint64(1), b.Stats().Clamped)
	_, out, real := b.Take(11)
	require.True(t, real)
	assert.Equal(t, Drive{Steer: 1, Throttle: 0.5, Brake: 1, Handbrake: 1}, *(*Drive)(unsafe.Pointer(&out[0])))
}
