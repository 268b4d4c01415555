package systems

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/ghosts"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/transport"
)

// ServerOptions configures a [Server]. The zero value is usable once
// OnConnect is set.
type ServerOptions struct {
	// TickRate in ticks per second; 60 when zero.
	TickRate int
	// SendInterval is the number of ticks between snapshots; 1 when zero.
	// Allowed: 1..60.
	SendInterval int
	// MaxClients bounds the connections; 64 when zero. Allowed: 1..4096.
	MaxClients int
	// SnapshotBytes bounds a snapshot packet; netsync.MaxDatagram when zero.
	SnapshotBytes int
	// Inputs configures each connection's input buffer (capacity,
	// max-ahead); the schema's input rules say how inputs are validated
	// and what replaces a missing one.
	Inputs netsync.InputBufferOptions
	// Timeout drops a connection silent for that long, and one that sent
	// no valid hello within that long of being accepted; 5 s when zero.
	Timeout time.Duration
	// OnConnect creates the player of a new connection and returns its
	// entity and ghost type; the server makes it a ghost owned by conn.
	// Required.
	OnConnect func(w *gw.World, conn components.ConnID) (ecs.Entity, netsync.GhostTypeID, error)
	// OnDisconnect, if set, is called when a connection ends, with the
	// entities it owned (a slice valid during the call only); the game
	// removes them (or keeps them).
	OnDisconnect func(w *gw.World, conn components.ConnID, owned []ecs.Entity)
	// Logger receives connection events; slog.Default() when nil.
	Logger *slog.Logger
}

// ServerStats counts what the server did since it started. Input counters
// add up every connection, closed ones included.
type ServerStats struct {
	Ticks          uint64
	Connections    int    // open now
	Accepted       uint64 // connections welcomed
	Refused        uint64 // hellos refused (schema, tick rate, full, spawn failed)
	Dropped        uint64 // connections ended by timeout or disconnect
	BadPackets     uint64 // undecodable packets, counted, never fatal
	SnapshotsSent  uint64
	GhostsLeftOut  uint64 // ghosts that did not fit a snapshot
	BytesSent      uint64
	BytesReceived  uint64
	InputsApplied  uint64
	InputsMissing  uint64
	InputsLate     uint64
	InputsRejected uint64 // undecodable input packets
	InputsRefused  uint64 // inputs the game's Validate refused
	InputsClamped  uint64 // inputs the game's Validate changed
	InputsAhead    uint64 // refused: too far ahead
	InputsDup      uint64
	MaxBuffered    int // most inputs one connection held at once
}

// Server is the authoritative endpoint: one world, its schedule and clock,
// the ghost register, and the connections. It owns the netcode systems of
// the server tick; the game adds its own to Schedule (prediction stages and
// StageSimulation).
type Server struct {
	World    *gw.World
	Schedule *gw.Schedule
	Clock    *gw.FixedClock
	Ghosts   *ghosts.Server
	Binding  *ghosts.Binding

	opts     ServerOptions
	src      gw.TimeSource
	listener transport.Listener
	conns    []*serverConn // in connection ID order
	pending  []pendingConn
	nextConn components.ConnID
	sw       *netsync.SnapshotWriter
	rx       []byte
	tx       []byte
	batch    netsync.InputBatch
	hello    netsync.Hello
	owned    []ecs.Entity
	closed   netsync.InputStats // counters of connections already gone
	stats    ServerStats
	log      *slog.Logger
}

// pendingConn is an accepted connection still waiting for its hello.
type pendingConn struct {
	conn transport.Conn
	at   time.Duration // when it was accepted
}

type serverConn struct {
	id        components.ConnID
	conn      transport.Conn
	inputs    *netsync.InputBuffer
	lead      netsync.LeadTracker
	heard     time.Duration
	echo      uint32
	echoAt    time.Duration
	echoed    bool // echo holds a batch's client time
	helloTime uint32
	helloAt   time.Duration
	sent      uint64
	recv      uint64
}

// NewServer creates a server world reading time from src and accepting
// connections from l. It errors naming the value on a bad option.
func NewServer(src gw.TimeSource, l transport.Listener, schema *netsync.Schema, opts ServerOptions) (*Server, error) {
	if opts.OnConnect == nil {
		return nil, errors.New("systems: ServerOptions.OnConnect is required")
	}
	if opts.TickRate == 0 {
		opts.TickRate = 60
	}
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
	if opts.Timeout < 100*time.Millisecond || opts.Timeout > time.Hour {
		return nil, fmt.Errorf("systems: timeout %v outside 100ms..1h", opts.Timeout)
	}
	if _, err := netsync.NewInputBuffer(schema, opts.Inputs); err != nil {
		return nil, err
	}
	clock, err := gw.NewFixedClock(src, gw.ClockOptions{TickRate: opts.TickRate})
	if err != nil {
		return nil, err
	}
	sw, err := netsync.NewSnapshotWriter(schema, opts.SnapshotBytes)
	if err != nil {
		return nil, err
	}
	w := gw.NewWorld(gw.WorldOptions{Role: gw.RoleServer})
	b := ghosts.Bind(w, schema)
	s := &Server{
		World: w, Schedule: gw.NewSchedule(), Clock: clock, Ghosts: ghosts.NewServer(b), Binding: b,
		opts: opts, src: src, listener: l, sw: sw,
		rx: make([]byte, transport.MaxDatagramSize), tx: make([]byte, 0, netsync.MaxDatagram),
		log: opts.Logger,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.Schedule.Add(gw.StagePrePrediction, gw.SystemFunc(s.applyInputs))
	s.Schedule.Add(gw.StagePostPrediction, gw.SystemFunc(func(*gw.World) { s.Ghosts.Quantize() }))
	s.Schedule.Add(gw.StageSend, gw.SystemFunc(s.send))
	return s, nil
}

// Update reads the network, then runs the ticks that are due. Call it once
// per frame (any rate; ticks stay fixed).
func (s *Server) Update() {
	now := s.src.Now()
	s.poll(now)
	for n := s.Clock.Advance(); n > 0; n-- {
		s.Schedule.Tick(s.World)
		s.stats.Ticks++
	}
	s.expire(now)
}

// Stats returns the counters.
func (s *Server) Stats() ServerStats {
	st := s.stats
	st.Connections = len(s.conns)
	in := s.closed
	for _, c := range s.conns {
		add(&in, c.inputs.Stats())
	}
	st.InputsApplied, st.InputsMissing, st.InputsLate = in.Applied, in.Missing, in.Late
	st.InputsRefused = in.Refused
	st.InputsClamped, st.InputsAhead, st.InputsDup = in.Clamped, in.TooFarAhead, in.Duplicates
	st.MaxBuffered = in.MaxBuffered
	return st
}

func add(dst *netsync.InputStats, s netsync.InputStats) {
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

// Conns returns the open connection IDs in order.
func (s *Server) Conns() []components.ConnID {
	ids := make([]components.ConnID, len(s.conns))
	for i, c := range s.conns {
		ids[i] = c.id
	}
	return ids
}

// InputStats returns the input counters of one open connection.
func (s *Server) InputStats(conn components.ConnID) (netsync.InputStats, bool) {
	for _, c := range s.conns {
		if c.id == conn {
			return c.inputs.Stats(), true
		}
	}
	return netsync.InputStats{}, false
}

func ms(d time.Duration) uint32 { return uint32(d / time.Millisecond) }

// poll accepts connections and reads every packet that has arrived.
func (s *Server) poll(now time.Duration) {
	for {
		c, ok := s.listener.Accept()
		if !ok {
			break
		}
		s.pending = append(s.pending, pendingConn{conn: c, at: now})
	}
	kept := s.pending[:0]
	for _, pc := range s.pending {
		if s.handshake(pc.conn, now) {
			continue
		}
		kept = append(kept, pc)
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	serverTime := float64(s.World.Tick()) + s.Clock.Pending()
	for i := 0; i < len(s.conns); i++ {
		sc := s.conns[i]
		for {
			n, ok := sc.conn.Receive(s.rx)
			if !ok {
				break
			}
			sc.recv += uint64(n)
			s.stats.BytesReceived += uint64(n)
			sc.heard = now
			if s.handle(sc, s.rx[:n], now, serverTime) {
				i--
				break
			}
		}
	}
}

// handshake reads a pending connection's packets until a hello arrives; it
// reports whether the connection left the pending list.
func (s *Server) handshake(c transport.Conn, now time.Duration) bool {
	for {
		n, ok := c.Receive(s.rx)
		if !ok {
			return false
		}
		s.stats.BytesReceived += uint64(n)
		p := s.rx[:n]
		if t, err := netsync.PeekType(p); err != nil || t != netsync.MsgHello {
			s.stats.BadPackets++
			continue
		}
		if err := netsync.DecodeHello(p, &s.hello); err != nil {
			s.stats.BadPackets++
			continue
		}
		var reject netsync.Reject
		schema := s.Binding.Schema()
		switch {
		case s.hello.SchemaHash != schema.Hash():
			reject.Reason, reject.Detail = netsync.RejectSchema, schema.Mismatch(s.hello.ComponentHashes)
			if reject.Detail == "" {
				reject.Detail = "ghost types differ" // every component agrees
			}
		case int(s.hello.TickRate) != s.opts.TickRate:
			reject.Reason = netsync.RejectTickRate
			reject.Detail = fmt.Sprintf("the client's is %d, the server's %d", s.hello.TickRate, s.opts.TickRate)
		case len(s.conns) >= s.opts.MaxClients:
			reject.Reason = netsync.RejectFull
		}
		if reject.Reason != 0 {
			s.log.Info("ghostwire: connection refused", "reason", reject.Reason.String(), "detail", reject.Detail)
			s.refuse(c, &reject)
			return true
		}
		inputs, _ := netsync.NewInputBuffer(s.Binding.Schema(), s.opts.Inputs)
		s.nextConn++
		sc := &serverConn{id: s.nextConn, conn: c, inputs: inputs, heard: now,
			helloTime: s.hello.ClientTime, helloAt: now}
		e, typ, err := s.opts.OnConnect(s.World, sc.id)
		if err == nil {
			if _, err = s.Ghosts.Spawn(e, typ, sc.id); err != nil && s.World.Arche().Alive(e) {
				s.World.Arche().RemoveEntity(e) // no orphan player
			}
		}
		if err != nil {
			// The error may say things about the game the client need not
			// know: it stays in the server's log.
			s.log.Error("ghostwire: spawning the player failed; connection refused", "conn", sc.id, "err", err)
			s.refuse(c, &netsync.Reject{Reason: netsync.RejectSpawn})
			return true
		}
		s.conns = append(s.conns, sc)
		s.stats.Accepted++
		s.log.Debug("ghostwire: connection accepted", "conn", sc.id)
		s.welcome(sc, now)
		return true
	}
}

// refuse answers a hello with a reject and closes the connection.
func (s *Server) refuse(c transport.Conn, m *netsync.Reject) {
	s.stats.Refused++
	s.tx = netsync.AppendReject(s.tx, netsync.MsgReject, m)
	s.sendTo(c, nil, s.tx)
	_ = c.Close()
}

func (s *Server) welcome(sc *serverConn, now time.Duration) {
	s.tx = netsync.AppendWelcome(s.tx, &netsync.Welcome{
		Conn: sc.id, ServerTick: s.World.Tick(), TickRate: uint16(s.opts.TickRate),
		EchoTime: sc.helloTime, Hold: uint16(min(ms(now-sc.helloAt), 65535)),
	})
	s.sendTo(sc.conn, sc, s.tx)
}

// handle processes one packet of an open connection; it reports whether
// the connection was closed.
func (s *Server) handle(sc *serverConn, p []byte, now time.Duration, serverTime float64) bool {
	t, err := netsync.PeekType(p)
	if err != nil {
		s.stats.BadPackets++
		return false
	}
	switch t {
	case netsync.MsgHello: // our welcome was lost
		if netsync.DecodeHello(p, &s.hello) == nil {
			sc.helloTime, sc.helloAt = s.hello.ClientTime, now
			s.welcome(sc, now)
		}
	case netsync.MsgInputs:
		if err := netsync.DecodeInputs(p, s.Binding.Schema(), &s.batch); err != nil {
			s.stats.BadPackets++
			s.stats.InputsRejected++
			return false
		}
		// Echo the newest client time, held since its first arrival: an
		// older batch overtaken on the way, or a late duplicate, would
		// add its delay to the client's RTT sample.
		if !sc.echoed || int32(s.batch.ClientTime-sc.echo) > 0 {
			sc.echo, sc.echoAt, sc.echoed = s.batch.ClientTime, now, true
		}
		current := s.World.Tick()
		size := s.Binding.Schema().InputSize()
		for i, h := range s.batch.Heads {
			// The first copy of the newest tick says how early it came:
			// late ones too (a negative lead), so the client moves ahead.
			r := sc.inputs.Add(h, s.batch.Data[i*size:(i+1)*size], current)
			if (r == netsync.Accepted || r == netsync.Late) && i == len(s.batch.Heads)-1 {
				sc.lead.Observe(h.Tick, serverTime)
			}
		}
	case netsync.MsgDisconnect:
		s.drop(sc, netsync.ReasonClosed)
		return true
	default:
		s.stats.BadPackets++
	}
	return false
}

// expire drops connections silent for longer than the timeout, and closes
// accepted connections that sent no valid hello within it.
func (s *Server) expire(now time.Duration) {
	kept := s.pending[:0]
	for _, pc := range s.pending {
		if now-pc.at > s.opts.Timeout {
			s.tx = netsync.AppendReject(s.tx, netsync.MsgDisconnect, &netsync.Reject{Reason: netsync.ReasonTimeout})
			s.sendTo(pc.conn, nil, s.tx)
			_ = pc.conn.Close()
			continue
		}
		kept = append(kept, pc)
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	for i := 0; i < len(s.conns); i++ {
		if sc := s.conns[i]; now-sc.heard > s.opts.Timeout {
			s.tx = netsync.AppendReject(s.tx, netsync.MsgDisconnect, &netsync.Reject{Reason: netsync.ReasonTimeout})
			s.sendTo(sc.conn, sc, s.tx)
			s.drop(sc, netsync.ReasonTimeout)
			i--
		}
	}
}

func (s *Server) drop(sc *serverConn, reason netsync.RejectReason) {
	for i, c := range s.conns {
		if c == sc {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			break
		}
	}
	add(&s.closed, sc.inputs.Stats())
	s.stats.Dropped++
	s.log.Info("ghostwire: connection ended", "conn", sc.id, "reason", reason.String())
	s.owned = s.Ghosts.Owned(s.owned[:0], sc.id)
	for _, e := range s.owned {
		s.Ghosts.Despawn(e)
	}
	if s.opts.OnDisconnect != nil {
		s.opts.OnDisconnect(s.World, sc.id, s.owned)
	}
	_ = sc.conn.Close()
}

func (s *Server) sendTo(c transport.Conn, sc *serverConn, p []byte) {
	if err := c.Send(p); err == nil {
		s.stats.BytesSent += uint64(len(p))
		if sc != nil {
			sc.sent += uint64(len(p))
		}
	}
}

// applyInputs takes exactly one input per connection for the tick and
// writes it onto the ghosts the connection owns.
func (s *Server) applyInputs(w *gw.World) {
	a := w.Arche()
	tick := w.Tick()
	b := s.Binding
	for _, sc := range s.conns {
		h, rec, _ := sc.inputs.Take(tick)
		s.owned = s.Ghosts.Owned(s.owned[:0], sc.id)
		for _, e := range s.owned {
			if a.Has(e, b.Header) {
				*(*components.InputHeader)(a.Get(e, b.Header)) = h
			}
			if b.HasInput && a.Has(e, b.Input) {
				copy(unsafe.Slice((*byte)(a.Get(e, b.Input)), len(rec)), rec)
			}
		}
	}
}

// send writes one snapshot per connection every SendInterval ticks.
func (s *Server) send(w *gw.World) {
	tick := w.Tick()
	if uint32(tick)%uint32(s.opts.SendInterval) != 0 {
		return
	}
	now := s.src.Now()
	for _, sc := range s.conns {
		s.sw.Begin(tick)
		s.stats.GhostsLeftOut += uint64(s.Ghosts.WriteSnapshot(s.sw, sc.id))
		h := netsync.SnapshotHeader{Tick: tick, Complete: true, EchoTime: sc.echo,
			Hold: uint16(min(ms(now-sc.echoAt), 65535))}
		if confirmed, ok := sc.inputs.Confirmed(); ok {
			h.Confirmed, h.HasConfirmed = confirmed, true
		}
		if lead, ok := sc.lead.Lead(); ok {
			h.Lead = float32(lead)
		}
		s.sendTo(sc.conn, sc, s.sw.Finish(&h))
		s.stats.SnapshotsSent++
	}
}
