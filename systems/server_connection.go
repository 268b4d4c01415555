package systems

import (
	"fmt"
	"time"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
)

// poll accepts connections and reads every packet that has arrived.
func (s *Server) poll(now time.Duration) {
	for {
		c, ok := s.listener.Accept()
		if !ok {
			break
		}
		if len(s.pending) >= s.opts.MaxPending {
			_ = s.pending[0].conn.Close()
			s.pending = append(s.pending[:0], s.pending[1:]...)
			s.stats.PendingEvicted++
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
	serverTime := float64(s.world.Tick()) + s.clock.Pending()
	for i := 0; i < len(s.conns); i++ {
		sc := s.conns[i]
		for {
			n, ok := sc.conn.Receive(s.rx)
			if !ok {
				break
			}
			sc.recv += uint64(n)
			s.stats.BytesReceived += uint64(n)
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
		if t, err := protocol.PeekType(p); err != nil || t != protocol.MsgHello {
			s.stats.BadPackets++
			continue
		}
		if err := protocol.DecodeHello(p, &s.hello); err != nil {
			s.stats.BadPackets++
			continue
		}
		var reject protocol.Reject
		schema := s.binding.Schema()
		switch {
		case s.hello.SchemaHash != schema.Hash():
			reject.Reason, reject.Detail = protocol.RejectSchema, schema.Mismatch(s.hello.ComponentHashes)
			if reject.Detail == "" {
				reject.Detail = "ghost types differ" // every component agrees
			}
		case int(s.hello.TickRate) != s.opts.TickRate:
			reject.Reason = protocol.RejectTickRate
			reject.Detail = fmt.Sprintf("the client's is %d, the server's %d", s.hello.TickRate, s.opts.TickRate)
		case len(s.conns) >= s.opts.MaxClients:
			reject.Reason = protocol.RejectFull
		}
		if reject.Reason != 0 {
			s.log.Info("ghostwire: connection refused", "reason", reject.Reason.String(), "detail", reject.Detail)
			s.refuse(c, &reject)
			return true
		}
		inputs, _ := control.NewInputBuffer(s.binding.Schema(), s.opts.inputBuffer())
		sc := &serverConn{id: s.newConnID(), conn: c, inputs: inputs, heard: now,
			helloTime: s.hello.ClientTime, helloAt: now}
		e, typ, err := s.opts.OnConnect(s.world, sc.id)
		if err == nil {
			if _, err = s.ghosts.Spawn(e, codec.GhostTypeID(typ), sc.id); err != nil && s.world.Arche().Alive(e) {
				s.world.Arche().RemoveEntity(e) // no orphan player
			}
		}
		if err != nil {
			// The error may say things about the game the client need not
			// know: it stays in the server's log.
			s.log.Error("ghostwire: spawning the player failed; connection refused", "conn", sc.id, "err", err)
			s.refuse(c, &protocol.Reject{Reason: protocol.RejectSpawn})
			return true
		}
		if s.opts.SyncTest > 0 {
			sc.applied = newAppliedInputs(2*(s.opts.SyncTest+1), s.binding.Schema().InputSize())
		}
		s.conns = append(s.conns, sc)
		s.stats.Accepted++
		s.log.Debug("ghostwire: connection accepted", "conn", sc.id)
		s.welcome(sc, now)
		return true
	}
}

// refuse answers a hello with a reject and closes the connection.
func (s *Server) refuse(c transport.Conn, m *protocol.Reject) {
	s.stats.Refused++
	s.tx = protocol.AppendReject(s.tx[:0], protocol.MsgReject, m)
	s.sendTo(c, nil, s.tx)
	_ = c.Close()
}

// newConnID returns the next connection ID: never 0 and never the ID of a
// live connection, even once the 32-bit counter wraps.
func (s *Server) newConnID() components.ConnID {
	for {
		s.nextConn++
		if s.nextConn != 0 && !s.live(s.nextConn) {
			return s.nextConn
		}
	}
}

// live reports whether a connection with the ID is open.
func (s *Server) live(id components.ConnID) bool {
	for _, c := range s.conns {
		if c.id == id {
			return true
		}
	}
	return false
}

func (s *Server) welcome(sc *serverConn, now time.Duration) {
	s.tx = protocol.AppendWelcome(s.tx[:0], &protocol.Welcome{
		Conn: sc.id, ServerTick: s.world.Tick(), TickRate: uint16(s.opts.TickRate),
		EchoTime: sc.helloTime, Hold: uint16(min(ms(now-sc.helloAt), 65535)),
	})
	s.sendTo(sc.conn, sc, s.tx)
}

// expire drops connections silent for longer than the timeout, and closes
// accepted connections that sent no valid hello within it.
func (s *Server) expire(now time.Duration) {
	kept := s.pending[:0]
	for _, pc := range s.pending {
		if now-pc.at > s.opts.Timeout {
			s.tx = protocol.AppendReject(s.tx[:0], protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectTimeout})
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
			s.tx = protocol.AppendReject(s.tx[:0], protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectTimeout})
			s.sendTo(sc.conn, sc, s.tx)
			s.drop(sc, protocol.RejectTimeout)
			s.stats.TimedOut++
			i--
		}
	}
}

func (s *Server) drop(sc *serverConn, reason protocol.RejectReason) {
	for i, c := range s.conns {
		if c == sc {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			break
		}
	}
	add(&s.closed, sc.inputs.Stats())
	s.stats.Dropped++
	s.log.Info("ghostwire: connection ended", "conn", sc.id, "reason", reason.String())
	s.owned = s.ghosts.Owned(s.owned[:0], sc.id)
	for _, e := range s.owned {
		s.ghosts.Despawn(e)
	}
	if s.opts.OnDisconnect != nil {
		s.opts.OnDisconnect(s.world, sc.id, s.owned)
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
