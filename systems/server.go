package systems

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/ghosts"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/fixedclock"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// ServerOptions configures a [Server]. The zero value is usable once
// OnConnect is set.
type ServerOptions struct {
	// SendInterval is the number of ticks between snapshots; 1 when zero.
	// Allowed: 1..60.
	SendInterval int
	// MaxClients bounds the connections, and the places held for a
	// reconnect with them (ReconnectGrace); 64 when zero. Allowed: 1..4096.
	MaxClients int
	// MaxPending bounds the accepted connections still waiting for their
	// hello; 4×MaxClients when zero. Allowed: 1..65536. When it is full,
	// a new connection evicts the oldest waiting one (counted), so a flood
	// of silent connections costs bounded memory and time and an honest
	// client still gets in.
	MaxPending int
	// SnapshotBytes bounds a snapshot; 1188 bytes when zero, which with
	// the packet layer's 12 bytes (header and message length) fill the 1200
	// that cross the internet unfragmented. Allowed: 64..1200; a value
	// above 1188 (packet.MaxUnreliableSize) means 1188.
	SnapshotBytes int
	// BytesPerSecond, if set, is each connection's snapshot budget: a
	// token bucket that fills at this rate (to at most 4 packets' worth)
	// and that every snapshot packet, its 12 bytes of packet layer
	// included, draws from. A tick's snapshot then takes as many packets
	// (at most 4) as the bucket allows while ghosts wait, and its first
	// packet goes whatever the bucket holds, with at least 128 bytes (it
	// carries the client's own ghost, despawns and acknowledgements).
	// Zero means no bucket: one packet of SnapshotBytes per send.
	// Allowed: 0 or 1,000..100,000,000. Either is the most the
	// connection's budget allows: the budget follows the link below it
	// (Congestion).
	BytesPerSecond int
	// Congestion says how each connection's snapshot budget follows its
	// link: the zero value cuts it when the round trip grows or packets
	// are lost and lets it grow back to its maximum when the link is
	// clean (see CongestionOptions). ConnStats.Budget is the budget in
	// use.
	Congestion CongestionOptions
	// Importance, if set, says how much a ghost (by its entity) matters to
	// connection conn: its send priority grows by that much each snapshot
	// it waits for room (by distance, team, what the player looks at).
	// Every ghost counts 1 when nil; below 1/64 counts as 1/64, so every
	// ghost is sent eventually. Owned ghosts are sent before the others
	// whatever their importance, and so are spawns of ghosts of
	// importance 1 or more (a joining client catches up first); a spawn
	// of a ghost that matters less (scenery entering a player's scope)
	// waits its turn by priority like the others, so a crowd of them
	// does not hold back the players' updates.
	Importance func(w *gw.World, conn components.ConnID, e ecs.Entity) float32
	// Relevant, if set, says whether a ghost (by its entity) is in
	// connection conn's scope (a radius around its player, its team's
	// sight); every ghost is when nil. A ghost leaving a connection's scope
	// is despawned at that client and comes back with its identity and
	// current state; a ghost never in a connection's scope is never on
	// the wire to it. The connection's own ghosts are always in scope. It
	// is asked about each ghost when the ghost spawns or the connection
	// opens, then about every ghost once per 8 snapshots: a per-tick cost
	// of connections × ghosts / 8 calls.
	Relevant func(w *gw.World, conn components.ConnID, e ecs.Entity) bool
	// InputCapacity is the number of ticks of input buffered per
	// connection; 64 when zero. Allowed: 8..4096. The schema's input
	// rules say how inputs are validated and what a missing one becomes.
	InputCapacity int
	// InputMaxAhead is how many ticks past the server's current tick an
	// input may be for; further ones are refused (a client cannot queue up
	// seconds of input). InputCapacity-1 when zero; at most
	// InputCapacity-1.
	InputMaxAhead int
	// Timeout drops a connection silent for that long, one that sent
	// no valid hello within that long of being accepted, and one whose
	// oldest reliable message has waited that long for its ack (the
	// client stopped reading; see ServerStats.Backlogged); 5 s when zero.
	Timeout time.Duration
	// StartTick is the tick the server's world starts at (its first tick
	// is the one after it); 0 when zero. Starting near 2³² tests a game
	// across the tick wrap without months of uptime.
	StartTick gw.Tick
	// SyncTest, when not zero, runs every tick as a determinism check of
	// the server world (see [gw.SyncTest]): the tick, then a rollback of
	// SyncTest ticks and their replay through the prediction stages with
	// the inputs those ticks applied, compared with the first run. It
	// records the replicated components in a history the server otherwise
	// does not keep. The first difference is kept in
	// ServerStats.FirstDesync and counted in ServerStats.Desyncs. It costs
	// SyncTest replays per tick: for tests and debug builds. Allowed:
	// 0..1024. What changes the replicated state outside the prediction
	// stages (StageSimulation, hits, players joining and leaving, a
	// ghost's despawn) is not replayed: windows do not reach back across
	// it (see [gw.SyncTest]). State of the game's that the prediction
	// writes beyond the replicated components (a magazine the server
	// alone knows) must be registered for the history (gw.Register on
	// Server.World().History()).
	SyncTest int
	// Logger receives connection events; slog.Default() when nil.
	Logger *slog.Logger
	// MaxInterpolationDelay is the largest interpolation delay a client's
	// inputs may claim toward the plausible view of its shots
	// (InputHeader.MaxViewAge); a larger claim counts as this much (and is
	// counted in ServerStats.InterpolationClaimsClamped). When zero, the
	// longer of 150 ms and 8 send intervals: above the adaptive delay at
	// 20 ms jitter and 10 % loss at 60 Hz, and at 30 ms and 8 % at 20 Hz.
	// Allowed: 0..1s; a game that lets players fix a longer delay raises
	// it.
	MaxInterpolationDelay time.Duration
	// MessageBytesPerSecond is the most bytes of reliable game messages
	// (docs/messages.md) the server sends each connection per second,
	// spread over its ticks: each tick's flush sends, after the tick's
	// snapshot, at most MessageBytesPerSecond/TickRate bytes of them
	// (first sends, resends and the fragments of a large message, their
	// entry headers included; the last entry may pass it by up to 1,191
	// bytes), and the rest waits for the next tick. So a large message
	// shares the link with the snapshots instead of going in one burst
	// before them; docs/messages.md states the delay it may add to a
	// snapshot. 128,000 (1 Mbit/s) when zero. Allowed: 0 or
	// 1,000..1,000,000,000. Unreliable messages ride the tick's packets
	// beside the snapshot and are not counted.
	MessageBytesPerSecond int
	// MaxRefusedMessages is how many refused messages
	// (MessageRefusals: unknown, malformed, oversized, over rate) a
	// connection may send within 10 seconds: the refusals fill a bucket
	// of that depth that empties at MaxRefusedMessages/10 a second, and
	// the refusal that finds it full ends the connection with
	// netsync.RejectMessages (counted in ServerStats.MessageDrops). 20
	// when zero. Allowed: 1..100,000.
	MaxRefusedMessages int
	// ViewTolerance is added to the plausible view age for what the
	// measurement cannot see of an honest client (a lost first copy of an
	// input, a jitter spike); 50 ms when zero. Allowed: 0..500ms.
	ViewTolerance time.Duration
	// ReconnectGrace is how long the server keeps the place of a player
	// whose connection timed out (or was dropped for a backlog): its
	// ghosts stay in the world, standing on the neutral input, and
	// OnDisconnect waits. A new connection of the same identity (see
	// Identity) within the grace takes the place back: the same ghosts
	// and entities, now owned by it, no OnConnect (Game.OnReconnect
	// instead), the welcome naming the same player. After the grace the
	// place is given up through OnDisconnect as before. A client that
	// leaves on purpose (Client.Close) or is dropped for refused messages
	// is not held. Zero turns reconnect off: every connection that ends
	// goes through OnDisconnect at once. Allowed: 0..1h. docs/operations.md
	// ("Reconnect") says how it fits the token service.
	ReconnectGrace time.Duration
	// Identity names the player a new connection is, as the token service
	// wrote it (never anything the client chose): tokens.Identity reads
	// it from a udp connection's connect token. ok false, or "", means the
	// connection has none and its place is not held; an identity longer
	// than MaxIdentity bytes is ignored (counted in
	// ServerStats.IdentitiesIgnored). It is called once per connection, at
	// its hello, and only when ReconnectGrace is set, which requires it:
	// systems does not read tokens itself, so a server built for another
	// transport links no udp code (rooms.Manager and the harness set it
	// when nil).
	Identity func(c transport.Conn) (identity string, ok bool)
	// MaxHeld bounds the places held at once; MaxClients when zero, so
	// that every player of a full server can come back from one network
	// outage. Allowed: 1..MaxClients. Holding one more gives up the
	// oldest held place through OnDisconnect (counted in
	// ServerStats.HeldEvicted). A held place counts toward MaxClients: a
	// newcomer is refused as full while the held players would not fit on
	// their return.
	MaxHeld int
	// Spectator, if set, says whether a new connection is a spectator,
	// from what the token service wrote (never what the client sends): it
	// is called once per connection, at its hello. A spectator owns no
	// ghost, its inputs and messages are ignored, and it does not count
	// toward MaxClients: the server hands it to Spectators (its world is
	// not this one), or refuses it as full without them or when they
	// refuse it (counted in ServerStats.SpectatorsRefused).
	Spectator func(c transport.Conn) bool
	// Spectators serves the spectators: replay.Stand shows them the match
	// a delay back, replayed from its recording. It is updated at the end
	// of each Update.
	Spectators Spectators
	// Recorder, if set, is told every change of the world that does not
	// come from its systems (connections, applied inputs, accepted
	// messages) and every tick run: what a replay needs to run the match
	// again with no network (package replay). Nil records nothing.
	Recorder Recorder
}

// MaxIdentity bounds the bytes of a connection's identity
// (ServerOptions.Identity), as tokens.MaxIdentity bounds a token's: held
// places cost bounded memory whatever the identity source.
const MaxIdentity = 64

// maxServerSyncTest bounds ServerOptions.SyncTest.
const maxServerSyncTest = 1024

// inputBuffer returns the options of each connection's input buffer.
func (o *ServerOptions) inputBuffer() control.InputBufferOptions {
	return control.InputBufferOptions{Capacity: o.InputCapacity, MaxAhead: o.InputMaxAhead}
}

// ServerStats counts what the server did since it started. Input counters
// add up every connection, closed ones included.
type ServerStats struct {
	Ticks          uint64
	Connections    int    // open now
	Accepted       uint64 // connections welcomed
	Refused        uint64 // hellos refused (schema, tick rate, full, spawn failed)
	Dropped        uint64 // connections ended by timeout or disconnect
	TimedOut       uint64 // of Dropped: silent for longer than the timeout
	Pending        int    // accepted connections waiting for their hello now
	PendingEvicted uint64 // waiting connections closed to make room (MaxPending)
	// JoinsDeferred counts the polls that left waiting connections for a
	// later tick because 16 had been welcomed in this one already: a
	// crowd joining at once is welcomed over a few ticks.
	JoinsDeferred  uint64
	BadPackets     uint64 // undecodable packets or messages, counted, never fatal
	SnapshotsSent  uint64 // snapshot packets, parts included
	SnapshotParts  uint64 // packets after the first of a tick's snapshot (BytesPerSecond)
	GhostsDeferred uint64 // ghosts that waited for a later snapshot for lack of room
	// GhostStaleness is the longest, in ticks, that a ghost in a
	// connection's scope waited with a change its client had not been
	// sent (room, priority), over every connection; GhostsFull counts the
	// ghost records sent in full though the client had been sent the
	// ghost before, because it had acknowledged no snapshot holding it
	// lately (a client that never acknowledges gets only full states).
	GhostStaleness int
	GhostsFull     uint64
	// AcksLate counts clients' snapshot acknowledgements that came after
	// the server stopped holding what their snapshot sent: more than 256
	// ticks later, later than the record log it keeps per connection
	// reaches (a round trip that doubled at once), or 32 ticks later or
	// more for a snapshot whose moving ghosts' records were noted as bits
	// rather than logged; that log then grows, and every record is
	// logged. They acknowledge nothing, as if lost.
	AcksLate uint64
	// GhostRecords counts the ghost records sent, over every connection;
	// RecordsShared those of them copied from a record written once per
	// tick for every connection whose acknowledged snapshot is as many
	// ticks back (the rest are written per connection).
	GhostRecords, RecordsShared uint64
	// ScopeExits counts ghosts despawned at a client because they left
	// its connection's scope (ServerOptions.Relevant).
	ScopeExits uint64
	// Resyncs counts clients' requests for full states honoured (a client
	// asks when it dropped a delta record whose baseline it lacked),
	// ResyncsRefused those refused for coming within a second of the last.
	Resyncs, ResyncsRefused uint64
	BytesSent               uint64 // datagram bytes, packet headers included
	BytesReceived           uint64 // datagram bytes, junk included
	// Backlogged counts, of Dropped, the connections whose reliable
	// channel filled its send queue or went unacknowledged for too long:
	// a client that stops reading is dropped, never buffered without
	// bound. PacketsRefused counts packets the packet layer dropped at a
	// receive cap (reliable window, held bytes, fragments).
	Backlogged     uint64
	PacketsRefused uint64
	// LinkRTT and LinkLoss are the packet layer's round-trip time and
	// loss estimates, averaged over the open connections.
	LinkRTT        time.Duration
	LinkLoss       float64
	InputsApplied  uint64
	InputsMissing  uint64
	InputsLate     uint64
	InputsRejected uint64 // undecodable input packets
	InputsRefused  uint64 // inputs the game's Validate refused
	InputsClamped  uint64 // inputs the game's Validate changed
	InputsAhead    uint64 // refused: too far ahead
	InputsDup      uint64
	MaxBuffered    int // most inputs one connection held at once
	// SyncTestChecks counts the replayed ticks the determinism check of
	// ServerOptions.SyncTest compared, Desyncs the ticks it found wrong,
	// and FirstDesync is the first difference it found (an error naming
	// the tick, entity, component and field), or nil.
	SyncTestChecks, Desyncs uint64
	FirstDesync             error
	// GhostsSpawned counts the ghosts spawned from components.SpawnGhost
	// requests, SpawnsRefused the requests the register refused (the
	// entity lacks a component of the type, or the type is unknown:
	// logged at Error, the entity removed), and GhostsDespawned the
	// ghosts removed for a components.Despawned mark.
	GhostsSpawned, SpawnsRefused, GhostsDespawned uint64
	// Confirms counts the shot verdicts queued for their shooters'
	// clients (lagcomp.Options.Server); ConfirmsDropped those given up
	// unacknowledged because 256 were pending on one connection.
	Confirms, ConfirmsDropped uint64
	// EventsRaised counts the predicted events the server's prediction
	// raised (systems.Raise) and sent to every client, EventsDropped those
	// beyond MaxEventsPerSend between two sends; EventMessages counts the
	// events messages (one per send with events, and one every 6 ticks
	// without), EventMessagesRefused the sends a connection's full
	// reliable queue refused (the connection is then dropped).
	EventsRaised, EventsDropped         uint64
	EventMessages, EventMessagesRefused uint64
	// InterpolationClaimsClamped counts the inputs claiming a longer
	// interpolation delay than ServerOptions.MaxInterpolationDelay: the
	// plausible view of their shots counted the bound instead.
	InterpolationClaimsClamped uint64
	// Messages counts the game's messages over every connection, closed
	// ones included (docs/messages.md).
	Messages MessageStats
	// MessageDrops counts, of Dropped, the connections ended for sending
	// too many refused messages (ServerOptions.MaxRefusedMessages).
	MessageDrops uint64
	// Held is the places held now for players whose connection ended
	// (ServerOptions.ReconnectGrace). Reconnects counts the connections
	// that took a place back (a held one, or a live one: Replaced);
	// ReconnectsExpired the held places given up at the end of the grace,
	// HeldEvicted those given up early because MaxHeld places were held
	// (both through OnDisconnect).
	Held                                       int
	Reconnects, ReconnectsExpired, HeldEvicted uint64
	// Replaced counts, of Dropped, the open connections ended because a
	// new connection of the same identity took their place: a player
	// whose client reconnects before the server noticed the old
	// connection was lost is not kept waiting for the timeout.
	Replaced uint64
	// IdentitiesIgnored counts the identities longer than MaxIdentity:
	// those connections were accepted without one.
	IdentitiesIgnored uint64
	// Spectators counts the spectator connections handed to
	// ServerOptions.Spectators, SpectatorsRefused those refused (no
	// Spectators, or they were full). On the server of a Playback that
	// seats spectators, Connections counts them.
	Spectators, SpectatorsRefused uint64
}

// Server is the authoritative endpoint: one world, its schedule and clock,
// the ghost register, and the connections. It owns the netcode systems of
// the server tick; the game adds its own to Schedule (prediction stages and
// StageSimulation).
type Server struct {
	world    *gw.World
	schedule *gw.Schedule
	clock    *fixedclock.Clock
	ghosts   *ghostreg.ServerRegister
	binding  *ghostreg.Binding

	opts     ServerOptions
	game     *Game
	rate     int       // ticks per second (Game.TickRate)
	play     *Playback // set when a recording drives the server
	state    ghostreg.StateWriter
	stateBuf []byte // StateHash's
	src      gw.TimeSource
	listener transport.Listener
	conns    []*serverConn // in connection ID order
	// joins counts the connections welcomed in the tick joinTick (when
	// joinsAt), at most joinsPerTick.
	joins    int
	joinTick gw.Tick
	joinsAt  bool
	wire     wire // packet-layer counters of connections already closed
	pending  []pendingConn
	nextConn components.ConnID
	sw       *protocol.SnapshotWriter
	spawnQ   spawnQueries // the spawn and despawn requests
	events   serverEvents // the predicted events raised since the last send
	rx       []byte       // a pending connection's first datagram
	tx       []byte
	batch    protocol.InputBatch
	hello    protocol.Hello
	owned    []ecs.Entity
	held     []heldPlace        // the places held for a reconnect, oldest first
	neutral  []byte             // the input a held player gets: the zero value
	closed   control.InputStats // counters of connections already gone
	// closedViews adds up the replication counters of connections gone.
	closedViews ghostreg.ViewStats
	// msgs sends and receives the game's messages; msgStats adds up the
	// message counters of connections gone and the sends suppressed.
	msgs     *messenger
	msgStats MessageStats
	linkOpts linkOptions // of every connection's packet layer
	check    syncCheck   // ServerOptions.SyncTest
	closing  bool        // Close was called
	stats    ServerStats
	log      *slog.Logger
	// maxInterp and viewTolerance are the options of the plausible view
	// in ticks.
	maxInterp, viewTolerance float64

	// untilSend counts the ticks down to the next snapshots: counting
	// from the last ones, not tick % SendInterval, keeps their spacing
	// across the tick wrap (2³² need not be a multiple of the interval).
	untilSend int
}

type serverConn struct {
	id       components.ConnID
	player   components.GhostID // the ghost OnConnect spawned, or the one taken back
	identity string             // the player it is (ServerOptions.Identity); "" when none

	link      *link
	inputs    *control.InputBuffer
	lead      control.LeadTracker
	newest    gw.Tick // the newest input tick whose lead was measured
	measured  bool    // newest is set
	heard     time.Duration
	echo      uint32
	echoAt    time.Duration
	echoed    bool // echo holds a batch's client time
	helloTime uint32
	helloAt   time.Duration
	applied   appliedInputs // for the replays of ServerOptions.SyncTest
	view      *ghostreg.View
	viewAge   viewMeter    // what bounds the view of its shots
	confirms  confirmQueue // verdicts of its shots not yet acknowledged
	tokens    float64      // the snapshot budget's bucket, in bytes
	budget    linkBudget   // its rate (Congestion)
	msgs      peerMessages // the game's messages with this client
	refusals  bucket       // its refused messages (MaxRefusedMessages)
	spectator bool         // seated with the spectators (ServerOptions.Spectator): owns nothing, says nothing
}

// NewServer creates a server world running game, reading time from src
// and accepting connections from l: the netcode systems, then the game's
// prediction and simulation systems, are installed in its schedule. It
// errors naming the value on a bad option or a bad Game.
func NewServer(src gw.TimeSource, l transport.Listener, game *Game, opts ServerOptions) (*Server, error) {
	rate, err := game.check()
	if err != nil {
		return nil, err
	}
	if game.OnConnect == nil {
		return nil, errors.New("systems: Game.OnConnect is required by a server")
	}
	cs := (*codec.Schema)(game.Schema)
	if opts.SendInterval == 0 {
		opts.SendInterval = 1
	}
	if opts.MaxClients == 0 {
		opts.MaxClients = 64
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.SendInterval < 1 || opts.SendInterval > 60 {
		return nil, fmt.Errorf("systems: send interval %d outside 1..60 ticks", opts.SendInterval)
	}
	if opts.MaxClients < 1 || opts.MaxClients > 4096 {
		return nil, fmt.Errorf("systems: max clients %d outside 1..4096", opts.MaxClients)
	}
	if opts.MaxPending == 0 {
		opts.MaxPending = 4 * opts.MaxClients
	}
	if opts.MaxPending < 1 || opts.MaxPending > 65536 {
		return nil, fmt.Errorf("systems: max pending connections %d outside 1..65536", opts.MaxPending)
	}
	if opts.Timeout < 100*time.Millisecond || opts.Timeout > time.Hour {
		return nil, fmt.Errorf("systems: timeout %v outside 100ms..1h", opts.Timeout)
	}
	if opts.MaxInterpolationDelay == 0 {
		opts.MaxInterpolationDelay = max(defaultMaxInterpolationDelay, 8*time.Duration(opts.SendInterval)*time.Second/time.Duration(rate))
	}
	if opts.ViewTolerance == 0 {
		opts.ViewTolerance = defaultViewTolerance
	}
	if opts.MaxInterpolationDelay < 0 || opts.MaxInterpolationDelay > time.Second {
		return nil, fmt.Errorf("systems: max interpolation delay %v outside 0..1s", opts.MaxInterpolationDelay)
	}
	if opts.ViewTolerance < 0 || opts.ViewTolerance > 500*time.Millisecond {
		return nil, fmt.Errorf("systems: view tolerance %v outside 0..500ms", opts.ViewTolerance)
	}
	if err := checkMessageBytes(opts.MessageBytesPerSecond); err != nil {
		return nil, err
	}
	if opts.MaxRefusedMessages == 0 {
		opts.MaxRefusedMessages = 20
	}
	if opts.MaxRefusedMessages < 1 || opts.MaxRefusedMessages > 100_000 {
		return nil, fmt.Errorf("systems: max refused messages %d outside 1..100000", opts.MaxRefusedMessages)
	}
	if err := checkReconnect(&opts); err != nil {
		return nil, err
	}
	if opts.SyncTest < 0 || opts.SyncTest > maxServerSyncTest {
		return nil, fmt.Errorf("systems: sync test rollback %d outside 0..%d", opts.SyncTest, maxServerSyncTest)
	}
	if _, err := control.NewInputBuffer(cs, opts.inputBuffer()); err != nil {
		return nil, err
	}
	clock, err := fixedclock.New(src, fixedclock.Options{TickRate: rate})
	if err != nil {
		return nil, err
	}
	if opts.SnapshotBytes == 0 || opts.SnapshotBytes > packet.MaxUnreliableSize && opts.SnapshotBytes <= protocol.MaxDatagram {
		opts.SnapshotBytes = packet.MaxUnreliableSize
	}
	if b := opts.BytesPerSecond; b != 0 && (b < 1000 || b > 100_000_000) {
		return nil, fmt.Errorf("systems: snapshot budget %d bytes per second outside 1000..100000000 (or 0: none)", b)
	}
	if f := opts.Congestion.Floor; f != 0 && (f < 1000 || f > 100_000_000) {
		return nil, fmt.Errorf("systems: snapshot budget floor %d bytes per second outside 1000..100000000 (or 0: the default)", f)
	}
	sw, err := protocol.NewSnapshotWriter(cs, opts.SnapshotBytes)
	if err != nil {
		return nil, err
	}
	w := gw.NewWorld(gw.WorldOptions{Authoritative: true})
	w.SetTick(opts.StartTick)
	if opts.SyncTest > 0 {
		// Two windows of replays fit, whatever the depth.
		h, err := gw.EnableHistory[components.Predicted](w, 2*(opts.SyncTest+1))
		if err != nil {
			return nil, err
		}
		if err := registerReplicated(h, cs); err != nil {
			return nil, err
		}
		// A predicted despawn's mark is prediction state: a replay from
		// before it must start without it.
		if err := gw.Register[components.Despawned](h); err != nil {
			return nil, err
		}
	}
	b := ghostreg.Bind(w, cs)
	s := &Server{
		world: w, schedule: gw.NewSchedule(), clock: clock, ghosts: ghostreg.NewServerRegister(b), binding: b,
		opts: opts, game: game, rate: rate, src: src, listener: l, sw: sw, check: syncCheck{depth: opts.SyncTest},
		rx: make([]byte, transport.MaxDatagramSize), tx: make([]byte, 0, protocol.MaxDatagram), neutral: make([]byte, cs.InputSize()),
		log:           opts.Logger,
		maxInterp:     float64(opts.MaxInterpolationDelay) * float64(rate) / float64(time.Second),
		viewTolerance: float64(opts.ViewTolerance) * float64(rate) / float64(time.Second),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	// A client that stops reading is stalled for the server as soon as
	// one that stops sending is: after the timeout.
	s.linkOpts.backlog = opts.Timeout
	s.linkOpts.maxMessage, s.linkOpts.perFlush = messageLink(cs, opts.MessageBytesPerSecond, rate)
	s.msgs = newMessenger(w, cs, s, nil)
	s.spawnQ = newSpawnQueries(w)
	s.initEvents(cs)
	s.schedule.Add(gw.StagePrePrediction, gw.SystemFunc(s.applyInputs))
	s.schedule.Add(gw.StagePostPrediction, gw.SystemFunc(s.takeSpawns))
	s.schedule.Add(gw.StagePostPrediction, gw.SystemFunc(func(*gw.World) { s.ghosts.Quantize() }))
	s.schedule.Add(gw.StageHistory, gw.SystemFunc(s.takeDespawns))
	s.schedule.Add(gw.StageSend, gw.SystemFunc(s.send))
	if err := game.install(s.schedule, w, true); err != nil {
		return nil, err
	}
	if game.OnStart != nil {
		if err := game.OnStart(s); err != nil {
			return nil, fmt.Errorf("systems: Game.OnStart: %w", err)
		}
	}
	return s, nil
}

// Update polls the listener when it is a transport.Poller, reads the
// network, then runs the ticks that are due, then flushes the listener
// when it is a transport.Flusher. Call it once per frame (any rate; ticks
// stay fixed).
//
// On the server of a [Playback] it does nothing: the playback runs its
// ticks.
func (s *Server) Update() {
	if s.closing || s.play != nil {
		return
	}
	if p, ok := s.listener.(transport.Poller); ok {
		p.Poll()
	}
	now := s.src.Now()
	s.poll(now)
	ran := false
	for n := s.clock.Advance(); n > 0; n-- {
		s.runTick()
		ran = true
	}
	s.expire(now)
	if ran { // acks wait for the tick's packets rather than go alone every frame
		s.flush()
	}
	if sp := s.opts.Spectators; sp != nil {
		sp.Update()
	}
	if f, ok := s.listener.(transport.Flusher); ok {
		f.Flush() // the datagrams a batching listener held back
	}
}

// runTick runs one tick, checked by the determinism check when it is on,
// and tells the recorder.
func (s *Server) runTick() {
	s.check.tick(s.schedule, s.world, s.log)
	s.stats.Ticks++
	if r := s.opts.Recorder; r != nil {
		r.Ticked(s)
	}
}

// Stats returns the counters.
func (s *Server) Stats() ServerStats {
	st := s.stats
	st.Connections, st.Pending = len(s.conns), len(s.pending)
	in := s.closed
	for _, c := range s.conns {
		add(&in, c.inputs.Stats())
	}
	for _, p := range s.held {
		add(&in, p.sc.inputs.Stats())
	}
	st.Held = len(s.held)
	st.InputsApplied, st.InputsMissing, st.InputsLate = in.Applied, in.Missing, in.Late
	st.InputsRefused = in.Refused
	st.InputsClamped, st.InputsAhead, st.InputsDup = in.Clamped, in.TooFarAhead, in.Duplicates
	st.MaxBuffered = in.MaxBuffered
	st.SyncTestChecks, st.Desyncs, st.FirstDesync = s.check.checks(), s.check.desyncs, s.check.first
	vs := s.closedViews
	for _, c := range s.conns {
		addView(&vs, c.view.Stats())
	}
	st.GhostStaleness, st.GhostsFull, st.AcksLate = vs.MaxStaleness, vs.FullStates, vs.LateAcks
	st.GhostRecords = vs.Records
	st.RecordsShared, _ = s.ghosts.RunRecords()
	st.ScopeExits = vs.ScopeExits
	st.Resyncs, st.ResyncsRefused = vs.Resyncs, vs.ResyncsRefused
	w := s.wire
	for _, pc := range s.pending {
		if pc.link != nil {
			w.add(pc.link.pc.Stats())
		}
	}
	for _, c := range s.conns {
		w.add(c.link.pc.Stats())
		st.LinkRTT += c.link.pc.RTT()
		st.LinkLoss += c.link.pc.Loss()
	}
	if n := len(s.conns); n > 0 {
		st.LinkRTT /= time.Duration(n)
		st.LinkLoss /= float64(n)
	}
	st.Messages = s.msgStats
	for _, c := range s.conns {
		st.Messages.add(&c.msgs.stats)
	}
	st.BytesSent, st.BytesReceived = w.sent, w.received
	st.BadPackets += w.malformed
	st.PacketsRefused = w.refused
	return st
}

// addView adds a view's counters to dst (the staleness as a maximum).
func addView(dst *ghostreg.ViewStats, s ghostreg.ViewStats) {
	dst.Deferred += s.Deferred
	dst.Records += s.Records
	dst.Identities += s.Identities
	dst.Despawns += s.Despawns
	dst.DespawnsDeferred += s.DespawnsDeferred
	dst.FullStates += s.FullStates
	dst.LateAcks += s.LateAcks
	dst.ScopeExits += s.ScopeExits
	dst.Resyncs += s.Resyncs
	dst.ResyncsRefused += s.ResyncsRefused
	dst.MaxStaleness = max(dst.MaxStaleness, s.MaxStaleness)
}

func add(dst *control.InputStats, s control.InputStats) {
	dst.Received += s.Received
	dst.Accepted += s.Accepted
	dst.Duplicates += s.Duplicates
	dst.Late += s.Late
	dst.TooFarAhead += s.TooFarAhead
	dst.Refused += s.Refused
	dst.LatePresses += s.LatePresses
	dst.Clamped += s.Clamped
	dst.Applied += s.Applied
	dst.Missing += s.Missing
	dst.MaxBuffered = max(dst.MaxBuffered, s.MaxBuffered)
}

func ms(d time.Duration) uint32 { return uint32(d / time.Millisecond) }

// World returns the server's world, to query and to build the game's
// entities in.
func (s *Server) World() *gw.World { return s.world }

// Schedule returns the server's schedule, to add the game's systems to.
func (s *Server) Schedule() *gw.Schedule { return s.schedule }

// Ghosts returns the server's ghost register: spawning and despawning
// ghosts, the entity of a ghost ID. A connection's player is
// [Server.Player]; the owner of any ghost is its components.Ghost.
func (s *Server) Ghosts() *ghosts.ServerRegister { return (*ghosts.ServerRegister)(s.ghosts) }

// Player returns the entity of connection conn's player: the ghost
// OnConnect spawned for it, or the one it took back
// (ServerOptions.ReconnectGrace). ok is false when no such connection is open
// or the player's ghost was despawned.
func (s *Server) Player(conn components.ConnID) (e ecs.Entity, ok bool) {
	sc := s.conn(conn)
	if sc == nil && s.play != nil {
		sc = s.play.find(conn)
	}
	if sc == nil {
		return e, false
	}
	return s.ghosts.Entity(sc.player)
}
