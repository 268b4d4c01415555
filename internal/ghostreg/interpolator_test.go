package ghostreg_test

import (
	"math"
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// The interpolation tests replicate lossless components (raw float32 on
// the wire), so every expected value is computed from exactly what the
// server had.

// ipPos is a position; a jump of more than ipTeleport is a teleport.
type ipPos struct{ X, Y float32 }

// ipYaw is a facing, blended the short way round.
type ipYaw struct{ A float32 }

// ipLife steps (no float field); dead then alive is a teleport (respawn).
type ipLife struct {
	HP    int32
	Alive bool
}

const (
	ipTeleport = 50
	ipMe       = components.ConnID(2) // the client's connection
	ipOther    = components.ConnID(1) // owner of every ghost: never ours
)

// ipRig is a server that spawns ghosts of type mover (ipYaw, ipPos,
// ipLife), encodes and decodes snapshots for a client that owns none of
// them, and the client's Interpolator.
type ipRig struct {
	s                  *codec.Schema
	pos, yaw, life     codec.ComponentID
	mover              codec.GhostTypeID
	sw, cw             *gw.World
	srv                *ghostreg.ServerRegister
	wr                 *protocol.SnapshotWriter
	view               *ghostreg.View
	cl                 *ghostreg.ClientRegister
	ip                 *ghostreg.Interpolator
	snap               protocol.Snapshot
	pid, yid, lid, iid ecs.ID // client arche IDs
	spid, syid, slid   ecs.ID // server arche IDs
	spawned, despawned []components.GhostID
	frames             int
	lastRender         float64
	latest             gw.Tick // the newest snapshot received, when hasLatest
	hasLatest          bool
}

func (v *ipYaw) Serialize(s *codec.Stream) { s.Float32(&v.A) }

func (v *ipPos) Serialize(s *codec.Stream) { s.Float32(&v.X); s.Float32(&v.Y) }

func (v *ipLife) Serialize(s *codec.Stream) {
	codec.Int(s, &v.HP, math.MinInt32, math.MaxInt32)
	s.Bool(&v.Alive)
}

func ipSchema(tb testing.TB) (*codec.Schema, codec.ComponentID, codec.ComponentID, codec.ComponentID, codec.GhostTypeID) {
	tb.Helper()
	var b codec.SchemaBuilder
	yaw := wiretest.Component[ipYaw](&b)
	pos := wiretest.Component[ipPos](&b)
	life := wiretest.Component[ipLife](&b)
	b.Interpolate(yaw, codec.Interpolation{
		Blend: wiretest.Lerp(func(a, b *ipYaw, t float32) ipYaw { return ipYaw{codec.LerpAngle(a.A, b.A, t)} }),
	})
	b.Interpolate(pos, codec.Interpolation{
		Distance: wiretest.Distance(func(a, b *ipPos) float32 {
			return float32(math.Hypot(float64(b.X-a.X), float64(b.Y-a.Y)))
		}),
		Teleport: ipTeleport,
	})
	b.Interpolate(life, codec.Interpolation{
		Distance: wiretest.Distance(func(a, b *ipLife) float32 {
			if !a.Alive && b.Alive {
				return 1
			}
			return 0
		}),
		Teleport: 0.5,
	})
	mover := b.GhostType("mover", yaw, pos, life)
	s, err := b.Build()
	require.NoError(tb, err)
	return s, pos, yaw, life, mover
}

func newIPRig(tb testing.TB, maxExtrapolation float64) *ipRig {
	tb.Helper()
	r := &ipRig{}
	r.s, r.pos, r.yaw, r.life, r.mover = ipSchema(tb)
	r.sw = gw.NewWorld(gw.WorldOptions{})
	sb := ghostreg.Bind(r.sw, r.s)
	r.srv = ghostreg.NewServerRegister(sb)
	r.view = r.srv.NewView(ipMe)
	var err error
	r.wr, err = protocol.NewSnapshotWriter(r.s, 0)
	require.NoError(tb, err)

	r.cw = gw.NewWorld(gw.WorldOptions{})
	ecs.ComponentID[clientOnlyA](r.cw.Arche()) // other arche IDs than the server's
	cb := ghostreg.Bind(r.cw, r.s)
	r.cl = ghostreg.NewClientRegister(cb)
	r.cl.SetConn(ipMe)
	r.cl.OnSpawn = func(_ *gw.World, _ ecs.Entity, g components.Ghost) { r.spawned = append(r.spawned, g.ID) }
	r.cl.OnDespawn = func(_ *gw.World, _ ecs.Entity, g components.Ghost) { r.despawned = append(r.despawned, g.ID) }
	r.ip, err = ghostreg.NewInterpolator(r.cl, maxExtrapolation)
	require.NoError(tb, err)
	require.Same(tb, r.ip, r.cl.Interpolator())

	ca, sa := r.cw.Arche(), r.sw.Arche()
	r.pid, r.yid, r.lid = ecs.ComponentID[ipPos](ca), ecs.ComponentID[ipYaw](ca), ecs.ComponentID[ipLife](ca)
	r.iid = ecs.ComponentID[components.Interpolated](ca)
	r.spid, r.syid, r.slid = ecs.ComponentID[ipPos](sa), ecs.ComponentID[ipYaw](sa), ecs.ComponentID[ipLife](sa)
	return r
}

// ipState is one ghost's replicated values.
type ipState struct {
	Yaw  ipYaw
	Pos  ipPos
	Life ipLife
}

// spawn creates a server ghost with state st.
func (r *ipRig) spawn(tb testing.TB, st ipState) (ecs.Entity, components.GhostID) {
	tb.Helper()
	e := r.sw.Arche().NewEntityWith(
		ecs.Component{ID: r.syid, Comp: &st.Yaw},
		ecs.Component{ID: r.spid, Comp: &st.Pos},
		ecs.Component{ID: r.slid, Comp: &st.Life})
	id, err := r.srv.Spawn(e, r.mover, ipOther)
	require.NoError(tb, err)
	return e, id
}

// set changes a server ghost's state.
func (r *ipRig) set(e ecs.Entity, st ipState) {
	a := r.sw.Arche()
	*(*ipYaw)(a.Get(e, r.syid)) = st.Yaw
	*(*ipPos)(a.Get(e, r.spid)) = st.Pos
	*(*ipLife)(a.Get(e, r.slid)) = st.Life
}

// packet encodes the server's ghosts as the snapshot of tick; the client
// acknowledges it when ack is set.
func (r *ipRig) packet(tick gw.Tick, ack bool) []byte {
	r.sw.SetTick(tick)
	r.wr.Begin(tick)
	r.srv.WriteSnapshot(r.wr, r.view, tick)
	p := append([]byte(nil), r.wr.Finish(&protocol.SnapshotHeader{Tick: tick})...)
	if ack {
		r.view.Ack(tick, 1)
	}
	return p
}

// receive decodes p and does what a client does with a snapshot for ghosts
// it does not own: Complete, Resolve, Push each, then Despawn.
func (r *ipRig) receive(tb testing.TB, p []byte) {
	tb.Helper()
	require.NoError(tb, protocol.DecodeSnapshot(p, r.s, &r.snap))
	// A client completes the deltas of the snapshots it accepts, in tick
	// order; a stale one is pushed as is (the interpolator must ignore it).
	if !r.hasLatest || r.snap.Tick.After(r.latest) {
		r.cl.Complete(&r.snap)
		r.latest, r.hasLatest = r.snap.Tick, true
	}
	r.cl.Resolve(&r.snap)
	for gi := range r.snap.Ghosts {
		require.False(tb, r.cl.Owned(&r.snap.Ghosts[gi].Ghost))
		r.ip.Push(&r.snap, gi)
	}
	r.cl.Despawn(&r.snap)
}

// send is packet then receive, for a snapshot the client acknowledges.
func (r *ipRig) send(tb testing.TB, tick gw.Tick) {
	tb.Helper()
	r.receive(tb, r.packet(tick, true))
}

// update runs the interpolator at render tick rt, the frame being the
// render ticks since the last update.
func (r *ipRig) update(rt float64) {
	frame := 0.0
	if r.frames > 0 {
		frame = rt - r.lastRender
	}
	r.ip.Update(rt, frame)
	r.lastRender = rt
	r.frames++
}

// drawn returns what the client shows for ghost id.
func (r *ipRig) drawn(tb testing.TB, id components.GhostID) (ipState, components.Interpolated) {
	tb.Helper()
	e, ok := r.cl.Entity(id)
	require.True(tb, ok, "ghost %d is not shown", id)
	a := r.cw.Arche()
	require.True(tb, a.Alive(e))
	require.False(tb, a.Has(e, ecs.ComponentID[components.Predicted](a)), "an interpolated ghost must not be predicted")
	return ipState{
		Yaw:  *(*ipYaw)(a.Get(e, r.yid)),
		Pos:  *(*ipPos)(a.Get(e, r.pid)),
		Life: *(*ipLife)(a.Get(e, r.lid)),
	}, *(*components.Interpolated)(a.Get(e, r.iid))
}

// blend is what the default and the schema's blends give between a and b.
func ipBlend(a, b ipState, t float32) ipState {
	life := a.Life
	if t >= 1 {
		life = b.Life
	}
	return ipState{
		Yaw:  ipYaw{codec.LerpAngle(a.Yaw.A, b.Yaw.A, t)},
		Pos:  ipPos{codec.LerpFloat(a.Pos.X, b.Pos.X, t), codec.LerpFloat(a.Pos.Y, b.Pos.Y, t)},
		Life: life,
	}
}

func ipSame(a, b ipState) bool {
	return bitsOf(&a.Yaw) == bitsOf(&b.Yaw) && bitsOf(&a.Pos) == bitsOf(&b.Pos) && a.Life == b.Life
}

func requireDrawn(tb testing.TB, r *ipRig, id components.GhostID, want ipState, rt float64, format string, args ...any) components.Interpolated {
	tb.Helper()
	got, in := r.drawn(tb, id)
	require.Truef(tb, ipSame(got, want), "render tick %v: "+format+":\n got %+v\nwant %+v", append(append([]any{rt}, args...), got, want)...)
	require.Equal(tb, rt, in.Tick, "Interpolated.Tick")
	return in
}

// requireAtRest is requireDrawn for a ghost shown at rest, which frames
// do not write: its Interpolated.Tick is the frame it came to rest on.
func requireAtRest(tb testing.TB, r *ipRig, id components.GhostID, want ipState, rt float64, format string, args ...any) {
	tb.Helper()
	got, in := r.drawn(tb, id)
	require.Truef(tb, ipSame(got, want), "render tick %v: "+format+":\n got %+v\nwant %+v", append(append([]any{rt}, args...), got, want)...)
	require.LessOrEqual(tb, in.Tick, rt, "Interpolated.Tick")
	require.False(tb, in.Extrapolated)
}

func TestInterpolatorBlendsBetweenStates(t *testing.T) {
	r := newIPRig(t, 4)
	states := map[gw.Tick]ipState{
		10: {ipYaw{3}, ipPos{0.1, -7.3}, ipLife{100, true}},
		12: {ipYaw{-3}, ipPos{4.7, 8.9}, ipLife{90, true}},
		16: {ipYaw{1.234567}, ipPos{-3.3, 0.77}, ipLife{80, true}},
	}
	e, id := r.spawn(t, states[10])
	for _, tick := range []gw.Tick{10, 12, 16} {
		r.set(e, states[tick])
		r.send(t, tick)
	}
	for _, c := range []struct {
		rt   float64
		a, b gw.Tick
		t    float32
	}{
		{10, 10, 10, 0}, // exactly the state, not a blend
		{10.5, 10, 12, 0.25},
		{11, 10, 12, 0.5},
		{11.75, 10, 12, 0.875},
		{12, 12, 12, 0},
		{13, 12, 16, 0.25},
		{15.5, 12, 16, 0.875},
		{16, 16, 16, 0}, // the newest state, exactly
	} {
		r.update(c.rt)
		want := states[c.a]
		if c.a != c.b {
			want = ipBlend(states[c.a], states[c.b], c.t)
		}
		in := requireDrawn(t, r, id, want, c.rt, "blend of %d and %d at %v", c.a, c.b, c.t)
		assert.False(t, in.Extrapolated, "render tick %v: not past the newest state", c.rt)
		assert.False(t, in.Teleported, "render tick %v", c.rt)
	}
	// Across ±π the facing turns the short way.
	r.update(11)
	got, _ := r.drawn(t, id)
	assert.InDelta(t, math.Pi, math.Abs(float64(got.Yaw.A)), 0.01, "yaw halfway from 3 to -3")

	st := r.ip.Stats()
	assert.Equal(t, uint64(1), st.Spawned)
	assert.Equal(t, uint64(0), st.Teleports)
	assert.Equal(t, 0.0, st.ExtrapolatedTicks)
	assert.Equal(t, 0.0, st.MaxExtrapolation)
	assert.Equal(t, 1, st.Buffered)
	assert.Equal(t, []components.GhostID{id}, r.spawned, "OnSpawn once")
}

func TestInterpolatorSpawnAndDespawnFollowRenderTick(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{Pos: ipPos{1, 1}, Life: ipLife{5, true}})
	for tick := gw.Tick(20); tick <= 24; tick++ {
		r.set(e, ipState{Pos: ipPos{float32(tick), 0}, Life: ipLife{5, true}})
		r.send(t, tick)
	}
	assert.True(t, r.ip.Known(id))
	for _, rt := range []float64{15, 19, 19.99} {
		r.update(rt)
		_, ok := r.cl.Entity(id)
		require.False(t, ok, "ghost shown at render tick %v, before its first state (20)", rt)
	}
	assert.Empty(t, r.spawned)
	assert.Equal(t, 1, r.ip.Stats().Buffered)
	assert.Equal(t, uint64(0), r.ip.Stats().Spawned)

	r.update(20)
	requireDrawn(t, r, id, ipState{Pos: ipPos{20, 0}, Life: ipLife{5, true}}, 20, "first state at its tick")
	assert.Equal(t, []components.GhostID{id}, r.spawned)
	assert.Equal(t, uint64(1), r.ip.Stats().Spawned)
	assert.Equal(t, 1, r.cl.Stats().Live)

	// The server stops replicating it after 24: snapshot 25 despawns it,
	// and so do the next ones until the client acknowledges one.
	require.True(t, r.srv.Despawn(e))
	r.receive(t, r.packet(25, false))
	r.send(t, 26)
	assert.Zero(t, r.view.PendingDespawns(), "acknowledged")
	r.send(t, 27)
	assert.True(t, r.ip.Known(id), "still buffered until the render tick reaches 25")
	for _, rt := range []float64{21, 23.5, 24.99} {
		r.update(rt)
		_, ok := r.cl.Entity(id)
		require.True(t, ok, "ghost gone at render tick %v, before 25", rt)
	}
	assert.Empty(t, r.despawned)

	r.update(25)
	_, ok := r.cl.Entity(id)
	assert.False(t, ok, "ghost still shown at render tick 25, its first missing tick")
	assert.False(t, r.ip.Known(id))
	assert.Equal(t, []components.GhostID{id}, r.despawned, "OnDespawn once")
	st := r.ip.Stats()
	assert.Equal(t, uint64(1), st.Despawned)
	assert.Equal(t, 0, st.Buffered)
	assert.Equal(t, 0, r.cl.Stats().Live)
	q := r.cw.Arche().Query(ecs.All(r.pid))
	assert.Equal(t, 0, q.Count(), "entity removed from the world")
	q.Close()

	// A ghost that comes and goes before the render tick reaches it is
	// never shown.
	e2, id2 := r.spawn(t, ipState{Pos: ipPos{7, 7}})
	r.send(t, 30)
	r.send(t, 31)
	require.True(t, r.srv.Despawn(e2))
	r.send(t, 32)
	r.update(28)
	r.update(33)
	_, ok = r.cl.Entity(id2)
	assert.False(t, ok)
	assert.False(t, r.ip.Known(id2))
	assert.Equal(t, []components.GhostID{id}, r.spawned, "never spawned")
	assert.Equal(t, uint64(1), r.ip.Stats().Despawned, "only shown ghosts count as despawned")
}

func TestInterpolatorExtrapolatesUpToCapThenHolds(t *testing.T) {
	const maxExt = 4
	r := newIPRig(t, maxExt)
	e, id := r.spawn(t, ipState{})
	at := func(tick float64) ipState {
		return ipState{Yaw: ipYaw{float32(0.01 * tick)}, Pos: ipPos{float32(2 * tick), float32(-tick)}, Life: ipLife{1, true}}
	}
	for tick := gw.Tick(10); tick <= 20; tick++ {
		r.set(e, at(float64(tick)))
		r.send(t, tick)
	}
	want := func(rt float64) ipState {
		fl := math.Floor(rt)
		switch {
		case rt == fl && rt <= 20:
			return at(rt) // a state, exactly
		case rt < 20:
			return ipBlend(at(fl), at(fl+1), float32(rt-fl))
		}
		// From 19 and 20, t = 1 + min(rt−20, cap).
		return ipBlend(at(19), at(20), float32(1+math.Min(rt-20, maxExt)))
	}
	sumExt := 0.0
	for rt := 18.0; rt <= 30; rt += 0.5 {
		r.update(rt)
		got, in := r.drawn(t, id)
		w := want(rt)
		require.Truef(t, ipSame(got, w), "render tick %v: got %+v, want %+v", rt, got, w)
		assert.Equal(t, rt > 20, in.Extrapolated, "render tick %v: Extrapolated", rt)
		assert.False(t, in.Teleported)
		if rt > 20 {
			sumExt += math.Min(rt-20, 0.5)
		}
		st := r.ip.Stats()
		require.LessOrEqual(t, st.MaxExtrapolation, float64(maxExt), "MaxExtrapolation beyond the cap")
		require.InDelta(t, sumExt, st.ExtrapolatedTicks, 1e-9, "ExtrapolatedTicks at %v", rt)
	}
	got, _ := r.drawn(t, id)
	assert.Equal(t, float32(48), got.Pos.X, "held at 20 + 4 ticks of 2 units")
	assert.Equal(t, float32(-24), got.Pos.Y)
	st := r.ip.Stats()
	assert.Equal(t, float64(maxExt), st.MaxExtrapolation)
	assert.InDelta(t, 10, st.ExtrapolatedTicks, 1e-9, "20 → 30: ten ticks shown past the newest state")

	// No cap: hold the newest state at once.
	r0 := newIPRig(t, 0)
	e0, id0 := r0.spawn(t, at(10))
	r0.send(t, 10)
	r0.set(e0, at(11))
	r0.send(t, 11)
	for _, rt := range []float64{11, 12, 15} {
		r0.update(rt)
		got, in := r0.drawn(t, id0)
		want := at(11)
		assert.Equal(t, want.Pos, got.Pos, "render tick %v: no extrapolation allowed", rt)
		assert.Equal(t, want.Life, got.Life)
		assert.InDelta(t, want.Yaw.A, got.Yaw.A, 1e-6)
		assert.Equal(t, rt > 11, in.Extrapolated)
	}
	assert.Equal(t, 0.0, r0.ip.Stats().MaxExtrapolation)

	// A single state is held, flagged as shown past it.
	r1 := newIPRig(t, 4)
	_, id1 := r1.spawn(t, at(5))
	r1.send(t, 5)
	r1.update(5)
	in := requireDrawn(t, r1, id1, at(5), 5, "single state")
	assert.False(t, in.Extrapolated)
	r1.update(9)
	in = requireDrawn(t, r1, id1, at(5), 9, "single state held")
	assert.True(t, in.Extrapolated)
}

func TestInterpolatorRecoversAfterExtrapolation(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	// Moving at 2 units a tick until 20, where it stops at 40 for good.
	pos := func(tick gw.Tick) float32 { return float32(2 * min(tick, 20)) }
	for tick := gw.Tick(10); tick <= 20; tick++ {
		r.set(e, ipState{Pos: ipPos{pos(tick), 0}})
		r.send(t, tick)
	}
	rt := 19.0
	for ; rt <= 22; rt += 0.25 {
		r.update(rt)
	}
	got, in := r.drawn(t, id)
	require.True(t, in.Extrapolated)
	require.Equal(t, float32(44), got.Pos.X, "extrapolated 2 ticks on: the wrong guess")

	// Data resumes: the ghost stood still at 40 since 20.
	for tick := gw.Tick(21); tick <= 60; tick++ {
		r.set(e, ipState{Pos: ipPos{pos(tick), 0}})
		r.send(t, tick)
	}
	prevErr := float64(44 - 40)
	frames := 0
	for ; rt <= 40; rt += 0.25 {
		r.update(rt)
		got, in := r.drawn(t, id)
		assert.False(t, in.Extrapolated, "render tick %v", rt)
		errNow := float64(got.Pos.X) - 40
		require.GreaterOrEqual(t, errNow, 0.0, "render tick %v: overshot the true value (%v)", rt, got.Pos.X)
		require.LessOrEqual(t, errNow, prevErr, "render tick %v: moved away from the true value", rt)
		if frames == 0 {
			require.Greater(t, errNow, 2.0, "render tick %v: jumped from 44 to %v on the first frame", rt, got.Pos.X)
		}
		// No frame removes more than a quarter of the wrong guess.
		require.LessOrEqual(t, prevErr-errNow, 0.25*4, "render tick %v: jumped by %v", rt, prevErr-errNow)
		prevErr = errNow
		frames++
		if errNow == 0 {
			break
		}
	}
	assert.Equal(t, 0.0, prevErr, "never converged to the true value")
	assert.GreaterOrEqual(t, frames, 4, "converged within %d frames: a jump, not a fade", frames)
	// And it stays exact.
	r.update(rt + 1)
	requireAtRest(t, r, id, ipState{Pos: ipPos{40, 0}}, rt+1, "after recovery")
}

// ipStateX is a state derived from x alone, so a jump in x of more than
// ipTeleport is a teleport.
func ipStateX(x float32) ipState {
	return ipState{Yaw: ipYaw{x / 1000}, Pos: ipPos{x, 1}, Life: ipLife{int32(x), true}}
}

func TestInterpolatorTeleportSteps(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	xs := map[gw.Tick]float32{10: 0, 11: 1, 12: 2, 13: 500, 14: 501, 15: 502}
	for tick := gw.Tick(10); tick <= 15; tick++ {
		r.set(e, ipStateX(xs[tick]))
		r.send(t, tick)
	}
	teleFrames := 0
	for rt := 11.0; rt <= 15; rt += 0.25 {
		r.update(rt)
		got, in := r.drawn(t, id)
		var want ipState
		switch {
		case rt < 12:
			want = ipBlend(ipStateX(xs[11]), ipStateX(xs[12]), float32(rt-11))
		case rt < 13:
			want = ipStateX(2) // holds the old state up to the teleport...
		default:
			fl := gw.Tick(rt)
			want = ipBlend(ipStateX(xs[fl]), ipStateX(xs[min(fl+1, 15)]), float32(rt-float64(fl)))
			if fl == 15 {
				want = ipStateX(xs[15])
			}
		}
		require.Truef(t, ipSame(got, want), "render tick %v: got %+v, want %+v", rt, got, want)
		// ...and flags exactly the frame that shows the jump.
		assert.Equal(t, rt == 13, in.Teleported, "render tick %v: Teleported", rt)
		if in.Teleported {
			teleFrames++
		}
	}
	assert.Equal(t, 1, teleFrames)
	assert.Equal(t, uint64(1), r.ip.Stats().Teleports)
}

func TestInterpolatorNoExtrapolationAcrossTeleport(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	for _, s := range []struct {
		tick gw.Tick
		x    float32
	}{{10, 0}, {11, 1}, {12, 500}} {
		r.set(e, ipStateX(s.x))
		r.send(t, s.tick)
	}
	for _, rt := range []float64{11.5, 11.9, 12, 12.5, 13, 14, 16, 20} {
		r.update(rt)
		got, in := r.drawn(t, id)
		want := ipStateX(500)
		if rt < 12 {
			want = ipStateX(1)
		}
		require.Truef(t, ipSame(got, want), "render tick %v: got %+v, want %+v (no extrapolation across a teleport)", rt, got, want)
		assert.Equal(t, rt > 12, in.Extrapolated, "render tick %v: Extrapolated", rt)
		assert.Equal(t, rt == 12, in.Teleported, "render tick %v: Teleported", rt)
	}
	assert.Equal(t, uint64(1), r.ip.Stats().Teleports)
}

func TestInterpolatorTeleportArrivingDuringExtrapolation(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	for tick := gw.Tick(10); tick <= 11; tick++ {
		r.set(e, ipStateX(float32(tick)))
		r.send(t, tick)
	}
	for _, rt := range []float64{11, 11.5, 12, 12.5} {
		r.update(rt)
	}
	got, in := r.drawn(t, id)
	require.True(t, in.Extrapolated)
	require.Equal(t, float32(12.5), got.Pos.X, "test setup: extrapolating")

	// The ghost respawned far away at 12; the states arrive late.
	r.set(e, ipStateX(500))
	r.send(t, 12)
	r.set(e, ipStateX(501))
	r.send(t, 13)
	r.set(e, ipStateX(502))
	r.send(t, 14)
	r.update(12.75)
	got, in = r.drawn(t, id)
	want := ipBlend(ipStateX(500), ipStateX(501), 0.75)
	require.Truef(t, ipSame(got, want), "render tick 12.75: got %+v, want %+v: a late teleport must step, not fade from the extrapolation", got, want)
	assert.True(t, in.Teleported, "the jump shows on this frame")
	assert.False(t, in.Extrapolated)
	assert.Equal(t, uint64(1), r.ip.Stats().Teleports)
	r.update(13.25)
	got, in = r.drawn(t, id)
	want = ipBlend(ipStateX(501), ipStateX(502), 0.25)
	assert.True(t, ipSame(got, want), "render tick 13.25: got %+v, want %+v", got, want)
	assert.False(t, in.Teleported)
	assert.Equal(t, uint64(1), r.ip.Stats().Teleports)

	// The same while still extrapolating past it: it holds the new place.
	r2 := newIPRig(t, 4)
	e2, id2 := r2.spawn(t, ipState{})
	for tick := gw.Tick(10); tick <= 11; tick++ {
		r2.set(e2, ipStateX(float32(tick)))
		r2.send(t, tick)
	}
	r2.update(11)
	r2.update(12.5)
	r2.set(e2, ipStateX(500))
	r2.send(t, 12)
	r2.update(12.75)
	got, in = r2.drawn(t, id2)
	assert.True(t, ipSame(got, ipStateX(500)), "got %+v: no extrapolation across the teleport", got)
	assert.True(t, in.Teleported)
	assert.True(t, in.Extrapolated)
	r2.update(13)
	_, in = r2.drawn(t, id2)
	assert.False(t, in.Teleported)
	assert.Equal(t, uint64(1), r2.ip.Stats().Teleports)
}

func TestInterpolatorGhostLevelTeleport(t *testing.T) {
	// Respawn: dead then alive is a teleport by the life component alone;
	// position and facing move little, yet step too.
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	a := ipState{Yaw: ipYaw{0.5}, Pos: ipPos{10, 10}, Life: ipLife{0, false}}
	b := ipState{Yaw: ipYaw{-0.5}, Pos: ipPos{13, 14}, Life: ipLife{100, true}}
	r.set(e, a)
	r.send(t, 10)
	r.set(e, b)
	r.send(t, 12)
	for _, rt := range []float64{10, 10.5, 11, 11.99} {
		r.update(rt)
		requireDrawn(t, r, id, a, rt, "every component holds until the respawn tick")
	}
	r.update(12)
	in := requireDrawn(t, r, id, b, 12, "every component steps at the respawn tick")
	assert.True(t, in.Teleported)

	// A position teleport steps the facing (which would blend) too.
	r2 := newIPRig(t, 4)
	e2, id2 := r2.spawn(t, ipState{})
	c := ipState{Yaw: ipYaw{1}, Pos: ipPos{0, 0}, Life: ipLife{7, true}}
	d := ipState{Yaw: ipYaw{2}, Pos: ipPos{0, ipTeleport + 1}, Life: ipLife{7, true}}
	r2.set(e2, c)
	r2.send(t, 20)
	r2.set(e2, d)
	r2.send(t, 21)
	r2.update(20.5)
	requireDrawn(t, r2, id2, c, 20.5, "facing holds across a position teleport")
	r2.update(21)
	in = requireDrawn(t, r2, id2, d, 21, "after the teleport")
	assert.True(t, in.Teleported)
	// Just under the threshold blends.
	r2.set(e2, ipState{Yaw: ipYaw{3}, Pos: ipPos{0, 2*ipTeleport + 1}, Life: ipLife{7, true}})
	r2.send(t, 22)
	r2.update(21.5)
	got, in := r2.drawn(t, id2)
	assert.InDelta(t, 2.5, got.Yaw.A, 1e-6, "a move of exactly the threshold blends")
	assert.InDelta(t, ipTeleport+1+ipTeleport/2.0, got.Pos.Y, 1e-4)
	assert.False(t, in.Teleported)
	assert.Equal(t, uint64(1), r2.ip.Stats().Teleports)
}

func TestInterpolatorIgnoresOlderStates(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	r.set(e, ipStateX(10))
	r.send(t, 10)
	r.set(e, ipStateX(777))       // a state the ghost had at 11, arriving late
	late11 := r.packet(11, false) // not acknowledged: the client has not got it yet
	r.set(e, ipStateX(12))
	r.send(t, 12)
	r.set(e, ipStateX(999)) // another 12, and a 9
	dup12 := r.packet(12, true)
	old9 := r.packet(9, true)

	r.receive(t, late11)
	r.receive(t, dup12)
	r.receive(t, old9)
	r.update(10)
	requireDrawn(t, r, id, ipStateX(10), 10, "state 10")
	r.update(11)
	requireDrawn(t, r, id, ipBlend(ipStateX(10), ipStateX(12), 0.5), 11, "blend of 10 and 12: late 11 ignored")
	r.update(12)
	requireDrawn(t, r, id, ipStateX(12), 12, "the first 12 kept")

	// A stale state does not bring back a ghost that is gone.
	r.set(e, ipStateX(13))
	r.send(t, 13)
	stale13 := r.packet(13, true)
	require.True(t, r.srv.Despawn(e))
	r.send(t, 14) // first complete snapshot without it
	r.receive(t, stale13)
	r.update(13.5)
	_, ok := r.cl.Entity(id)
	require.True(t, ok)
	r.update(14)
	_, ok = r.cl.Entity(id)
	assert.False(t, ok, "a stale state after the ghost's last one revived it")
	assert.False(t, r.ip.Known(id))
}

func TestInterpolatorRingWraps(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	x := func(tick gw.Tick) float32 { return float32(tick)*3 + 0.125 }
	// Every other tick, 150 states: more than twice the 64-state ring,
	// while the render tick lags 30 ticks behind.
	var first bool
	for tick := gw.Tick(2); tick <= 300; tick += 2 {
		r.set(e, ipStateX(x(tick)))
		r.send(t, tick)
		rt := float64(tick) - 30
		if rt < 2 {
			continue
		}
		r.update(rt)
		got, in := r.drawn(t, id)
		lo := gw.Tick(rt) &^ 1
		want := ipBlend(ipStateX(x(lo)), ipStateX(x(lo+2)), float32((rt-float64(lo))/2))
		if rt == float64(lo) {
			want = ipStateX(x(lo))
		}
		require.Truef(t, ipSame(got, want), "render tick %v: got %+v, want %+v", rt, got, want)
		assert.False(t, in.Extrapolated)
		first = true
	}
	require.True(t, first)
	// 150 states buffered since; the ring holds 174..300. Blends inside it,
	// at odd and fractional ticks, read the right slots.
	for _, rt := range []float64{174, 175, 201.5, 262, 299} {
		r.update(rt)
		lo := gw.Tick(rt) &^ 1
		want := ipBlend(ipStateX(x(lo)), ipStateX(x(lo+2)), float32((rt-float64(lo))/2))
		if rt == float64(lo) {
			want = ipStateX(x(lo))
		}
		requireDrawn(t, r, id, want, rt, "inside the ring")
	}
	r.update(300)
	requireDrawn(t, r, id, ipStateX(x(300)), 300, "the newest state")
	// A render tick before the oldest held state (the ring overflowed)
	// holds the oldest.
	r.update(150)
	requireDrawn(t, r, id, ipStateX(x(174)), 150, "before the oldest state in the ring")
}

func TestInterpolatorUpdateAllocs(t *testing.T) {
	r := newIPRig(t, 4)
	var es []ecs.Entity
	for i := 0; i < 16; i++ {
		e, _ := r.spawn(t, ipStateX(float32(i)))
		es = append(es, e)
	}
	for tick := gw.Tick(1); tick <= 60; tick++ {
		for i, e := range es {
			r.set(e, ipStateX(float32(tick)+float32(i)*100))
		}
		r.send(t, tick)
	}
	rt := 5.0
	r.update(rt) // spawns, grows the buffers
	// Interpolating, then past the newest state (extrapolating, holding).
	allocs := testing.AllocsPerRun(200, func() {
		rt += 0.3
		r.ip.Update(rt, 0.3)
	})
	assert.Equal(t, 0.0, allocs, "Interpolator.Update allocates in steady state")
	require.Greater(t, rt, 60.0, "test setup: reached extrapolation")
	assert.Greater(t, r.ip.Stats().ExtrapolatedTicks, 0.0)

	// Receiving goes on too: Push into existing buffers allocates nothing.
	p := r.packet(61, true)
	require.NoError(t, protocol.DecodeSnapshot(p, r.s, &r.snap))
	allocs = testing.AllocsPerRun(50, func() {
		r.cl.Resolve(&r.snap)
		for gi := range r.snap.Ghosts {
			r.ip.Push(&r.snap, gi)
		}
		r.cl.Despawn(&r.snap)
	})
	assert.Equal(t, 0.0, allocs, "Interpolator.Push allocates in steady state")
}

func TestNewInterpolatorRejectsBadCap(t *testing.T) {
	s, _, _, _, _ := ipSchema(t)
	w := gw.NewWorld(gw.WorldOptions{})
	cl := ghostreg.NewClientRegister(ghostreg.Bind(w, s))
	for _, v := range []float64{-1, 60.5, math.NaN(), math.Inf(1)} {
		ip, err := ghostreg.NewInterpolator(cl, v)
		assert.Error(t, err, "cap %v", v)
		assert.Nil(t, ip)
	}
	assert.Nil(t, cl.Interpolator())
	ip, err := ghostreg.NewInterpolator(cl, 60)
	require.NoError(t, err)
	assert.Same(t, ip, cl.Interpolator())
}

// States whose ticks wrap past 2³² blend like any others: the render tick
// is continuous (it counts on past 2³²) and the states' ticks are taken
// near it, so the ghost moves smoothly through the wrap, extrapolates past
// its newest state and disappears at its missing tick.
func TestInterpolatorBlendsAcrossTheTickWrap(t *testing.T) {
	r := newIPRig(t, 4)
	const first = 1<<32 - 3 // as a continuous tick
	states := map[gw.Tick]ipState{}
	e, id := r.spawn(t, ipState{})
	for i := range 6 { // ticks 2³²−3 .. 2³²+2, which wrap to 0, 1, 2
		tick := gw.Tick(uint32(first)).Add(i)
		states[tick] = ipState{Pos: ipPos{float32(i), -float32(i)}, Life: ipLife{int32(i), true}}
		r.set(e, states[tick])
		r.send(t, tick)
	}
	r.update(first - 0.5)
	_, shown := r.cl.Entity(id)
	require.False(t, shown, "shown before its first state")
	for rt := float64(first); rt <= first+5; rt += 0.25 {
		r.update(rt)
		a, frac := gw.TickAt(rt)
		want := states[a]
		if frac != 0 {
			want = ipBlend(states[a], states[a.Add(1)], float32(frac))
		}
		in := requireDrawn(t, r, id, want, rt, "blend of %d and %d at %v", a, a.Add(1), frac)
		require.False(t, in.Extrapolated, "render tick %v", rt)
		require.False(t, in.Teleported, "render tick %v", rt)
		got, _ := r.drawn(t, id)
		require.InDelta(t, rt-first, got.Pos.X, 1e-5, "render tick %v: no jump at the wrap", rt)
	}
	// Past the newest state (tick 2): extrapolated from the last two.
	r.update(first + 6.5)
	in := requireDrawn(t, r, id, ipBlend(states[1], states[2], 2.5), first+6.5, "extrapolated")
	assert.True(t, in.Extrapolated)
	assert.Equal(t, 1.5, r.ip.Stats().MaxExtrapolation)
	// Missing from the complete snapshot of tick 4: gone at render tick 4.
	r.ip.Gone(id, 4)
	r.update(first + 6.75)
	_, shown = r.cl.Entity(id)
	assert.True(t, shown, "still shown before its missing tick")
	r.update(first + 7)
	_, shown = r.cl.Entity(id)
	assert.False(t, shown, "gone at its missing tick, past the wrap")
	assert.Equal(t, uint64(1), r.ip.Stats().Despawned)
}

func TestInterpolatorPoseShowsTheServersStateAtATick(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipStateX(10))
	for _, tick := range []gw.Tick{10, 11, 13} { // 12 lost
		r.set(e, ipStateX(float32(tick)))
		r.send(t, tick)
	}
	r.update(11.5)
	drawn := ipBlend(ipStateX(11), ipStateX(13), 0.25)
	requireDrawn(t, r, id, drawn, 11.5, "drawn between 11 and 13")

	pose := func(tick gw.Tick, record bool) ipState {
		r.ip.Pose(tick, record)
		got, _ := r.drawn(t, id)
		return got
	}
	assert.Equal(t, ipStateX(11), pose(11, true), "the state at 11 exactly")
	assert.Equal(t, ipStateX(11), pose(12, true), "12 was lost: the last known before it")
	assert.Equal(t, ipStateX(13), pose(20, true), "past the newest: the newest")
	assert.Equal(t, ipStateX(10), pose(10, false), "not recorded: the state at 10 exactly")
	r.ip.Restore()
	requireDrawn(t, r, id, drawn, 11.5, "Restore puts back what is drawn")

	// A run that does not record reuses what the recorded run of that tick
	// used, though 12's state has arrived since.
	r.set(e, ipStateX(12))
	r.send(t, 12) // older than the newest: ignored by the buffer
	r.set(e, ipStateX(14))
	r.send(t, 14)
	assert.Equal(t, ipStateX(13), pose(20, false), "the determinism check's replay sees what the first run saw")
	assert.Equal(t, ipStateX(14), pose(20, true), "a correction's replay sees the newest")
	assert.Equal(t, ipStateX(14), pose(20, false), "and is what later checks reuse")
	r.ip.Restore()
	assert.Equal(t, drawn, pose(9, true), "before the oldest state: what is drawn stays")

	allocs := testing.AllocsPerRun(100, func() {
		r.ip.Pose(13, true)
		r.ip.Restore()
	})
	assert.Equal(t, 0.0, allocs, "Pose and Restore allocate nothing")
}

// A ghost the server says rests is held, not extrapolated, and once it is
// shown at rest frames and poses write nothing into it (only the render
// tick moves on); when it moves again the rest lasts until the tick
// before the new state, rather than blending across the quiet ticks.
func TestInterpolatorHoldsAGhostAtRest(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipStateX(10))
	for tick := gw.Tick(10); tick <= 14; tick++ { // moves, then stops at 14
		r.set(e, ipStateX(float32(tick)))
		r.send(t, tick)
	}
	for tick := gw.Tick(15); tick <= 17; tick++ { // records that change nothing: the server says it rests
		r.send(t, tick)
	}
	require.Len(t, r.snap.Ghosts, 0, "acknowledged at rest: no longer sent")
	r.update(20)
	requireDrawn(t, r, id, ipStateX(14), 20, "held at rest")
	_, in := r.drawn(t, id)
	assert.False(t, in.Extrapolated, "a rest is not extrapolation")
	assert.Zero(t, r.ip.Stats().ExtrapolatedTicks)

	// Shown at rest: a frame and a pose leave the entity alone.
	ce, ok := r.cl.Entity(id)
	require.True(t, ok)
	(*ipPos)(r.cw.Arche().Get(ce, r.pid)).Y = 99 // a mark no write would keep
	r.update(21)
	r.ip.Pose(25, true)
	r.ip.Restore()
	assert.Equal(t, float32(99), (*ipPos)(r.cw.Arche().Get(ce, r.pid)).Y, "nothing written while at rest")
	_, in = r.drawn(t, id)
	assert.Equal(t, 20.0, in.Tick, "not even Interpolated is written while at rest")
	(*ipPos)(r.cw.Arche().Get(ce, r.pid)).Y = 0

	// It moves again at 40: the rest is drawn until 39.
	r.set(e, ipStateX(20))
	r.send(t, 40)
	r.update(39)
	requireDrawn(t, r, id, ipStateX(14), 39, "still at rest the tick before it moved")
	r.update(39.5)
	requireDrawn(t, r, id, ipBlend(ipStateX(14), ipStateX(20), 0.5), 39.5, "moving from 39 to 40")
}

// A record Pose whose tick is at or after every rest does not visit the
// ghosts shown at rest (each one's newest state is what it uses); the
// determinism check's replay of such a tick, after the ghost moved again,
// poses the state that run used all the same. A Pose of a tick before a
// rest visits every ghost.
func TestInterpolatorPosesGhostsAtRestWithoutVisitingThem(t *testing.T) {
	r, e, id := restingRig(t)
	r.update(20)
	requireAtRest(t, r, id, ipStateX(14), 20, "at rest")
	pose := func(tick gw.Tick, record bool) ipState {
		r.ip.Pose(tick, record)
		got, _ := r.drawn(t, id)
		r.ip.Restore()
		return got
	}
	for tick := gw.Tick(21); tick <= 24; tick++ {
		assert.Equalf(t, ipStateX(14), pose(tick, true), "prediction of %d: the rest", tick)
	}
	assert.Equal(t, ipStateX(12), pose(12, true), "a tick before the rest: the state at 12")
	requireAtRest(t, r, id, ipStateX(14), 20, "Restore puts the rest back")

	r.set(e, ipStateX(30))
	r.send(t, 22) // it moves again (the rest lasts until 21)
	for tick := gw.Tick(21); tick <= 24; tick++ {
		assert.Equalf(t, ipStateX(14), pose(tick, false), "the check's replay of %d sees what its first run saw", tick)
	}
	assert.Equal(t, ipStateX(12), pose(12, false), "and of 12")
	assert.Equal(t, ipStateX(30), pose(22, true), "a correction's replay sees the newest")
	assert.Equal(t, ipStateX(30), pose(22, false), "and is what later checks reuse")
	requireDrawn(t, r, id, ipStateX(14), 20, "what the last frame drew")
	r.update(21)
	requireDrawn(t, r, id, ipStateX(14), 21, "the rest lasts until the tick before the new state")
	r.update(21.5)
	requireDrawn(t, r, id, ipBlend(ipStateX(14), ipStateX(30), 0.5), 21.5, "then it moves")
}

// Frames visit only the ghosts that move, yet a ghost at rest whose
// entity the game destroyed is dropped within ⌈n/256⌉ frames, and one the
// server despawns disappears at its tick.
func TestInterpolatorForgetsGhostsAtRest(t *testing.T) {
	r := newIPRig(t, 4)
	const n = 600
	var es []ecs.Entity
	var ids []components.GhostID
	for i := range n {
		e, id := r.spawn(t, ipStateX(float32(i)))
		es, ids = append(es, e), append(ids, id)
	}
	tick := gw.Tick(10)
	for r.send(t, tick); len(r.snap.Ghosts) > 0; r.send(t, tick) { // until every ghost arrived and rests
		require.Less(t, tick, gw.Tick(40))
		tick++
	}
	r.update(float64(tick))
	require.Equal(t, n, r.ip.Stats().Buffered)
	for _, id := range ids[:3] {
		requireAtRest(t, r, id, ipStateX(float32(id-ids[0])), float64(tick), "at rest")
	}
	ce, ok := r.cl.Entity(ids[7])
	require.True(t, ok)
	r.cw.Arche().RemoveEntity(ce)
	frames := 0
	for rt := float64(tick + 1); r.ip.Stats().Buffered == n && frames < 10; rt++ {
		r.update(rt)
		frames++
	}
	assert.Equal(t, n-1, r.ip.Stats().Buffered, "the destroyed one dropped")
	assert.LessOrEqual(t, frames, (n+255)/256, "within a sweep of every ghost")

	r.sw.Arche().RemoveEntity(es[9]) // the server destroys one: despawned at 60
	r.send(t, 60)
	r.update(59)
	_, ok = r.cl.Entity(ids[9])
	assert.True(t, ok, "shown until its despawn tick")
	r.update(60)
	_, ok = r.cl.Entity(ids[9])
	assert.False(t, ok, "gone at its despawn tick")
	assert.Equal(t, n-2, r.ip.Stats().Buffered)
}

// restingRig is a ghost that moves from 10 to 14 and rests from 14 on,
// shown at rest at render tick 20; it returns the server's entity too.
func restingRig(t *testing.T) (*ipRig, ecs.Entity, components.GhostID) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipStateX(10))
	for tick := gw.Tick(10); tick <= 14; tick++ {
		r.set(e, ipStateX(float32(tick)))
		r.send(t, tick)
	}
	for tick := gw.Tick(15); tick <= 17; tick++ {
		r.send(t, tick)
	}
	return r, e, id
}

// What a Pose wrote never outlives it: a frame between a Pose and its
// Restore, or a second Pose without one, starts from what is drawn.
func TestInterpolatorPosesDoNotLeakIntoTheDrawing(t *testing.T) {
	r, _, id := restingRig(t)
	r.update(13.5)
	r.ip.Pose(12, true)
	r.update(20) // comes to rest while posed
	r.ip.Restore()
	requireAtRest(t, r, id, ipStateX(14), 20, "the frame drew the rest")
	r.ip.Pose(12, true)
	r.ip.Restore()
	requireAtRest(t, r, id, ipStateX(14), 20, "Restore puts the rest back")

	r.ip.Pose(12, true)
	r.ip.Pose(22, true)
	got, _ := r.drawn(t, id)
	assert.Equal(t, ipStateX(14), got, "the prediction of 22 sees the rest, not what the Pose of 12 wrote")
	r.ip.Restore()
	requireAtRest(t, r, id, ipStateX(14), 20, "and Restore puts it back")
}

// A despawn taken back by a later snapshot leaves a ghost at rest as it
// was: not written by the frames that follow.
func TestInterpolatorGhostAtRestWhoseDespawnIsTakenBack(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipStateX(10))
	for tick := gw.Tick(10); tick <= 14; tick++ {
		r.set(e, ipStateX(float32(tick)))
		r.send(t, tick)
	}
	r.receive(t, r.packet(15, false))
	late := r.packet(16, false) // unacknowledged rests: 16 still holds the ghost
	r.send(t, 17)
	r.update(20)
	requireAtRest(t, r, id, ipStateX(14), 20, "at rest")
	require.NoError(t, protocol.DecodeSnapshot(late, r.s, &r.snap))
	require.Len(t, r.snap.Ghosts, 1, "the late snapshot holds the ghost")
	r.ip.Gone(id, 15)  // missing from a complete snapshot of 15...
	r.receive(t, late) // ...present in one of 16
	for _, rt := range []float64{21, 22, 23} {
		r.update(rt)
		_, in := r.drawn(t, id)
		require.Equal(t, 20.0, in.Tick, "render tick %v: frames leave a ghost at rest alone", rt)
	}
}

// A ghost shown at rest for more than 2³¹ ticks (a client connected for
// months) moves again when the server says it does.
func TestInterpolatorGhostAtRestForMonthsMovesAgain(t *testing.T) {
	r, e, id := restingRig(t)
	r.update(20)
	requireAtRest(t, r, id, ipStateX(14), 20, "at rest")
	later := gw.Tick(20 + 1<<31 + 1000)
	for rt := 20.0; rt < float64(later); rt += 1 << 26 { // months of frames
		r.update(rt)
	}
	r.update(float64(later))
	requireAtRest(t, r, id, ipStateX(14), float64(later), "still at rest")
	r.ip.Pose(later, true)
	got, _ := r.drawn(t, id)
	assert.Equal(t, ipStateX(14), got, "predictions of months later see the rest")
	r.ip.Restore()
	for k := range 4 {
		r.set(e, ipStateX(float32(100+k)))
		r.send(t, later.Add(k))
	}
	rt := float64(later) + 2
	r.update(rt)
	requireDrawn(t, r, id, ipStateX(102), rt, "moving again")
}

// A record equal to the ghost's newest state (sent in full, not said to
// rest) shares that state's values instead of a copy; the ring's slots
// stay right as it wraps, for the frames and for Pose, and a ghost
// between two equal states shows that state exactly.
func TestInterpolatorRepeatedStatesShareTheirValues(t *testing.T) {
	r := newIPRig(t, 4)
	e, id := r.spawn(t, ipState{})
	// The value changes every tick but the last three of every ten, which
	// repeat the one before them: more states of their own than half the
	// ring, and runs of equal records between them.
	v := func(tick gw.Tick) ipState { return ipStateX(float32(min(tick%10, 6)+tick/10*10)*0.5 + 0.125) }
	const last = 200
	for tick := gw.Tick(1); tick <= last; tick++ {
		r.set(e, v(tick))
		r.receive(t, r.packetOf(tick, []ecs.Entity{e}))
		rt := float64(tick) - 30.5
		if rt < 1 {
			continue
		}
		r.update(rt)
		lo := gw.Tick(rt)
		want := ipBlend(v(lo), v(lo+1), 0.5)
		if v(lo) == v(lo+1) {
			want = v(lo)
		}
		requireDrawn(t, r, id, want, rt, "between %d and %d", lo, lo+1)
	}
	// The ring holds the last 64 ticks.
	shared := 0
	for tick := gw.Tick(last - 62); tick <= last; tick++ {
		if v(tick) == v(tick-1) {
			shared++
		}
	}
	require.Positive(t, shared)
	assert.Equal(t, shared, ghostreg.SharedStates(r.ip, id), "states sharing the values before them")
	for tick := gw.Tick(last - 63); tick <= last; tick++ {
		r.ip.Pose(tick, false)
		got, _ := r.drawn(t, id)
		require.Equal(t, v(tick), got, "Pose at %d", tick)
	}
	r.ip.Restore()
	requireDrawn(t, r, id, ipBlend(v(last-31), v(last-30), 0.5), last-30.5, "Restore puts back what is drawn")

	// A ghost whose records keep the same values is shown exactly so,
	// however it is blended, and shares every state.
	for tick := gw.Tick(last + 1); tick <= last+70; tick++ {
		r.receive(t, r.packetOf(tick, []ecs.Entity{e}))
	}
	r.update(last + 40.25)
	requireDrawn(t, r, id, v(last), last+40.25, "between two equal states")
	assert.Equal(t, 63, ghostreg.SharedStates(r.ip, id), "every state shares the values before it")
}

// The interpolator keeps where each entity's components are between
// frames; a structural change of the world (an entity moved to another
// archetype, entities created that grow the storage, one removed) moves
// them, and frames, Pose and Restore must write where they are now.
func TestInterpolatorWritesWhereComponentsMoved(t *testing.T) {
	r := newIPRig(t, 4)
	var es []ecs.Entity
	var ids []components.GhostID
	for i := range 3 {
		e, id := r.spawn(t, ipStateX(float32(i*100)))
		es, ids = append(es, e), append(ids, id)
	}
	x := func(i int, tick gw.Tick) float32 { return float32(i*100) + float32(tick)*0.5 }
	send := func(tick gw.Tick) {
		for i, e := range es {
			r.set(e, ipStateX(x(i, tick)))
		}
		r.receive(t, r.packetOf(tick, es))
	}
	for tick := gw.Tick(1); tick <= 4; tick++ {
		send(tick)
	}
	check := func(rt float64, what string) {
		t.Helper()
		r.update(rt)
		lo := gw.Tick(rt)
		for i, id := range ids {
			requireDrawn(t, r, id, ipBlend(ipStateX(x(i, lo)), ipStateX(x(i, lo+1)), float32(rt-float64(lo))), rt, "ghost %d %s", i, what)
		}
	}
	check(1.5, "first shown")
	check(2, "a frame later")
	a := r.cw.Arche()
	first, _ := r.cl.Entity(ids[0])
	a.Add(first, ecs.ComponentID[clientOnlyA](a)) // moves the first to another archetype; the last takes its row
	check(2.25, "after an entity moved archetype")
	for range 300 { // grows the storage of the ghosts' archetype
		e := a.NewEntity(r.yid, r.pid, r.lid, r.iid)
		a.RemoveEntity(e)
		a.NewEntity(r.yid, r.pid, r.lid, r.iid)
	}
	send(5)
	check(3.5, "after the storage grew")
	r.ip.Pose(5, true)
	for i, id := range ids {
		got, _ := r.drawn(t, id)
		require.Equal(t, ipStateX(x(i, 5)), got, "ghost %d posed", i)
	}
	second, _ := r.cl.Entity(ids[1])
	a.RemoveEntity(second) // the game destroys one, between Pose and Restore
	r.ip.Restore()
	for _, i := range []int{0, 2} {
		requireDrawn(t, r, ids[i], ipBlend(ipStateX(x(i, 3)), ipStateX(x(i, 4)), 0.5), 3.5, "ghost %d restored", i)
	}
	r.update(3.75)
	_, shown := r.cl.Entity(ids[1])
	assert.False(t, shown, "the destroyed ghost is forgotten")
	for _, i := range []int{0, 2} {
		requireDrawn(t, r, ids[i], ipBlend(ipStateX(x(i, 3)), ipStateX(x(i, 4)), 0.75), 3.75, "ghost %d after a removal", i)
	}
}
