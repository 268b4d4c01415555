package systems

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/ghosts"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/transport"
)

// RollbackPolicy says when a client rolls back on a new snapshot.
type RollbackPolicy uint8

const (
	// RollbackOnMismatch rolls back only when the prediction at the
	// snapshot's tick differs from the server's state (bit-exactly, after
	// quantization). The default.
	RollbackOnMismatch RollbackPolicy = iota
	// RollbackAlways rolls back on every new snapshot, as Unity's Netcode
	// for Entities does; the result is the same, at the cost of replaying
	// every tick many times. (Same when the prediction reads only
	// predicted state and inputs: one that reads interpolated ghosts,
	// which rollback does not restore, predicts otherwise on a replay.)
	RollbackAlways
)

// String returns "mismatch" or "always".
func (p RollbackPolicy) String() string {
	switch p {
	case RollbackOnMismatch:
		return "mismatch"
	case RollbackAlways:
		return "always"
	}
	return fmt.Sprintf("RollbackPolicy(%d)", uint8(p))
}

// InputSource samples the local player's input, of the schema's input
// type, once per tick, never during replay; it may read devices (it is not
// a system). Make one with [InputFunc].
type InputSource struct {
	typ    reflect.Type
	sample func(w *gw.World, tick gw.Tick, out unsafe.Pointer)
}

// InputFunc adapts a function returning the game's input type T for a
// tick. A client refuses it when T is not the schema's input type.
func InputFunc[T any](f func(w *gw.World, tick gw.Tick) T) *InputSource {
	return &InputSource{typ: reflect.TypeFor[T](), sample: func(w *gw.World, tick gw.Tick, out unsafe.Pointer) {
		*(*T)(out) = f(w, tick)
	}}
}

// ClientOptions configures a [Client]. The zero value is usable.
type ClientOptions struct {
	// TickRate must equal the server's; 60 when zero.
	TickRate int
	// Input samples the player's input; nil sends the input type's zero
	// value.
	Input *InputSource
	// Rollback is the reconciliation policy.
	Rollback RollbackPolicy
	// HistoryCapacity is the prediction history in ticks; 128 when zero.
	HistoryCapacity int
	// Stream configures the input ring and redundancy.
	Stream netsync.InputStreamOptions
	// ClockSync configures how the client keeps its lead on the server.
	ClockSync netsync.ClockSyncOptions
	// Interpolation configures the delay (adaptive by default) and the
	// extrapolation cap of the ghosts this client does not predict.
	Interpolation netsync.InterpolationOptions
	// FixedScale, when not zero, pins the clock's time scale and disables
	// clock sync (for tests of misbehaving clients). Allowed: 0.5..2.
	FixedScale float64
	// HelloInterval is the time between connection attempts; 100 ms when
	// zero.
	HelloInterval time.Duration
	// Timeout ends a connection the server has sent nothing on for that
	// long (State Disconnected, Err naming the timeout); 5 s when zero,
	// the server's default. Allowed: 100ms..1h. Set it like the server's
	// ServerOptions.Timeout: a client stalled for longer has been dropped.
	Timeout time.Duration
	// OnSpawn and OnDespawn are passed to the ghost register.
	OnSpawn, OnDespawn func(w *gw.World, e ecs.Entity, g components.Ghost)
	// BeforeCorrection and AfterCorrection, if set, run around every
	// rollback or hard correction, so a game can measure or smooth the
	// visual jump. Neither may make structural changes.
	BeforeCorrection, AfterCorrection func(w *gw.World)
	// OnMisprediction, if set, is called for every predicted ghost whose
	// state at a snapshot's tick differs from the server's, naming the
	// first differing component and field with both values. It runs
	// inside the tick and must not make structural changes.
	OnMisprediction func(m Misprediction)
	// SyncTest, when not zero, runs every tick as a determinism check of
	// this client's prediction (see [gw.SyncTest]): the tick, then a
	// rollback of SyncTest ticks and their replay, compared with the first
	// run. The first difference is logged at Error, kept for
	// [Client.SyncTestErr] and counted in ClientStats.Desyncs. It costs
	// SyncTest replays per tick: for tests and debug builds. Allowed:
	// 0..HistoryCapacity-1.
	SyncTest int
	// Logger receives connection events; slog.Default() when nil.
	Logger *slog.Logger
}

// Misprediction is a predicted ghost whose state at a snapshot's tick
// differed from the server's.
type Misprediction struct {
	Tick  gw.Tick
	Ghost components.GhostID
	// Diff names the first component and field that differed; its
	// Values are the predicted value and the server's.
	Diff netsync.FieldDiff
}

// String describes the misprediction: ghost, tick, component, field and
// both values.
func (m Misprediction) String() string {
	return fmt.Sprintf("ghost %d mispredicted at tick %d: %v", m.Ghost, m.Tick, m.Diff)
}

// ClientState is where a client is in its connection's life.
type ClientState uint8

// The client states.
const (
	Connecting ClientState = iota
	Connected
	Refused
	Disconnected
)

// ClientStats counts what the client did since it started.
type ClientStats struct {
	Ticks             uint64
	Mispredictions    uint64 // snapshots whose tick the prediction got wrong
	Rollbacks         uint64 // rollbacks that restored, fixed and replayed; failures are RollbackErrors
	ReplayedTicks     uint64
	HardCorrections   uint64 // snapshot ticks outside the history: state written without replay
	SnapshotsReceived uint64
	SnapshotsStale    uint64 // older than one already received
	SnapshotsTooOld   uint64 // older than the history
	BadPackets        uint64
	ClockJumps        uint64
	SkippedTicks      uint64 // due after a stall, skipped instead of run late (see Client.Update)
	BytesSent         uint64
	BytesReceived     uint64
	RTT               time.Duration
	Jitter            time.Duration // RTT mean deviation
	Ahead             float64       // ticks ahead of the server's estimated tick
	Lead              float64       // how early inputs arrive, as the server reports it
	// InterpolationDelay is the current delay of interpolated ghosts and
	// RenderTick the server tick they were last shown at, a continuous
	// tick (gw.TickAt splits it).
	InterpolationDelay time.Duration
	RenderTick         float64
	Interpolation      ghosts.InterpolatorStats
	State              ClientState
	Reason             netsync.RejectReason // why Refused or Disconnected

	// MispredictionsBy counts mispredicted ghosts by the type name of the
	// first component that differed (netsync.FieldDiff.Component); nil
	// when none. Its keys are the schema's components, so it stays small.
	MispredictionsBy map[string]uint64
	// RollbackErrors counts rollbacks that failed (each logged at Error).
	RollbackErrors uint64
	// SyncTestChecks counts the replayed ticks the determinism check of
	// ClientOptions.SyncTest compared, Desyncs the ticks it found wrong.
	SyncTestChecks, Desyncs uint64
}

// Client is a predicting endpoint: one world with history, its schedule
// and clock, the ghost register, the input stream and one connection. The
// game adds its prediction systems (the same as the server's) to Schedule;
// they see the local player's input on its ghost's InputCommand.
type Client struct {
	World    *gw.World
	Schedule *gw.Schedule
	Clock    *gw.FixedClock
	Ghosts   *ghosts.Client
	Binding  *ghosts.Binding
	Inputs   *netsync.InputStream
	History  *gw.History
	// Interpolator shows the ghosts this client does not predict, at the
	// render tick of InterpolationClock.
	Interpolator       *ghosts.Interpolator
	InterpolationClock *netsync.InterpolationClock

	opts      ClientOptions
	src       gw.TimeSource
	conn      transport.Conn
	sync      *netsync.ClockSync
	rtt       netsync.RTT
	latest    *netsync.Snapshot
	scratch   *netsync.Snapshot
	hasLatest bool
	fresh     bool
	hello     netsync.Hello // prepared once; the clock is set per send
	lastHello time.Duration
	helloSent bool
	heard     time.Duration // when the server's last packet arrived
	dropped   uint64        // the clock's dropped ticks already skipped
	end       *ConnError    // why the connection was refused or ended
	hold      int
	catchUp   int
	rx        []byte
	tx        []byte
	batch     netsync.InputBatch
	welcome   netsync.Welcome
	// predicted selects the owned predicted ghosts, simulated all the
	// predicted ones, shown the interpolated ones.
	predicted *generic.Filter2[components.Ghost, components.InputHeader]
	simulated *generic.Filter1[components.Ghost]
	shown     *generic.Filter1[components.Ghost]
	sampled   []byte // the record being sampled
	hooks     []correctionHook
	render    float64 // continuous tick (see netsync.InterpolationClock)
	rendered  bool    // a frame showed the render tick
	lastFrame time.Duration
	stats     ClientStats
	log       *slog.Logger

	mispredictedBy map[string]uint64 // one key per schema component
	check          syncCheck         // ClientOptions.SyncTest
}

// NewClient creates a client world reading time from src and talking over
// conn. It errors naming the value on a bad option.
func NewClient(src gw.TimeSource, conn transport.Conn, schema *netsync.Schema, opts ClientOptions) (*Client, error) {
	if opts.TickRate == 0 {
		opts.TickRate = 60
	}
	if opts.HelloInterval == 0 {
		opts.HelloInterval = 100 * time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Timeout < 100*time.Millisecond || opts.Timeout > time.Hour {
		return nil, fmt.Errorf("systems: timeout %v outside 100ms..1h", opts.Timeout)
	}
	if opts.Rollback > RollbackAlways {
		return nil, fmt.Errorf("systems: unknown rollback policy %d", opts.Rollback)
	}
	if opts.SyncTest < 0 {
		return nil, fmt.Errorf("systems: sync test rollback %d is negative", opts.SyncTest)
	}
	if opts.FixedScale != 0 && !(opts.FixedScale >= 0.5 && opts.FixedScale <= 2) {
		return nil, fmt.Errorf("systems: fixed clock scale %v outside 0.5..2", opts.FixedScale)
	}
	clock, err := gw.NewFixedClock(src, gw.ClockOptions{TickRate: opts.TickRate})
	if err != nil {
		return nil, err
	}
	sync, err := netsync.NewClockSync(opts.ClockSync)
	if err != nil {
		return nil, err
	}
	stream, err := netsync.NewInputStream(schema, opts.Stream)
	if err != nil {
		return nil, err
	}
	if opts.Input != nil && opts.Input.typ != schema.InputType() {
		return nil, fmt.Errorf("systems: the input source samples %v but the schema's input type is %v", opts.Input.typ, schema.InputType())
	}

	iclock, err := netsync.NewInterpolationClock(clock.Interval(), opts.Interpolation)
	if err != nil {
		return nil, err
	}
	w := gw.NewWorld(gw.WorldOptions{Role: gw.RoleClient})
	h, err := gw.EnableHistory[components.Predicted](w, gw.HistoryOptions{Capacity: opts.HistoryCapacity})
	if err != nil {
		return nil, err
	}
	if stream.Capacity() < h.Capacity() {
		return nil, fmt.Errorf("systems: input stream capacity %d is below the history capacity %d: a long rollback would replay without inputs",
			stream.Capacity(), h.Capacity())
	}
	if opts.SyncTest >= h.Capacity() {
		return nil, fmt.Errorf("systems: sync test rollback %d outside 0..%d (history capacity - 1)", opts.SyncTest, h.Capacity()-1)
	}
	b := ghosts.Bind(w, schema)
	if err := registerReplicated(h, schema); err != nil {
		return nil, err
	}
	c := &Client{
		World: w, Schedule: gw.NewSchedule(), Clock: clock, Ghosts: ghosts.NewClient(b), Binding: b,
		Inputs: stream, History: h,
		opts: opts, src: src, conn: conn, sync: sync,
		latest: &netsync.Snapshot{}, scratch: &netsync.Snapshot{},
		rx: make([]byte, transport.MaxDatagramSize), tx: make([]byte, 0, netsync.MaxDatagram),
		predicted: generic.NewFilter2[components.Ghost, components.InputHeader]().With(generic.T[components.Predicted]()),
		simulated: generic.NewFilter1[components.Ghost]().With(generic.T[components.Predicted]()),
		shown:     generic.NewFilter1[components.Ghost]().With(generic.T[components.Interpolated]()),
		sampled:   make([]byte, schema.InputSize()),
		log:       opts.Logger,

		mispredictedBy: make(map[string]uint64, schema.NumComponents()),
		check:          syncCheck{depth: opts.SyncTest},
	}
	for i := 0; i < schema.NumComponents(); i++ {
		c.mispredictedBy[schema.ComponentType(netsync.ComponentID(i)).String()] = 0
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.hello = netsync.Hello{SchemaHash: schema.Hash(), TickRate: uint16(opts.TickRate),
		ComponentHashes: make([]uint64, schema.NumComponents())}
	for i := range c.hello.ComponentHashes {
		c.hello.ComponentHashes[i] = schema.ComponentHash(netsync.ComponentID(i))
	}
	if opts.FixedScale != 0 {
		clock.SetScale(opts.FixedScale)
	}
	c.Ghosts.OnSpawn, c.Ghosts.OnDespawn = opts.OnSpawn, opts.OnDespawn
	c.OnCorrection(opts.BeforeCorrection, opts.AfterCorrection)
	c.InterpolationClock = iclock
	if c.Interpolator, err = ghosts.NewInterpolator(c.Ghosts, iclock.MaxExtrapolation()); err != nil {
		return nil, err
	}
	c.Schedule.Add(gw.StageReceive, gw.SystemFunc(c.reconcile))
	c.Schedule.Add(gw.StageInput, gw.SystemFunc(c.sample))
	c.Schedule.Add(gw.StagePrePrediction, gw.SystemFunc(c.applyInput))
	c.Schedule.Add(gw.StagePostPrediction, gw.SystemFunc(c.quantize))
	c.Schedule.Add(gw.StageSend, gw.SystemFunc(c.send))
	c.Schedule.Add(gw.StageInterpolation, gw.SystemFunc(c.interpolate))
	return c, nil
}

// registerReplicated registers every replicated component for rollback,
// so reconciliation can restore and compare them.
func registerReplicated(h *gw.History, s *netsync.Schema) error {
	for i := 0; i < s.NumComponents(); i++ {
		if err := h.RegisterType(s.ComponentType(netsync.ComponentID(i))); err != nil {
			return err
		}
	}
	return nil
}

type correctionHook struct{ before, after func(w *gw.World) }

// OnCorrection adds functions called right before and after every
// rollback or hard correction (either may be nil), after those of the
// options. They may read and write component values, not the structure.
func (c *Client) OnCorrection(before, after func(w *gw.World)) {
	if before != nil || after != nil {
		c.hooks = append(c.hooks, correctionHook{before, after})
	}
}

// State returns the connection state.
func (c *Client) State() ClientState { return c.stats.State }

// Stats returns the counters.
func (c *Client) Stats() ClientStats {
	st := c.stats
	st.ReplayedTicks = c.Schedule.Stats().ReplayedTicks
	st.ClockJumps = c.sync.Jumps()
	st.RTT, st.Jitter = c.rtt.Smoothed(), c.rtt.Variation()
	cs := c.conn.Stats()
	st.BytesSent, st.BytesReceived = cs.SentBytes, cs.ReceivedBytes
	st.InterpolationDelay = time.Duration(c.InterpolationClock.Delay() * float64(c.Clock.Interval()))
	st.RenderTick = c.render
	st.Interpolation = c.Interpolator.Stats()
	for k, n := range c.mispredictedBy {
		if n > 0 {
			if st.MispredictionsBy == nil {
				st.MispredictionsBy = make(map[string]uint64)
			}
			st.MispredictionsBy[k] = n
		}
	}
	st.SyncTestChecks, st.Desyncs = c.check.checks(), c.check.desyncs
	return st
}

// SyncTestErr returns the first difference the determinism check of
// ClientOptions.SyncTest found (a *gw.DesyncError, which names the tick,
// entity, component and field, and says when the component is not
// registered for history), or nil.
func (c *Client) SyncTestErr() error { return c.check.first }

// tick runs one tick, through the determinism check when it is on.
func (c *Client) tick() { c.check.tick(c.Schedule, c.World, c.log) }

// Update reads the network, then runs the ticks that are due (none before
// the server's welcome). Call it once per frame. After a stall longer than
// the clock's catch-up cap it runs only the newest due tick and skips the
// others (see ClientStats.SkippedTicks); when the server has sent nothing
// for the timeout it ends the connection.
func (c *Client) Update() {
	now := c.src.Now()
	c.poll(now)
	switch c.stats.State {
	case Connecting:
		if !c.helloSent || now-c.lastHello >= c.opts.HelloInterval {
			c.hello.ClientTime = ms(now)
			c.tx = netsync.AppendHello(c.tx, &c.hello)
			_ = c.conn.Send(c.tx)
			c.lastHello, c.helloSent = now, true
		}
		c.Clock.Advance() // keep the accumulator current; no ticks before the welcome
		return
	case Refused, Disconnected:
		return
	}
	if now-c.heard > c.opts.Timeout {
		c.timeout()
		return
	}
	n := c.skipStall(c.Clock.Advance())
	n += c.catchUp
	c.catchUp = 0
	for ; n > 0; n-- {
		if c.hold > 0 {
			c.hold--
			continue
		}
		c.tick()
		c.stats.Ticks++
	}
}

// Frame runs the per-frame stages (interpolation, presentation).
func (c *Client) Frame() { c.Schedule.Frame(c.World) }

func (c *Client) poll(now time.Duration) {
	for {
		n, ok := c.conn.Receive(c.rx)
		if !ok {
			return
		}
		c.heard = now
		p := c.rx[:n]
		t, err := netsync.PeekType(p)
		if err != nil {
			c.stats.BadPackets++
			continue
		}
		switch t {
		case netsync.MsgWelcome:
			if c.stats.State != Connecting {
				continue
			}
			if err := netsync.DecodeWelcome(p, &c.welcome); err != nil || int(c.welcome.TickRate) != c.opts.TickRate {
				c.stats.BadPackets++
				continue
			}
			c.start(now)
		case netsync.MsgReject, netsync.MsgDisconnect:
			var m netsync.Reject
			if err := netsync.DecodeReject(p, t, &m); err != nil {
				c.stats.BadPackets++
				continue
			}
			c.finish(t, &m)
		case netsync.MsgSnapshot:
			if c.stats.State != Connected {
				continue
			}
			if err := netsync.DecodeSnapshot(p, c.Binding.Schema(), c.scratch); err != nil {
				c.stats.BadPackets++
				continue
			}
			c.stats.SnapshotsReceived++
			if c.hasLatest && int32(c.scratch.Tick-c.latest.Tick) <= 0 {
				c.stats.SnapshotsStale++
				continue
			}
			if c.fresh {
				// Replaced before any tick reconciled it: only its states
				// of interpolated ghosts still matter, and they must not
				// be lost.
				c.pushInterpolated(c.latest)
			}
			c.latest, c.scratch = c.scratch, c.latest
			c.hasLatest, c.fresh = true, true
			c.InterpolationClock.Observe(c.latest.Tick, now)
			if rtt := now - time.Duration(c.latest.EchoTime)*time.Millisecond - time.Duration(c.latest.Hold)*time.Millisecond; c.latest.EchoTime != 0 && rtt >= 0 {
				c.rtt.Sample(rtt)
			}
		default:
			c.stats.BadPackets++
		}
	}
}

// start adopts the server's clock: the client's tick is set ahead of the
// server's by the round trip plus the target margin, so its first inputs
// arrive just before the server needs them.
func (c *Client) start(now time.Duration) {
	c.stats.State = Connected
	c.heard, c.dropped = now, c.Clock.DroppedTicks()
	c.Ghosts.SetConn(c.welcome.Conn)
	rtt := now - time.Duration(c.welcome.EchoTime)*time.Millisecond - time.Duration(c.welcome.Hold)*time.Millisecond
	c.rtt.Sample(rtt)
	interval := c.Clock.Interval()
	ahead := math.Ceil(float64(rtt)/float64(interval) + c.sync.TargetLead() + 1)
	c.World.SetTick(c.welcome.ServerTick.Add(int(ahead)))
	c.log.Debug("ghostwire: connected", "conn", c.welcome.Conn, "tick", c.World.Tick(), "rtt", rtt)
}

// reconcile applies the newest snapshot: clock feedback, spawns and
// despawns, interpolated state, and for predicted ghosts a comparison with
// the prediction at the snapshot's tick and, when needed, a rollback.
func (c *Client) reconcile(w *gw.World) {
	if !c.fresh {
		return
	}
	c.fresh = false
	s := c.latest
	tick := s.Tick
	c.stats.Lead = float64(s.Lead)
	c.stats.Ahead = float64(w.Tick().Sub(tick)) - float64(c.rtt.Smoothed())/2/float64(c.Clock.Interval())
	if s.HasConfirmed {
		c.Inputs.Confirm(s.Confirmed)
		if c.opts.FixedScale == 0 {
			scale, jump := c.sync.Feedback(float64(s.Lead), s.Confirmed, w.Tick())
			c.Clock.SetScale(scale)
			if jump > 0 {
				c.catchUp += min(jump, 60)
			} else if jump < 0 {
				c.hold += min(-jump, 60)
			}
		}
	}

	mismatch, spawning := false, false
	held := c.History.Has(tick)
	layout := w.LayoutVersion()
	c.pushInterpolated(s)
	for gi := range s.Ghosts {
		g := &s.Ghosts[gi]
		if !c.Ghosts.Predicts(&g.Ghost) {
			continue
		}
		e, ok := c.Ghosts.Lookup(g.ID)
		if !ok {
			spawning = true
			continue
		}
		// A ghost the history does not hold at this tick was spawned later
		// on this client: the snapshot says nothing new about it.
		if diff, equal, recorded := c.Ghosts.Compare(c.History, tick, e, s, gi); recorded && !equal {
			mismatch = true
			c.mispredicted(tick, g.ID, diff)
		}
	}
	c.Ghosts.Sweep(s)
	if w.LayoutVersion() != layout {
		c.check.restart() // a ghost removed outside the prediction
	}
	if mismatch {
		c.stats.Mispredictions++
	}
	newest, hasNewest := c.History.Newest()
	act := decide(reconcileInput{held: held, hasNewest: hasNewest, newest: newest, tick: tick,
		mismatch: mismatch, spawning: spawning, policy: c.opts.Rollback})
	switch act {
	case actNone:
		return
	case actTooOld:
		c.stats.SnapshotsTooOld++
		return
	}
	// fix writes the snapshot's state into the predicted ghosts (spawning
	// new ones); spawnOnly leaves existing ghosts alone, for a snapshot too
	// old to correct them.
	spawnOnly := act == actSpawnOnly
	fix := func(w *gw.World) {
		for gi := range s.Ghosts {
			g := &s.Ghosts[gi]
			if !c.Ghosts.Predicts(&g.Ghost) {
				continue
			}
			if e, ok := c.Ghosts.Lookup(g.ID); !ok {
				c.Ghosts.Spawn(s, gi)
			} else if !spawnOnly {
				c.Ghosts.Write(e, s, gi)
			}
		}
	}
	for _, h := range c.hooks {
		if h.before != nil {
			h.before(w)
		}
	}
	switch act {
	case actRollback:
		if err := c.Schedule.Rollback(w, tick, fix); err != nil {
			c.stats.RollbackErrors++
			c.log.Error("ghostwire: rollback failed", "tick", tick, "err", err)
		} else {
			c.stats.Rollbacks++
		}
	case actAdopt:
		fix(w)
		c.stats.HardCorrections++
	case actSpawnOnly:
		c.stats.SnapshotsTooOld++
		fix(w)
		c.stats.HardCorrections++
	}
	for _, h := range c.hooks {
		if h.after != nil {
			h.after(w)
		}
	}
	if act != actRollback || w.LayoutVersion() != layout {
		c.check.restart() // state written without replay, or a spawn
	}
}

// mispredicted reports one predicted ghost whose state at tick differs
// from the server's: counted per component, logged at Debug (formatted
// only when Debug is on) and given to OnMisprediction.
func (c *Client) mispredicted(tick gw.Tick, id components.GhostID, d netsync.FieldDiff) {
	c.mispredictedBy[d.Component]++
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		predicted, server := d.Values()
		c.log.Debug("ghostwire: misprediction", "ghost", id, "tick", tick, "component", d.Component, "field", d.Field,
			"predicted", predicted, "server", server)
	}
	if c.opts.OnMisprediction != nil {
		c.opts.OnMisprediction(Misprediction{Tick: tick, Ghost: id, Diff: d})
	}
}

// pushInterpolated gives the interpolator the states of the ghosts of s
// this client does not predict.
func (c *Client) pushInterpolated(s *netsync.Snapshot) {
	for gi := range s.Ghosts {
		if !c.Ghosts.Predicts(&s.Ghosts[gi].Ghost) {
			c.Interpolator.Push(s, gi)
		}
	}
}

// sample records the local player's input for the tick. Until the client's
// own ghost exists it sends neutral input: there is nothing to control, and
// the server must not move a player the client cannot see.
func (c *Client) sample(w *gw.World) {
	clear(c.sampled)
	if c.opts.Input != nil && c.ownsGhost(w) {
		c.opts.Input.sample(w, w.Tick(), unsafe.Pointer(unsafe.SliceData(c.sampled)))
	}
	h := components.InputHeader{Tick: w.Tick()}
	// What the player sees is the last frame's render tick (once a frame
	// showed one): the server rewinds to it for lag compensation.
	if c.rendered {
		tick, frac := gw.TickAt(c.render)
		h.HasView, h.ViewTick = true, tick
		// A fraction a hair below 1 must not round up to a whole tick.
		h.ViewFraction = min(float32(frac), math.Nextafter32(1, 0))
		h.InterpolationDelay = float32(c.InterpolationClock.Delay())
	}
	c.Inputs.Record(h, c.sampled)
}

// interpolate advances the render tick and shows the interpolated ghosts
// at it, once per frame.
func (c *Client) interpolate(w *gw.World) {
	now := c.src.Now()
	frame := float64(now-c.lastFrame) / float64(c.Clock.Interval())
	c.lastFrame = now
	if c.stats.State != Connected {
		return
	}
	if !c.InterpolationClock.Started() {
		return
	}
	c.render, c.rendered = c.InterpolationClock.Advance(now), true
	c.Interpolator.Update(c.render, frame)
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
		if c.Ghosts.Owned(shown.Get()) {
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
	h, rec, ok := c.Inputs.Get(w.Tick())
	if !ok {
		h, rec = components.InputHeader{Tick: w.Tick()}, c.sampled[:0]
	}
	a := w.Arche()
	b := c.Binding
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

// quantize rounds the predicted ghosts' replicated components the way the
// server does at the end of its tick.
func (c *Client) quantize(w *gw.World) {
	q := c.simulated.Query(w.Arche())
	for q.Next() {
		g := q.Get()
		c.Binding.Quantize(q.Entity(), netsync.GhostTypeID(g.Type))
	}
}

// send transmits the input batch of the tick.
func (c *Client) send(w *gw.World) {
	c.Inputs.Batch(&c.batch)
	if len(c.batch.Heads) == 0 {
		return
	}
	c.batch.ClientTime = ms(c.src.Now())
	if c.hasLatest {
		c.batch.AckTick = c.latest.Tick
	}
	c.tx = netsync.AppendInputs(c.tx, c.Binding.Schema(), &c.batch)
	_ = c.conn.Send(c.tx)
}
