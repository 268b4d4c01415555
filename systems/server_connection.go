package systems

import (
	"fmt"
	"math"
	"time"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// poll accepts connections and reads every packet that has arrived.
// joinsPerTick bounds the connections welcomed in one server tick: each
// costs a view of every ghost and a first walk of them all (a
// millisecond or so with 10,000 ghosts), so a crowd that joins at once
// is welcomed over a few ticks rather than in one long one.
const joinsPerTick = 16

func (s *Server) poll(now time.Duration) {
	for {
		c, ok := s.listener.Accept()
		if !ok {
			break
		}
		if len(s.pending) >= s.opts.MaxPending {
			if old := s.pending[0]; old.link != nil {
				s.retire(old.link)
			} else {
				_ = old.raw.Close()
			}
			s.pending = append(s.pending[:0], s.pending[1:]...)
			s.stats.PendingEvicted++
		}
		s.pending = append(s.pending, pendingConn{raw: c, at: now})
	}
	kept := s.pending[:0]
	if tick := s.world.Tick(); !s.joinsAt || s.joinTick != tick {
		s.joinTick, s.joinsAt, s.joins = tick, true, 0
	}
	deferred := false
	for _, pc := range s.pending {
		if s.joins >= joinsPerTick {
			kept, deferred = append(kept, pc), true
			continue
		}
		accepted := s.stats.Accepted
		if l := pc.open(s.src, s.rx, s.linkOpts); l != nil && s.handshake(l, pc.raw, now) {
			s.joins += int(s.stats.Accepted - accepted)
			continue
		}
		kept = append(kept, pc)
	}
	if deferred {
		s.stats.JoinsDeferred++
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	s.pollConns(now)
}

// pollConns reads every packet of the open connections.
func (s *Server) pollConns(now time.Duration) {
	serverTime := float64(s.world.Tick()) + s.clock.Pending()
	for i := 0; i < len(s.conns); i++ {
		sc := s.conns[i]
		for {
			m, ok := sc.link.pc.Receive()
			if !ok {
				break
			}
			if t, err := protocol.PeekType(m.Data); err == nil && t == protocol.MsgGame {
				if sc.spectator { // a spectator's world is the recording's: nothing it says enters it
					sc.msgs.stats.Refused.Unknown++
					continue
				}
				if s.receiveMessage(sc, m.Channel, m.Data, now) {
					i--
					break
				}
				if s.closing { // a handler closed the server
					return
				}
				continue
			}
			if m.Channel != packet.Unreliable { // the reliable channels carry game messages only
				s.stats.BadPackets++
				continue
			}
			if s.handle(sc, m.Data, now, serverTime) {
				i--
				break
			}
		}
	}
}

// handshake reads a pending connection's messages until a hello arrives; it
// reports whether the connection left the pending list. The hello is the
// first packet of a connection, on the unreliable channel: the client
// repeats it until the welcome arrives. raw is the transport connection
// under c, which ServerOptions.Identity reads.
func (s *Server) handshake(c *link, raw transport.Conn, now time.Duration) bool {
	for {
		m, ok := c.pc.Receive()
		if !ok {
			return false
		}
		p := m.Data
		if m.Channel != packet.Unreliable {
			s.stats.BadPackets++
			continue
		}
		if t, err := protocol.PeekType(p); err != nil || t != protocol.MsgHello {
			s.stats.BadPackets++
			continue
		}
		if err := protocol.DecodeHello(p, &s.hello); err != nil {
			s.stats.BadPackets++
			continue
		}
		var reject protocol.Reject
		spectator := s.opts.Spectator != nil && s.opts.Spectator(raw)
		identity := ""
		if !spectator {
			identity = s.identify(raw)
		}
		schema := s.binding.Schema()
		switch {
		case s.hello.SchemaHash != schema.Hash():
			reject.Reason, reject.Detail = protocol.RejectSchema, schema.Mismatch(s.hello.ComponentHashes)
			if reject.Detail == "" {
				reject.Detail = "ghost types differ" // every component agrees
			}
		case int(s.hello.TickRate) != s.rate:
			reject.Reason = protocol.RejectTickRate
			reject.Detail = fmt.Sprintf("the client's is %d, the server's %d", s.hello.TickRate, s.rate)
		case !spectator && s.players(identity) >= s.opts.MaxClients:
			reject.Reason = protocol.RejectFull
		}
		if reject.Reason != 0 {
			s.log.Info("ghostwire: connection refused", "reason", reject.Reason.String(), "detail", reject.Detail)
			s.refuse(c, &reject)
			return true
		}
		inputs, _ := control.NewInputBuffer(s.binding.Schema(), s.opts.inputBuffer())
		var id components.ConnID
		if spectator {
			// From the top down: the players' IDs, and so the match, are
			// the same with spectators or without.
			id = components.ConnID(math.MaxUint32 - s.stats.Spectators - s.stats.SpectatorsRefused)
		} else {
			id = s.newConnID()
		}
		sc := &serverConn{id: id, identity: identity, link: c, inputs: inputs, heard: now, msgs: newPeerMessages(s.binding.Schema()),
			helloTime: s.hello.ClientTime, helloAt: now, viewAge: newViewMeter(max(s.opts.InputCapacity, 64)), spectator: spectator}
		if spectator {
			s.seat(sc, now)
			return true
		}
		if old := s.reclaim(identity); old == nil || !s.takeBack(sc, old) {
			if !s.spawnPlayer(sc) {
				s.refuse(c, &protocol.Reject{Reason: protocol.RejectSpawn})
				return true
			}
		}
		sc.view = s.ghosts.NewView(sc.id)
		if imp := s.opts.Importance; imp != nil {
			sc.view.Importance = func(e ecs.Entity) float32 { return imp(s.world, sc.id, e) }
		}
		if rel := s.opts.Relevant; rel != nil {
			sc.view.SetRelevant(func(e ecs.Entity) bool { return rel(s.world, sc.id, e) })
		}
		s.conns = append(s.conns, sc)
		s.stats.Accepted++
		s.log.Debug("ghostwire: connection accepted", "conn", sc.id)
		s.welcome(sc, now)
		return true
	}
}

// spawnPlayer makes new connection sc's player through Game.OnConnect,
// and its record of the inputs applied for the determinism check; it
// reports false, the error logged, when the game or the spawn failed.
func (s *Server) spawnPlayer(sc *serverConn) bool {
	e, typ, err := s.game.OnConnect(s.world, sc.id)
	if err == nil {
		if sc.player, err = s.ghosts.Spawn(e, codec.GhostTypeID(typ), sc.id); err != nil && s.world.Arche().Alive(e) {
			s.world.Arche().RemoveEntity(e) // no orphan player
		}
	}
	if err != nil {
		// The error may say things about the game the client need not
		// know: it stays in the server's log.
		s.log.Error("ghostwire: spawning the player failed; connection refused", "conn", sc.id, "err", err)
		return false
	}
	if s.opts.SyncTest > 0 {
		sc.applied = newAppliedInputs(2*(s.opts.SyncTest+1), s.binding.Schema().InputSize())
	}
	if r := s.opts.Recorder; r != nil {
		r.Connected(s.world.Tick(), sc.id, sc.player)
	}
	return true
}

// refuse answers a hello with a reject and closes the connection.
func (s *Server) refuse(c *link, m *protocol.Reject) {
	s.stats.Refused++
	s.tx = c.goodbye(s.tx, protocol.MsgReject, m)
	s.retire(c)
}

// retire closes a connection's packet layer and keeps its counters.
func (s *Server) retire(c *link) {
	s.wire.add(c.pc.Stats())
	_ = c.pc.Close()
}

// newConnID returns the next connection ID: never 0 and never the ID of a
// live connection or a held place, even once the 32-bit counter wraps.
func (s *Server) newConnID() components.ConnID {
	for {
		s.nextConn++
		if s.nextConn != 0 && !s.live(s.nextConn) {
			return s.nextConn
		}
	}
}

// live reports whether a connection with the ID is open or its place
// held: either owns ghosts under it.
func (s *Server) live(id components.ConnID) bool {
	for _, c := range s.conns {
		if c.id == id {
			return true
		}
	}
	for _, p := range s.held {
		if p.sc.id == id {
			return true
		}
	}
	return false
}

func (s *Server) welcome(sc *serverConn, now time.Duration) {
	s.tx = protocol.AppendWelcome(s.tx[:0], &protocol.Welcome{
		Conn: sc.id, Player: sc.player, ServerTick: s.world.Tick(), TickRate: uint16(s.rate),
		EchoTime: sc.helloTime, Hold: uint16(min(ms(now-sc.helloAt), 65535)),
	})
	// Sent now: its hold time is measured now. A lost welcome is asked
	// for again by the next hello.
	if _, err := sc.link.pc.SendUnreliable(s.tx); err == nil {
		_ = sc.link.pc.Flush()
	}
}

// expire drops connections silent for longer than the timeout, closes
// accepted connections that sent no valid hello within it, and gives up
// the places held past their grace.
func (s *Server) expire(now time.Duration) {
	s.expireHeld(now)
	kept := s.pending[:0]
	for _, pc := range s.pending {
		if now-pc.at > s.opts.Timeout {
			l := pc.say(s.src)
			s.tx = l.goodbye(s.tx, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectTimeout})
			s.retire(l)
			continue
		}
		kept = append(kept, pc)
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	for i := 0; i < len(s.conns); i++ {
		if sc := s.conns[i]; now-sc.heard > s.opts.Timeout {
			s.tx = sc.link.goodbye(s.tx, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectTimeout})
			s.drop(sc, protocol.RejectTimeout)
			s.stats.TimedOut++
			i--
		}
	}
}

// drop ends connection sc for reason, then holds its place for a
// reconnect or gives it up (see leave).
func (s *Server) drop(sc *serverConn, reason protocol.RejectReason) {
	s.end(sc, reason)
	if !sc.spectator { // a spectator leaves nothing behind
		s.leave(sc, reason)
	}
}

// end closes connection sc: it leaves the open connections, its packet
// layer and view close, their counters are kept. What it owns stays.
func (s *Server) end(sc *serverConn, reason protocol.RejectReason) {
	for i, c := range s.conns {
		if c == sc {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			break
		}
	}
	addView(&s.closedViews, sc.view.Stats())
	s.msgStats.add(&sc.msgs.stats)
	sc.view.Close()
	s.stats.Dropped++
	s.log.Info("ghostwire: connection ended", "conn", sc.id, "reason", reason.String())
	s.retire(sc.link)
}

// flush sends what each connection's packet layer holds: the messages of
// this update, the reliable ones due, the acks. A connection whose
// reliable channel is backlogged (its client stopped acknowledging or
// reading) is dropped instead, so it never holds more than the packet
// layer's caps.
func (s *Server) flush() {
	for i := 0; i < len(s.conns); i++ {
		sc := s.conns[i]
		if err := sc.link.pc.Backlogged(); err != nil {
			s.log.Info("ghostwire: connection backlogged", "conn", sc.id, "err", err)
			s.tx = sc.link.goodbye(s.tx, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectTimeout})
			s.drop(sc, protocol.RejectTimeout)
			s.stats.Backlogged++
			i--
			continue
		}
		_ = sc.link.pc.Flush() // a closed or failing link ends by timeout
	}
}
