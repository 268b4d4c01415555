package systems

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ghostwire/ghostwire/internal/fixedclock"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/ghosts"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/transport"
)

// ClientOptions configures a [Client]. The zero value is usable.
type ClientOptions struct {
	// Input samples the player's input; nil sends the input type's zero
	// value.
	Input *InputSource
	// RollbackAlways rolls back on every new snapshot, as Unity's Netcode
	// for Entities does, instead of only when the prediction at the
	// snapshot's tick differs from the server's state (bit-exactly, after
	// quantization). The result is the same, at the cost of replaying
	// every tick many times (same when the prediction reads only
	// predicted state and inputs: one that reads interpolated ghosts,
	// which rollback does not restore, predicts otherwise on a replay).
	RollbackAlways bool
	// HistoryCapacity is the prediction history in ticks; 128 when zero.
	HistoryCapacity int
	// InputHistory is the number of ticks of the player's own input kept
	// for replay and resend; 256 when zero. Allowed: 16..65536. It must
	// exceed the longest rollback.
	InputHistory int
	// InputRedundancy is the least number of newest inputs every packet
	// carries, confirmed or not, so one lost packet costs nothing; 4 when
	// zero. Allowed: 1..32.
	InputRedundancy int
	// InputDelay delays the player's input by a fixed or an adaptive
	// number of ticks, trading responsiveness for fewer and shorter
	// rollbacks (see InputDelay); none when zero. Client.SetInputDelay
	// changes it mid-game. InputHistory must hold HistoryCapacity plus
	// the longest delay it asks for.
	InputDelay InputDelay
	// TargetLead is the margin, in ticks, by which the client wants its
	// worst recent input to arrive before the server needs it; 1 when
	// zero. Allowed: 0.25..30.
	TargetLead float64
	// MaxClockAdjust bounds the clock's time scale to 1 ± MaxClockAdjust
	// while it steers its lead; 0.05 when zero. Allowed: 0.001..0.5.
	MaxClockAdjust float64
	// ClockGain is the time scale change per tick of lead error; 0.02
	// when zero. Allowed: 0.0001..0.5.
	ClockGain float64
	// ClockResetAfter is the lead error, in ticks, beyond which the clock
	// jumps instead of drifting; 10 when zero. Allowed: 2..1000.
	ClockResetAfter float64
	// InterpolationDelay is a fixed delay for the ghosts this client does
	// not predict; 0 adapts it to the measured send interval, jitter and
	// loss. Allowed: 0..1s.
	InterpolationDelay time.Duration
	// MaxExtrapolation caps how far past the newest received state those
	// ghosts are extrapolated before they hold; 4 ticks when zero.
	// Allowed: 0..60 ticks (a negative value disables extrapolation).
	MaxExtrapolation float64
	// FixedScale, when not zero, pins the clock's time scale and disables
	// clock sync (for tests of misbehaving clients). Allowed: 0.5..2.
	FixedScale float64
	// HelloInterval is the time between connection attempts; 100 ms when
	// zero.
	HelloInterval time.Duration
	// Timeout ends a connection the server has sent nothing on for that
	// long (Err then names the timeout); 5 s when zero,
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
	// state at a snapshot's tick differs from the server's, with the
	// tick, the ghost, and the first differing component and field with
	// the predicted value and the server's (diff.String prints them). It
	// runs inside the tick and must not make structural changes.
	OnMisprediction func(tick gw.Tick, ghost components.GhostID, diff netsync.FieldDiff)
	// OnConfirm, if set, receives the server's verdict of each shot of
	// this client (judged by a lagcomp.Compensator given the server in
	// lagcomp.Options.Server): exactly once, in the order the server
	// judged them, across loss, duplication and reordering. shot is the
	// input tick of the shot; reason the verdict's lagcomp.Reason key
	// ("other" for one a game's own judge made up); target the ghost hit
	// (or the visible one a wall hid) on this client, the zero entity when
	// none or not shown. It runs when the packet is received, outside any
	// tick: it may count and show, not change the world's structure.
	OnConfirm func(w *gw.World, shot gw.Tick, hit bool, reason string, target ecs.Entity, part uint8)
	// ClaimView, if set, may rewrite the header of each sampled input
	// (the view tick, fraction and interpolation delay the client claims
	// to have shown) before the input is recorded and sent. It exists to
	// test a server's lag-compensation rules against what a modified
	// client would claim, such as a view older than the one it showed;
	// a game leaves it nil.
	ClaimView func(h *components.InputHeader)
	// SpawnMatchWindow is how many ticks after a predicted spawn's tick
	// (components.SpawnGhost) the server's ghost may have been spawned on
	// and still take it over: an input that arrived late runs on a later
	// server tick. A predicted spawn no ghost took over is removed once a
	// snapshot SpawnMatchWindow+8 ticks past its tick arrives, about a
	// round trip plus that many ticks after it was predicted (counted in
	// ClientStats.SpawnsUnmatched). 8 when zero. Allowed: 0..120.
	SpawnMatchWindow int
	// MatchSpawn, if set, decides whether the server's new ghost g takes
	// over the predicted spawn e of the same type, in place of the tick
	// window above (a game that numbers its projectiles compares their
	// numbers). Pending spawns are offered oldest first; it must not make
	// structural changes.
	MatchSpawn func(w *gw.World, e ecs.Entity, g components.Ghost) bool
	// SwitchBlend is how long the display takes to slide from where a
	// ghost was predicted to where the interpolation shows it when
	// Client.Predict switches it to interpolated (the time constant of an
	// exponential fade); 100 ms when zero. Allowed: 0..2s (a negative
	// value switches at once).
	SwitchBlend time.Duration
	// SyncTest, when not zero, runs every tick as a determinism check of
	// this client's prediction (see [gw.SyncTest]): the tick, then a
	// rollback of SyncTest ticks and their replay, compared with the first
	// run. The first difference is logged at Error, kept for
	// ClientStats.FirstDesync and counted in ClientStats.Desyncs. It costs
	// SyncTest replays per tick: for tests and debug builds. Allowed:
	// 0..HistoryCapacity-1.
	SyncTest int
	// MessageBytesPerSecond is the most bytes of reliable game messages
	// (docs/messages.md) the client sends per second, spread over its
	// ticks: each tick's flush sends, after the tick's inputs, at most
	// MessageBytesPerSecond/TickRate bytes of them (the last entry may
	// pass it by up to 1,191 bytes), and the rest waits for the next
	// tick, so a large message never holds the inputs back (see
	// ServerOptions.MessageBytesPerSecond). 128,000 (1 Mbit/s) when zero.
	// Allowed: 0 or 1,000..1,000,000,000.
	MessageBytesPerSecond int
	// Logger receives connection events; slog.Default() when nil.
	Logger *slog.Logger
}

// clientState is where a client is in its connection's life.
type clientState uint8

const (
	stateConnecting clientState = iota
	stateConnected
	stateRefused
	stateDisconnected
)

// resyncAsks is how many input batches in a row ask the server for full
// states after a delta record could not be completed.
const resyncAsks = 8

// ClientStats counts what the client did since it started.
type ClientStats struct {
	Ticks             uint64
	Mispredictions    uint64 // snapshots whose tick the prediction got wrong
	Rollbacks         uint64 // rollbacks that restored, fixed and replayed; failures are RollbackErrors
	ReplayedTicks     uint64
	HardCorrections   uint64 // snapshot ticks outside the history: state written without replay
	SnapshotsReceived uint64
	SnapshotsStale    uint64 // older than one already received
	SnapshotParts     uint64 // further packets of a tick's snapshot (see ServerOptions.BytesPerSecond)
	// SnapshotsTooOld counts snapshots whose tick precedes the client's
	// history: only the ghosts they spawn are taken, nothing is
	// corrected. The first few after connecting are (the client starts
	// ahead of the server's tick, so its history begins after them), and
	// so is any after a stall longer than the history; a steady count
	// beyond those means HistoryCapacity is shorter than the round trip.
	SnapshotsTooOld uint64
	// Unresolved counts ghost records dropped because they came without
	// an identity and named a ghost this client did not hold (the game
	// destroyed its entity): such a ghost comes back only when the server
	// sends its identity again.
	Unresolved uint64
	// BaselineMissing counts ghost records dropped because they were
	// deltas against a state this client did not hold: only a server that
	// breaks the protocol causes it.
	BaselineMissing uint64
	// ValueRefused counts ghost records dropped because a value coded
	// relative to its baseline decoded outside its field's range: a
	// server breaking the protocol, too. Either asks the server for full
	// states.
	ValueRefused uint64
	BadPackets   uint64 // undecodable datagrams or messages
	ClockJumps   uint64
	SkippedTicks uint64 // due after a stall, skipped instead of run late (see Client.Update)
	// InputDelay is the input delay in use, in ticks (see
	// ClientOptions.InputDelay); InputDelayChanges counts the one-tick
	// steps it took to get there and since.
	InputDelay        int
	InputDelayChanges uint64
	BytesSent         uint64 // datagram bytes, packet headers included
	BytesReceived     uint64
	// LinkRTT and LinkLoss are the packet layer's estimates: the round
	// trip of its packets and acks, and the share of packets lost.
	LinkRTT  time.Duration
	LinkLoss float64
	// PacketsRefused counts packets the packet layer dropped at a receive
	// cap (reliable window, held bytes, fragments).
	PacketsRefused uint64
	RTT            time.Duration
	Jitter         time.Duration // RTT mean deviation
	Ahead          float64       // ticks ahead of the server's estimated tick
	Lead           float64       // how early inputs arrive, as the server reports it
	// InterpolationDelay is the current delay of interpolated ghosts and
	// RenderTick the server tick they were last shown at, a continuous
	// tick (gw.TickAt splits it).
	InterpolationDelay time.Duration
	RenderTick         float64
	// ExtrapolatedTicks adds up, over remote ghosts and frames, the
	// ticks shown past the newest received state; MaxExtrapolation is the
	// furthest any was shown past it, in ticks (never beyond
	// ExtrapolationCap). HeldTicks is the part of ExtrapolatedTicks
	// shown held at that cap. Teleports counts blends replaced by a jump.
	ExtrapolatedTicks float64
	MaxExtrapolation  float64
	HeldTicks         float64
	Teleports         uint64
	// InterpolatedSpawns and InterpolatedDespawns count remote ghosts
	// shown once the render tick reached them and removed when it reached
	// their despawn; InterpolationBuffered the ghosts with a buffer of
	// received states now.
	InterpolatedSpawns, InterpolatedDespawns uint64
	InterpolationBuffered                    int
	// SnapshotLoss is the estimated share of snapshots lost on the way and
	// ExtrapolationCap how far past its newest state a remote ghost may be
	// shown, in ticks.
	SnapshotLoss     float64
	ExtrapolationCap float64
	// NewestSnapshot is the newest snapshot tick received, when
	// SnapshotsReceived > 0; Confirmed the newest input tick the server
	// confirmed applying, when HasConfirmed.
	NewestSnapshot gw.Tick
	Confirmed      gw.Tick
	HasConfirmed   bool
	Reason         netsync.RejectReason // why the server refused or ended the connection (see Client.Err)

	// Confirmations counts the verdicts of this client's shots delivered
	// (ClientOptions.OnConfirm), ConfirmedHits those that hit;
	// ConfirmsDuplicate the copies dropped (resent, duplicated or
	// reordered on the way) and ConfirmsMissed the verdicts the server
	// gave up because this client acknowledged none of 256.
	Confirmations, ConfirmedHits, ConfirmsDuplicate, ConfirmsMissed uint64

	// MispredictionsBy counts mispredicted ghosts by the type name of the
	// first component that differed (netsync.FieldDiff.Component); nil
	// when none. Its keys are the schema's components, so it stays small.
	// Server-owned components (netsync.SchemaBuilder.ServerOwned) are
	// never compared, so never among them.
	MispredictionsBy map[string]uint64
	// ServerOwnedChanges counts the values of server-owned components of
	// predicted ghosts that a snapshot changed: taken as they arrived,
	// without comparison or rollback, and logged at Debug as
	// "ghostwire: server-owned value taken". A count that grows while
	// the prediction is right is the server deciding (damage, a respawn
	// time); none at all on a ghost type that declares them means the
	// declaration is not needed.
	ServerOwnedChanges uint64
	// RollbackErrors counts rollbacks that failed (each logged at Error).
	RollbackErrors uint64
	// SyncTestChecks counts the replayed ticks the determinism check of
	// ClientOptions.SyncTest compared, Desyncs the ticks it found wrong,
	// and FirstDesync is the first difference it found (a
	// *gw.DesyncError, which names the tick, entity, component and
	// field, and says when the component is not registered for
	// history), or nil.
	SyncTestChecks, Desyncs uint64
	FirstDesync             error
	// SmoothingSnaps counts the corrections a Smoother found too large
	// to smooth.
	SmoothingSnaps uint64
	// SpawnsPredicted counts the spawns this client predicted
	// (components.SpawnGhost), SpawnsMatched those a server ghost took
	// over, SpawnsUnmatched those removed because none did within
	// ClientOptions.SpawnMatchWindow (or whose entity the game removed
	// first), and SpawnsDiscarded the requests this client would not
	// predict (another connection's ghost, an interpolated type, a
	// missing component). SpawnLag is the most ticks a matched ghost was
	// spawned after its prediction.
	SpawnsPredicted, SpawnsMatched, SpawnsUnmatched, SpawnsDiscarded uint64
	SpawnLag                                                         int
	// SwitchedToPredicted and SwitchedToInterpolated count the ghosts
	// Client.Predict switched.
	SwitchedToPredicted, SwitchedToInterpolated uint64
	// Predicted events (see Raise and HandleEvent): EventsPredicted
	// counts those played at once on a prediction, EventsConfirmed those
	// of them the server had, EventsCancelled those it did not (cancelled
	// once its events of their window arrived), EventsLate the server's
	// events this client had not predicted, played when they arrived,
	// EventLateTicks the sum and EventLateMax the most of their LateBy.
	// EventsSettled counts raises a replay made for a tick the server's
	// events had judged already (never played), EventsDropped raises
	// beyond MaxPendingEvents, EventsForgotten judged events forgotten
	// early to make room (a replay raising one again would play it).
	EventsPredicted, EventsConfirmed, EventsCancelled, EventsLate uint64
	EventLateTicks                                                uint64
	EventLateMax                                                  int
	EventsSettled, EventsDropped, EventsForgotten                 uint64
	// Messages counts the game's messages with the server
	// (docs/messages.md).
	Messages MessageStats
}

// Client is a predicting endpoint: one world with history, its schedule
// and clock, the ghost register, the input stream and one connection. The
// game adds its prediction systems (the same as the server's) to Schedule;
// they see the local player's input on its ghost: the game's input type
// beside components.InputHeader.
type Client struct {
	world    *gw.World
	schedule *gw.Schedule
	clock    *fixedclock.Clock
	ghosts   *ghostreg.ClientRegister
	binding  *ghostreg.Binding
	inputs   *control.InputStream
	history  *gw.History
	// Interpolator shows the ghosts this client does not predict, at the
	// render tick of InterpolationClock.
	interpolator *ghostreg.Interpolator
	// posedTo is the newest tick the interpolated ghosts were posed for
	// (see poseOthers), when posed: later ticks are first runs.
	posedTo gw.Tick
	posed   bool
	// correcting is set while a correction's rollback replays.
	correcting bool
	// delay is the input delay in use, delayWant the one it moves toward
	// (see InputDelay), re-evaluated when delayEval due ticks have
	// passed; sampledNow is set when the tick recorded a new input, which
	// it then sends.
	delay, delayWant, delayEval int
	sampledNow                  bool
	iclock                      *control.InterpolationClock

	opts ClientOptions
	rate int // ticks per second (Game.TickRate)
	src  gw.TimeSource
	raw  transport.Conn // under link, for its byte counters
	link *link
	// events matches the predicted events with the server's.
	events clientEvents
	// msgs sends and receives the game's messages, msgPeer keeps their
	// state and counters.
	msgs    *messenger
	msgPeer peerMessages
	claim   components.InputHeader // the header ClaimView rewrites
	spawnQ  spawnQueries           // the spawn and despawn requests
	pending []pendingSpawn         // predicted spawns not yet confirmed
	// switchedIn holds the ghosts switched to predicted whose state the
	// next snapshot holding them establishes by a rollback.
	switchedIn map[components.GhostID]bool
	sync       *control.ClockSync
	rtt        control.RTT
	latest     *protocol.Snapshot
	scratch    *protocol.Snapshot
	hasLatest  bool
	fresh      bool
	// latestParts has bit i set when part i of latest's tick arrived.
	latestParts uint8
	// missingSeen is the register's BaselineMissing and ValueRefused
	// when last looked at;
	// resyncAsks how many more input batches ask for full states.
	missingSeen uint64
	resyncAsks  int
	hello       protocol.Hello // prepared once; the clock is set per send
	lastHello   time.Duration
	helloSent   bool
	heard       time.Duration // when the server's last packet arrived
	dropped     uint64        // the clock's dropped ticks already skipped
	end         *ConnError    // why the connection was refused or ended
	hold        int
	catchUp     int
	tx          []byte
	batch       protocol.InputBatch
	// confirms is the scratch of a decoded confirmation packet;
	// nextConfirm the sequence number of the next verdict to deliver.
	confirms    []protocol.Confirm
	nextConfirm uint32
	welcome     protocol.Welcome
	// predicted selects the owned predicted ghosts, simulated all the
	// predicted ones, shown the interpolated ones.
	predicted *generic.Filter2[components.Ghost, components.InputHeader]
	simulated *generic.Filter1[components.Ghost]
	shown     *generic.Filter1[components.Ghost]
	sampled   []byte // the record being sampled
	hooks     []correctionHook
	render    float64 // continuous tick (see control.InterpolationClock)
	rendered  bool    // a frame showed the render tick
	lastFrame time.Duration
	state     clientState
	stats     ClientStats
	log       *slog.Logger

	mispredictedBy map[string]uint64     // one key per schema component
	onOwned        func(codec.FieldDiff) // ownedChanged, made once
	check          syncCheck             // ClientOptions.SyncTest
}

// NewClient creates a client world running game, reading time from src
// and talking over conn: the netcode systems, then the game's prediction,
// effect and presentation systems, are installed in its schedule. It
// errors naming the value on a bad option or a bad Game.
func NewClient(src gw.TimeSource, conn transport.Conn, game *Game, opts ClientOptions) (*Client, error) {
	rate, err := game.check()
	if err != nil {
		return nil, err
	}
	cs := (*codec.Schema)(game.Schema)
	if opts.SwitchBlend == 0 {
		opts.SwitchBlend = defaultSwitchBlend
	}
	if opts.SwitchBlend > 2*time.Second {
		return nil, fmt.Errorf("systems: switch blend %v outside 0..2s", opts.SwitchBlend)
	}
	if opts.SpawnMatchWindow == 0 {
		opts.SpawnMatchWindow = 8
	}
	if opts.SpawnMatchWindow < 0 || opts.SpawnMatchWindow > 120 {
		return nil, fmt.Errorf("systems: spawn match window %d ticks outside 0..120", opts.SpawnMatchWindow)
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
	if opts.SyncTest < 0 {
		return nil, fmt.Errorf("systems: sync test rollback %d is negative", opts.SyncTest)
	}
	if err := checkMessageBytes(opts.MessageBytesPerSecond); err != nil {
		return nil, err
	}
	if opts.FixedScale != 0 && !(opts.FixedScale >= 0.5 && opts.FixedScale <= 2) {
		return nil, fmt.Errorf("systems: fixed clock scale %v outside 0.5..2", opts.FixedScale)
	}
	clock, err := fixedclock.New(src, fixedclock.Options{TickRate: rate})
	if err != nil {
		return nil, err
	}
	sync, err := control.NewClockSync(control.ClockSyncOptions{TargetLead: opts.TargetLead, MaxAdjust: opts.MaxClockAdjust, Gain: opts.ClockGain, ResetAfter: opts.ClockResetAfter})
	if err != nil {
		return nil, err
	}
	stream, err := control.NewInputStream(cs, control.InputStreamOptions{Capacity: opts.InputHistory, Redundancy: opts.InputRedundancy})
	if err != nil {
		return nil, err
	}
	if opts.InputDelay, err = opts.InputDelay.check(); err != nil {
		return nil, err
	}
	if opts.Input != nil && opts.Input.typ != cs.InputType() {
		return nil, fmt.Errorf("systems: the input source samples %v but the cs's input type is %v", opts.Input.typ, cs.InputType())
	}

	iclock, err := control.NewInterpolationClock(clock.Interval(), control.InterpolationOptions{Delay: opts.InterpolationDelay, MaxExtrapolation: opts.MaxExtrapolation})
	if err != nil {
		return nil, err
	}
	w := gw.NewWorld(gw.WorldOptions{})
	h, err := gw.EnableHistory[components.Predicted](w, opts.HistoryCapacity)
	if err != nil {
		return nil, err
	}
	if err := roomForDelay(stream.Capacity(), h.Capacity(), opts.InputDelay); err != nil {
		return nil, err
	}
	if opts.SyncTest >= h.Capacity() {
		return nil, fmt.Errorf("systems: sync test rollback %d outside 0..%d (history capacity - 1)", opts.SyncTest, h.Capacity()-1)
	}
	b := ghostreg.Bind(w, cs)
	if err := registerReplicated(h, cs); err != nil {
		return nil, err
	}
	// A predicted despawn is undone by a rollback to before it.
	if err := gw.Register[components.Despawned](h); err != nil {
		return nil, err
	}
	var lo linkOptions
	lo.maxMessage, lo.perFlush = messageLink(cs, opts.MessageBytesPerSecond, rate)
	c := &Client{
		world: w, schedule: gw.NewSchedule(), clock: clock, ghosts: ghostreg.NewClientRegister(b), binding: b,
		inputs: stream, history: h, msgPeer: newPeerMessages(cs),
		opts: opts, rate: rate, src: src, raw: conn, link: newLink(conn, src, lo), sync: sync,
		latest: &protocol.Snapshot{}, scratch: &protocol.Snapshot{},
		tx:        make([]byte, 0, protocol.MaxDatagram),
		predicted: generic.NewFilter2[components.Ghost, components.InputHeader]().With(generic.T[components.Predicted]()),
		simulated: generic.NewFilter1[components.Ghost]().With(generic.T[components.Predicted]()),
		shown:     generic.NewFilter1[components.Ghost]().With(generic.T[components.Interpolated]()),
		sampled:   make([]byte, cs.InputSize()),
		log:       opts.Logger,

		mispredictedBy: make(map[string]uint64, cs.NumComponents()),
		check:          syncCheck{depth: opts.SyncTest},
	}
	for i := 0; i < cs.NumComponents(); i++ {
		c.mispredictedBy[cs.ComponentType(codec.ComponentID(i)).String()] = 0
	}
	c.mispredictedBy[despawnedName] = 0
	c.switchedIn = map[components.GhostID]bool{}
	c.spawnQ = newSpawnQueries(w)
	c.msgs = newMessenger(w, cs, nil, c)
	c.initEvents(cs)
	if c.log == nil {
		c.log = slog.Default()
	}
	c.onOwned = c.ownedChanged
	c.hello = protocol.Hello{SchemaHash: cs.Hash(), TickRate: uint16(rate),
		ComponentHashes: make([]uint64, cs.NumComponents())}
	for i := range c.hello.ComponentHashes {
		c.hello.ComponentHashes[i] = cs.ComponentHash(codec.ComponentID(i))
	}
	if opts.FixedScale != 0 {
		clock.SetScale(opts.FixedScale)
	}
	c.ghosts.OnSpawn, c.ghosts.OnDespawn = opts.OnSpawn, opts.OnDespawn
	c.onCorrection(opts.BeforeCorrection, opts.AfterCorrection)
	c.iclock = iclock
	if c.interpolator, err = ghostreg.NewInterpolator(c.ghosts, iclock.MaxExtrapolation()); err != nil {
		return nil, err
	}
	c.schedule.Add(gw.StageReceive, gw.SystemFunc(c.reconcile))
	c.schedule.Add(gw.StageInput, gw.SystemFunc(c.sample))
	c.schedule.Add(gw.StagePrePrediction, gw.SystemFunc(c.applyInput))
	c.schedule.Add(gw.StagePrePrediction, gw.SystemFunc(c.poseOthers))
	c.schedule.Add(gw.StagePostPrediction, gw.SystemFunc(c.takeSpawns))
	c.schedule.Add(gw.StagePostPrediction, gw.SystemFunc(c.quantize))
	c.schedule.Add(gw.StagePostPrediction, gw.SystemFunc(c.restoreOthers))
	c.schedule.Add(gw.StageSend, gw.SystemFunc(c.send))
	c.schedule.Add(gw.StageInterpolation, gw.SystemFunc(c.interpolate))
	if err := game.install(c.schedule, w, false); err != nil {
		return nil, err
	}
	return c, nil
}

// registerReplicated registers every replicated component for rollback,
// so reconciliation can restore and compare them.
func registerReplicated(h *gw.History, s *codec.Schema) error {
	for i := 0; i < s.NumComponents(); i++ {
		if err := h.RegisterType(s.ComponentType(codec.ComponentID(i))); err != nil {
			return err
		}
	}
	return nil
}

type correctionHook struct{ before, after func(w *gw.World) }

// onCorrection adds functions called right before and after every
// rollback or hard correction (either may be nil), after those of the
// options. They may read and write component values, not the structure.
func (c *Client) onCorrection(before, after func(w *gw.World)) {
	if before != nil || after != nil {
		c.hooks = append(c.hooks, correctionHook{before, after})
	}
}

// Connected reports whether the server has welcomed the client and the
// connection has not ended since: false while connecting, and after a
// refusal, a disconnect or a timeout (then Err says which).
func (c *Client) Connected() bool { return c.state == stateConnected }

// Stats returns the counters.
func (c *Client) Stats() ClientStats {
	st := c.stats
	st.ReplayedTicks = c.schedule.Stats().ReplayedTicks
	st.InputDelay = c.delay
	st.ClockJumps = c.sync.Jumps()
	st.RTT, st.Jitter = c.rtt.Smoothed(), c.rtt.Variation()
	cs := c.raw.Stats()
	st.BytesSent, st.BytesReceived = cs.SentBytes, cs.ReceivedBytes
	var w wire
	w.add(c.link.pc.Stats())
	st.BadPackets += w.malformed
	st.PacketsRefused = w.refused
	st.LinkRTT, st.LinkLoss = c.link.pc.RTT(), c.link.pc.Loss()
	st.InterpolationDelay = time.Duration(c.iclock.Delay() * float64(c.clock.Interval()))
	st.RenderTick = c.render
	is := c.interpolator.Stats()
	st.ExtrapolatedTicks, st.MaxExtrapolation, st.Teleports = is.ExtrapolatedTicks, is.MaxExtrapolation, is.Teleports
	st.HeldTicks = is.HeldTicks
	st.InterpolatedSpawns, st.InterpolatedDespawns, st.InterpolationBuffered = is.Spawned, is.Despawned, is.Buffered
	st.SnapshotLoss, st.ExtrapolationCap = c.iclock.Loss(), c.iclock.MaxExtrapolation()
	if c.hasLatest {
		st.NewestSnapshot = c.latest.Tick
	}
	st.Confirmed, st.HasConfirmed = c.inputs.Confirmed()
	for k, n := range c.mispredictedBy {
		if n > 0 {
			if st.MispredictionsBy == nil {
				st.MispredictionsBy = make(map[string]uint64)
			}
			st.MispredictionsBy[k] = n
		}
	}
	st.SyncTestChecks, st.Desyncs, st.FirstDesync = c.check.checks(), c.check.desyncs, c.check.first
	gs := c.ghosts.Stats()
	st.BaselineMissing, st.ValueRefused, st.Unresolved = gs.BaselineMissing, gs.ValueRefused, gs.Unresolved
	st.Messages = c.msgPeer.stats
	return st
}

// tick runs one tick, through the determinism check when it is on.
func (c *Client) tick() { c.check.tick(c.schedule, c.world, c.log) }

// Update polls the connection when it is a transport.Poller, reads the
// network, then runs the ticks that are due (none before the server's
// welcome). Call it once per frame. After a stall longer than
// the clock's catch-up cap it runs only the newest due tick and skips the
// others (see ClientStats.SkippedTicks); when the server has sent nothing
// for the timeout it ends the connection.
func (c *Client) Update() {
	if p, ok := c.raw.(transport.Poller); ok {
		p.Poll()
	}
	if c.update(c.src.Now()) {
		_ = c.link.pc.Flush() // a failing link ends by timeout
	}
}

// update is Update before the flush of the packet layer; it reports
// whether it queued anything (a hello, a tick's inputs). Acks wait for
// those packets: flushing on every frame would add an ack-only packet for
// most packets received.
func (c *Client) update(now time.Duration) bool {
	c.poll(now)
	switch c.state {
	case stateConnecting:
		sent := false
		if !c.helloSent || now-c.lastHello >= c.opts.HelloInterval {
			c.hello.ClientTime = ms(now)
			c.tx = protocol.AppendHello(c.tx[:0], &c.hello)
			_, _ = c.link.pc.SendUnreliable(c.tx) // resent every HelloInterval until the welcome
			c.lastHello, c.helloSent, sent = now, true, true
		}
		c.clock.Advance() // keep the accumulator current; no ticks before the welcome
		return sent
	case stateRefused, stateDisconnected:
		return false
	}
	if now-c.heard > c.opts.Timeout {
		c.timeout()
		return false
	}
	n := c.skipStall(c.clock.Advance())
	n += c.catchUp
	c.catchUp = 0
	ran := false
	for ; n > 0; n-- {
		if c.hold > 0 {
			c.hold--
			continue
		}
		ran = true
		c.retarget()
		if c.raiseDelay(c.world) {
			continue
		}
		c.lowerDelay()
		c.runTick()
	}
	return ran
}

// runTick runs the next tick, after taking the server-owned values of the
// snapshot it reconciles (right before it: never drawn apart).
func (c *Client) runTick() {
	if c.fresh {
		c.takeOwned(c.latest)
	}
	c.tick()
	c.stats.Ticks++
}

// Frame runs the per-frame stages (interpolation, presentation).
func (c *Client) Frame() { c.schedule.Frame(c.world) }

// quantize rounds the predicted ghosts' replicated components the way the
// server does at the end of its tick.
func (c *Client) quantize(w *gw.World) {
	q := c.simulated.Query(w.Arche())
	for q.Next() {
		g := q.Get()
		c.binding.Quantize(q.Entity(), codec.GhostTypeID(g.Type))
	}
}

// World returns the client's world, to query and to build the game's
// entities in.
func (c *Client) World() *gw.World { return c.world }

// Schedule returns the client's schedule, to add the game's systems to.
func (c *Client) Schedule() *gw.Schedule { return c.schedule }

// Ghosts returns the client's ghost register: the entity of a ghost ID,
// which ghosts are predicted.
func (c *Client) Ghosts() *ghosts.ClientRegister { return (*ghosts.ClientRegister)(c.ghosts) }

// Conn returns the connection ID the server gave this client in its
// welcome (the Owner of the ghosts it owns); ok is false before the
// welcome.
func (c *Client) Conn() (id components.ConnID, ok bool) {
	return c.welcome.Conn, c.welcome.Conn != 0
}

// Player returns the local entity of this client's player: the ghost the
// server's OnConnect spawned for its connection (or, for a connection
// that took back a lost one's place, that one's: see
// ServerOptions.ReconnectGrace), which this client predicts. Find it here rather than by ghost ID or by query: the server
// may have spawned other ghosts before it, and the connection may own
// more than one. ok is false before the welcome, until the first snapshot
// holding the player arrives (a round trip after connecting), and once
// the server despawned it. It costs a binary search of the client's
// ghosts.
func (c *Client) Player() (e ecs.Entity, ok bool) {
	if c.welcome.Player == 0 {
		return e, false
	}
	return c.ghosts.Entity(c.welcome.Player)
}
