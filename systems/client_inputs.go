package systems

import (
	"math"
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// InputSource samples the local player's input, of the schema's input
// type, once per tick, never during replay; it may read devices (it is not
// a system). Make one with [InputFunc].
type InputSource struct {
	typ    reflect.Type
	sample func(w *gw.World, tick gw.Tick, out unsafe.Pointer)
}

// InputFunc adapts a function returning the game's input type T for a
// tick: the tick the input will be applied on, the client's tick plus its
// input delay (ClientOptions.InputDelay), which w, the client's world, has
// not reached yet when there is a delay. A client refuses it when T is
// not the schema's input type.
func InputFunc[T any](f func(w *gw.World, tick gw.Tick) T) *InputSource {
	return &InputSource{typ: reflect.TypeFor[T](), sample: func(w *gw.World, tick gw.Tick, out unsafe.Pointer) {
		*(*T)(out) = f(w, tick)
	}}
}

// sample records the local player's input for the tick the input delay
// puts it on: the world's tick plus the delay. A tick whose input is
// recorded already (the delay just fell) samples nothing, so no tick is
// given two inputs. Until the client's own ghost exists it sends neutral
// input: there is nothing to control, and the server must not move a
// player the client cannot see.
func (c *Client) sample(w *gw.World) {
	tick := w.Tick().Add(c.delay)
	if newest, ok := c.inputs.Newest(); ok && !tick.After(newest) {
		c.sampledNow = false
		return
	}
	c.sampledNow = true
	clear(c.sampled)
	if c.opts.Input != nil && c.ownsGhost(w) {
		c.opts.Input.sample(w, tick, unsafe.Pointer(unsafe.SliceData(c.sampled)))
	}
	h := components.InputHeader{Tick: tick}
	// What the player sees is the last frame's render tick (once a frame
	// showed one): the server rewinds to it for lag compensation.
	if c.rendered {
		tick, frac := gw.TickAt(c.render)
		h.HasView, h.ViewTick = true, tick
		// A fraction a hair below 1 must not round up to a whole tick.
		h.ViewFraction = min(float32(frac), math.Nextafter32(1, 0))
		h.InterpolationDelay = float32(c.iclock.Delay())
	}
	if c.opts.ClaimView != nil {
		// Through a field: &h given to a function value would move every
		// tick's header to the heap.
		c.claim = h
		c.opts.ClaimView(&c.claim)
		h = c.claim
	}
	c.inputs.Record(h, c.sampled)
}

// ownsGhost reports whether a ghost this client owns exists: a predicted
// one, or an interpolated one of a PredictNone type, found by a scan of
// the interpolated ghosts that runs only while no owned ghost is
// predicted.
func (c *Client) ownsGhost(w *gw.World) bool {
	q := c.predicted.Query(w.Arche())
	n := q.Count()
	q.Close()
	if n > 0 {
		return true
	}
	shown := c.shown.Query(w.Arche())
	for shown.Next() {
		if c.ghosts.Owned(shown.Get()) {
			shown.Close()
			return true
		}
	}
	return false
}

// applyInput writes the tick's recorded input onto the owned predicted
// ghosts (the only ones with an input), on normal and replayed ticks
// alike.
func (c *Client) applyInput(w *gw.World) {
	h, rec, ok := c.inputs.Get(w.Tick())
	if !ok {
		h, rec = components.InputHeader{Tick: w.Tick()}, c.sampled[:0]
	}
	a := w.Arche()
	b := c.binding
	q := c.predicted.Query(a)
	for q.Next() {
		_, in := q.Get()
		*in = h
		if b.HasInput {
			dst := unsafe.Slice((*byte)(a.Get(q.Entity(), b.Input)), b.Schema().InputSize())
			copy(dst, rec)
			clear(dst[len(rec):])
		}
	}
}

// send transmits the input batch of the tick, when the tick recorded a new
// input: a tick predicted with an input recorded before (the input delay
// just fell) would send the same batch again.
func (c *Client) send(w *gw.World) {
	if !c.sampledNow {
		return
	}
	c.sampledNow = false
	c.inputs.Batch(&c.batch)
	if len(c.batch.Heads) == 0 {
		return
	}
	c.batch.ClientTime = ms(c.src.Now())
	if c.hasLatest {
		c.batch.AckTick, c.batch.AckParts = c.latest.Tick, c.latestParts
	}
	// A delta record dropped for a baseline this client lacks (or whose
	// values decoded out of range against it): ask for
	// full states in the next few batches, so one lost packet does not
	// lose the request (the server honours one a second).
	if gs := c.ghosts.Stats(); gs.BaselineMissing+gs.ValueRefused != c.missingSeen {
		c.missingSeen, c.resyncAsks = gs.BaselineMissing+gs.ValueRefused, resyncAsks
	}
	c.batch.Resync = c.resyncAsks > 0
	if c.resyncAsks > 0 {
		c.resyncAsks--
	}
	c.tx = protocol.AppendInputs(c.tx[:0], c.binding.Schema(), &c.batch)
	_, _ = c.link.pc.SendUnreliable(c.tx) // the next batch repeats the inputs not yet confirmed
}
