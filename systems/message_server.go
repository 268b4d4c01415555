package systems

import (
	"fmt"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// Recipients says which connections a server's message goes to: one
// ([ToConn]), every open one ([ToAll]) or those a function picks
// ([ToEach]). The zero value names connection 0, which is never open.
type Recipients struct {
	conn components.ConnID
	all  bool
	each func(conn components.ConnID) bool
}

// ToConn sends to connection conn only.
func ToConn(conn components.ConnID) Recipients { return Recipients{conn: conn} }

// ToAll sends to every open connection.
func ToAll() Recipients { return Recipients{all: true} }

// ToEach sends to every open connection for which f returns true (a
// team, everyone but the sender); nil means every one. f is called once
// per open connection, during the call to SendToClients only.
func ToEach(f func(conn components.ConnID) bool) Recipients { return Recipients{all: true, each: f} }

// SendToClients sends m, a value of message type T (declared with
// netsync.Message), from the server whose world is w to the connections
// to names, on T's channel, with tick: the tick the message refers to,
// which each client's handlers get in Envelope.Tick (w.Tick() for the
// tick being run). m is copied at once. Reliable messages go out after
// the snapshots of the next flush, within ServerOptions.MessageBytesPerSecond
// (docs/messages.md).
//
// A send during a replay of the server's determinism check
// (ServerOptions.SyncTest) is dropped and counted
// (MessageStats.Suppressed): the tick's first run sent it. It errors when
// w is not a server's world, when T is not a message type of the schema
// or travels to the server only, when m's fields pass T's MaxBytes, when
// ToConn names no open connection, and when a connection's packet layer
// refuses the message (its reliable queue is full: a client that stopped
// reading, which the server drops at its next flush); sending to several
// connections, it sends to the others and returns the first such error,
// naming the connection. It allocates nothing in steady state.
func SendToClients[T any](w *gw.World, to Recipients, tick gw.Tick, m *T) error {
	mb, id, out, err := outgoing[T](w, true)
	if err != nil {
		return err
	}
	*out = *m
	return mb.server.sendMessage(id, to, tick)
}

// sendMessage sends the outgoing value of message type id to the
// connections to names.
func (s *Server) sendMessage(id codec.MessageID, to Recipients, tick gw.Tick) error {
	if s.world.IsReplaying() {
		s.msgStats.Suppressed++
		return nil
	}
	buf, m, err := s.msgs.encode(id, tick)
	if err != nil {
		return err
	}
	ch := m.Rules.Channel
	if !to.all {
		sc := s.conn(to.conn)
		if sc == nil {
			return &connNotOpen{id: to.conn}
		}
		return sc.sendMessage(id, ch, buf)
	}
	var first error
	for _, sc := range s.conns {
		if to.each != nil && !to.each(sc.id) {
			continue
		}
		if err := sc.sendMessage(id, ch, buf); err != nil && first == nil {
			first = fmt.Errorf("systems: connection %d: %w", sc.id, err)
		}
	}
	return first
}

// sendMessage queues buf, a message of type id on channel ch, on the
// connection.
func (sc *serverConn) sendMessage(id codec.MessageID, ch codec.Channel, buf []byte) error {
	if err := sendOn(sc.link.pc, &sc.msgs.types[id], ch, buf); err != nil {
		return err
	}
	sc.msgs.stats.Sent++
	return nil
}

// receiveMessage takes a message from connection sc that arrived on
// channel ch; it reports whether the connection was dropped for it: a
// refusal beyond ServerOptions.MaxRefusedMessages within refusalWindow
// ends the connection with RejectMessages. Only a message accepted keeps
// the connection alive.
func (s *Server) receiveMessage(sc *serverConn, ch packet.Channel, p []byte, now time.Duration) bool {
	refusal := s.msgs.receive(&sc.msgs, ch, p, sc.id, now)
	if refusal == protocol.RefuseNone {
		sc.heard = now
		return false
	}
	limit := float64(s.opts.MaxRefusedMessages)
	if sc.refusals.take(now, limit/refusalWindow.Seconds(), limit) {
		return false
	}
	r := sc.msgs.stats.Refused
	detail := fmt.Sprintf("%d refused: %d oversized, %d malformed, %d unknown, %d over rate",
		r.Total(), r.Oversized, r.Malformed, r.Unknown, r.OverRate)
	s.log.Info("ghostwire: connection sent too many refused messages", "conn", sc.id, "detail", detail)
	s.tx = sc.link.goodbye(s.tx, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectMessages, Detail: detail})
	s.drop(sc, protocol.RejectMessages)
	s.stats.MessageDrops++
	return true
}
