package testgame

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// blackout drops every datagram its client sends while on.
type blackout struct {
	transport.Conn
	on      bool
	dropped int
}

func (b *blackout) Send(p []byte) error {
	if b.on {
		b.dropped++
		return nil
	}
	return b.Conn.Send(p)
}

// A handbrake pull whose every packet is lost (the client's uplink goes
// dark for 20 ticks from the pull on, far beyond the input redundancy and
// the client's lead) reaches the server late, with the first packet after
// the blackout: the server applies it exactly once, on the next tick,
// counting a late press; the client's prediction counted it on its own
// tick and still counts it once after the correction.
func TestLostHandbrakeCountsExactlyOnce(t *testing.T) {
	const window = 20
	s := newSchema(t)
	var (
		dark      *blackout
		pull      bool
		pulled    gw.Tick
		hasPulled bool
	)
	input := systems.InputFunc(func(_ *gw.World, tick gw.Tick) Drive {
		d := Drive{Throttle: 1}
		switch {
		case pull && !hasPulled:
			d.Handbrake = 1
			pulled, hasPulled = tick, true
			dark.on = true
		case hasPulled && tick.Sub(pulled) >= window:
			dark.on = false
		}
		if hasPulled && tick.Sub(pulled) >= 2*window {
			d = Drive{} // let go, so the car stops and the ends compare
		}
		return d
	})
	opts := s.Options(5, Player{Link: Link(100*time.Millisecond, 0, 0), Input: input,
		Wrap: func(c transport.Conn) transport.Conn { dark = &blackout{Conn: c}; return dark }})
	require.Less(t, window, codec.MaxInputsPerBatch, "the pull must still be in the batch after the blackout")
	h, err := harness.New(opts)
	require.NoError(t, err)
	c := h.Clients[0]
	h.Run(2 * time.Second)
	require.True(t, c.Connected())

	pull = true
	require.True(t, h.RunUntil(func() bool { return hasPulled && c.World().Tick().After(pulled) }, time.Second))
	id, ce, ok := ownCar(c)
	require.True(t, ok)
	assert.Equal(t, uint16(1), get[Counters](c.World(), ce).Handbrakes, "the prediction counts the pull on its tick")

	h.Run(3 * time.Second)
	assert.GreaterOrEqual(t, dark.dropped, window, "every packet of the blackout was dropped")
	se, ok := h.Server.Ghosts().Entity(id)
	require.True(t, ok)
	assert.Equal(t, uint16(1), get[Counters](h.Server.World(), se).Handbrakes, "the server applies the lost pull once")
	assert.Equal(t, uint16(1), get[Counters](c.World(), ce).Handbrakes, "the prediction still counts it once")
	in, ok := h.Server.ConnStats((*ghostreg.ClientRegister)(c.Ghosts()).Conn())
	require.True(t, ok)
	assert.Equal(t, uint64(1), in.Inputs.LatePresses, "the pull arrived after its tick ran")
	assert.Greater(t, in.Inputs.Missing, uint64(0), "the server ran ticks without the client's input")
	sameCar(t, s, h, 0, id, ce)
}

// A pull shorter than a tick, pressed and released between two frames that
// both fall between two ticks, is kept by a systems.Latch and counts once
// on both ends; a sampler that reads the key's state when the tick runs
// never sees it.
func TestPressShorterThanATickIsNotLost(t *testing.T) {
	s := newSchema(t)
	var latch systems.Latch
	var down bool // the key's state, as a naive sampler reads it
	latched := systems.InputFunc(func(*gw.World, gw.Tick) Drive { return Drive{Throttle: 1, Handbrake: latch.Take()} })
	naive := systems.InputFunc(func(*gw.World, gw.Tick) Drive {
		d := Drive{Throttle: 1}
		if down {
			d.Handbrake = 1
		}
		return d
	})
	link := Link(60*time.Millisecond, 0, 0)
	opts := s.Options(6, Player{Link: link, Input: latched}, Player{Link: link, Input: naive})
	opts.Step, opts.FrameRate = time.Millisecond, 500
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(time.Second)

	// Wait for both clients to tick, then press at the next frame and
	// release at the one after: 2 ms, well inside a 16.7 ms tick.
	ticks := func() [2]gw.Tick { return [2]gw.Tick{h.Clients[0].World().Tick(), h.Clients[1].World().Tick()} }
	before := ticks()
	require.True(t, h.RunUntil(func() bool { now := ticks(); return now[0] != before[0] && now[1] != before[1] }, time.Second))
	at := ticks()
	h.Step()
	down = true
	latch.Press()
	h.Step()
	h.Step()
	down = false
	require.Equal(t, at, ticks(), "the press must fall between two ticks of both clients")
	h.Run(2 * time.Second)

	for i, want := range []uint16{1, 0} {
		id, ce, ok := ownCar(h.Clients[i])
		require.True(t, ok)
		se, ok := h.Server.Ghosts().Entity(id)
		require.True(t, ok)
		assert.Equalf(t, want, get[Counters](h.Server.World(), se).Handbrakes, "client %d on the server", i)
		assert.Equalf(t, want, get[Counters](h.Clients[i].World(), ce).Handbrakes, "client %d in prediction", i)
	}
}
