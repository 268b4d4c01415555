package systems

import (
	"errors"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// Envelope is what a handler learns of a message beside its value.
type Envelope struct {
	// From is the connection that sent the message, on the server; 0 (the
	// server) on a client.
	From components.ConnID
	// Tick is the tick the sender said the message refers to
	// (SendToServer, SendToClients).
	Tick gw.Tick
}

// Handle adds f to the handlers of message type T (declared with
// netsync.Message) on the endpoint whose world is w: f gets each message
// of the type that end accepts, exactly as the type's channel delivers it
// (docs/messages.md), with the world, the Envelope and the value, which
// is valid during the call only. Handlers of a type run in the order
// added. They run inside Update as messages arrive, before the ticks that
// are due, so f may change anything, the world's structure included;
// w.Tick() is the last tick run. A message of a type without a handler
// is counted (MessageStats.Unhandled) and dropped.
//
// Call it from a Game's system constructors (each runs once per world,
// on every end it serves) or once an endpoint is made. It errors when w
// is not a server's or a client's world, when T is not a message type of
// its schema, when T never travels to this end (its Direction), and on a
// nil f. It allocates a little; a message handed to f costs nothing.
func Handle[T any](w *gw.World, f func(w *gw.World, e Envelope, m *T)) error {
	mb := messengerOf(w)
	if mb == nil {
		return errors.New("systems: Handle needs the world of a Server or a Client")
	}
	id, m, err := mb.lookup(reflect.TypeFor[T](), mb.server != nil)
	if err != nil {
		return err
	}
	if f == nil {
		return fmt.Errorf("systems: a nil handler for message %s", m.Name())
	}
	mb.handlers[id] = append(mb.handlers[id], func(e Envelope, p unsafe.Pointer) { f(w, e, (*T)(p)) })
	return nil
}

// rateSlack is how much later than they were sent a server may see a
// client's messages arrive bunched (a resend after a loss delivers the
// messages held behind it at once): a server's bucket for a type holds
// Burst plus this many seconds of PerSecond, so an honest client that
// keeps to its own bucket is not refused for what the network did.
const rateSlack = time.Second

// refusalWindow is the time over which a server counts a connection's
// refused messages against ServerOptions.MaxRefusedMessages.
const refusalWindow = 10 * time.Second

// refuseOverRate is the refusal a receiver adds to those of the wire.
const refuseOverRate = protocol.RefuseOversized + 1

// maxUnordered is the largest message the packet layer's unordered
// channel carries (1,200 less its 9-byte header and 5-byte entry): a
// larger one of a ReliableUnordered type goes on the ordered channel.
const maxUnordered = transport.MaxDatagramSize - packet.HeaderSize - 5

// defaultMessageBytesPerSecond is the message budget of each direction
// when the options give none: 1 Mbit/s.
const defaultMessageBytesPerSecond = 128_000

// messenger sends and receives the game's messages for one endpoint; it
// is a resource of the endpoint's world, so that systems reach it from
// the world they are given.
type messenger struct {
	schema *codec.Schema
	server *Server // one of server and client is set
	client *Client
	ids    map[reflect.Type]codec.MessageID
	// out and in hold, per type, the value being sent (a copy, so the
	// caller's value stays on its stack) and the one being received;
	// each is allocated on its type's first use.
	out, in  []unsafe.Pointer
	handlers [][]func(Envelope, unsafe.Pointer)
	st       codec.Stream
	w        bitstream.Writer
	r        bitstream.Reader
	tx       []byte
}

// newMessenger makes the messenger of world w and adds it to the world's
// resources.
func newMessenger(w *gw.World, s *codec.Schema, server *Server, client *Client) *messenger {
	n := s.NumMessages()
	mb := &messenger{schema: s, server: server, client: client, ids: make(map[reflect.Type]codec.MessageID, n),
		out: make([]unsafe.Pointer, n), in: make([]unsafe.Pointer, n), handlers: make([][]func(Envelope, unsafe.Pointer), n)}
	for i := range n {
		m, _ := s.Message(codec.MessageID(i))
		mb.ids[m.Type()] = codec.MessageID(i)
	}
	ecs.AddResource(w.Arche(), mb)
	return mb
}

// messengerOf returns the messenger of an endpoint's world, or nil for
// another world.
func messengerOf(w *gw.World) *messenger {
	a := w.Arche()
	mb, _ := a.Resources().Get(ecs.ResourceID[messenger](a)).(*messenger)
	return mb
}

// lookup returns the ID and the rules of message type t, checking that it
// may travel to the server (toServer) or to a client.
func (mb *messenger) lookup(t reflect.Type, toServer bool) (codec.MessageID, *codec.MessageType, error) {
	id, ok := mb.ids[t]
	if !ok {
		return 0, nil, fmt.Errorf("systems: %v is not a message type of the schema (netsync.Message)", t)
	}
	m, _ := mb.schema.Message(id)
	if !m.Rules.Direction.Allows(toServer) {
		return 0, nil, fmt.Errorf("systems: message %s travels %v only", m.Name(), m.Rules.Direction)
	}
	return id, m, nil
}

// outgoing returns the messenger of w, which must be a server's (server)
// or a client's, and the slot T's value is copied into for sending.
func outgoing[T any](w *gw.World, server bool) (*messenger, codec.MessageID, *T, error) {
	mb := messengerOf(w)
	if mb == nil || (mb.server != nil) != server {
		if server {
			return nil, 0, nil, errors.New("systems: SendToClients needs the world of a Server")
		}
		return nil, 0, nil, errors.New("systems: SendToServer needs the world of a Client")
	}
	id, m, err := mb.lookup(reflect.TypeFor[T](), !server)
	if err != nil {
		return nil, 0, nil, err
	}
	if mb.out[id] == nil {
		mb.out[id] = reflect.New(m.Type()).UnsafePointer()
	}
	return mb, id, (*T)(mb.out[id]), nil
}

// encode writes the message packet of type id's outgoing value with its
// tick, and errors when its fields pass the type's MaxBytes.
func (mb *messenger) encode(id codec.MessageID, tick gw.Tick) ([]byte, *codec.MessageType, error) {
	m, _ := mb.schema.Message(id)
	h := protocol.GameHeader{ID: id, Tick: tick}
	var n int
	mb.tx, n = protocol.AppendGame(mb.tx[:0], mb.schema, &mb.st, &mb.w, &h, mb.out[id])
	if n > m.Rules.MaxBytes {
		return nil, nil, fmt.Errorf("systems: message %s of %d bytes; its MaxBytes is %d", m.Name(), n, m.Rules.MaxBytes)
	}
	return mb.tx, m, nil
}

// peerMessages is what one end keeps of its messages with one peer: per
// type, its rate bucket and sequences, and the counters.
type peerMessages struct {
	types []typeState
	stats MessageStats
}

// typeState is one message type's state with one peer.
type typeState struct {
	rate   bucket // a server's: the peer's messages; a client's: its own sends
	seqOut uint16 // the last sequence sent (unreliable sequenced)
	seqIn  uint16 // the newest sequence delivered, when seen
	seen   bool
}

func newPeerMessages(s *codec.Schema) peerMessages {
	return peerMessages{types: make([]typeState, s.NumMessages())}
}

// sendOn queues buf, a message of a type on channel ch, on pc.
func sendOn(pc *packet.Conn, ts *typeState, ch codec.Channel, buf []byte) error {
	switch ch {
	case codec.ChannelOrdered:
		return pc.SendReliable(buf)
	case codec.ChannelUnordered:
		if len(buf) <= maxUnordered {
			return pc.SendUnordered(buf)
		}
		return pc.SendReliable(buf) // one fragmented message: still once
	case codec.ChannelSequenced:
		ts.seqOut++
		buf[protocol.GameSeqOffset], buf[protocol.GameSeqOffset+1] = byte(ts.seqOut), byte(ts.seqOut>>8)
	}
	_, err := pc.SendUnreliable(buf)
	return err
}

// carries reports whether the packet layer's channel ch may carry a
// message of a type on channel c: an honest sender never uses another.
func carries(ch packet.Channel, c codec.Channel) bool {
	switch c {
	case codec.ChannelOrdered:
		return ch == packet.Reliable
	case codec.ChannelUnordered:
		return ch == packet.ReliableUnordered || ch == packet.Reliable
	}
	return ch == packet.Unreliable
}

// receive checks message p, which arrived from a peer on channel ch,
// and hands it to the handlers of its type, or counts why not: what the
// wire says, then (on a server, limit) the type's rate for the peer, then
// its fields. It returns the refusal, RefuseNone for a message accepted
// (or dropped as stale).
func (mb *messenger) receive(pm *peerMessages, ch packet.Channel, p []byte, from components.ConnID, now time.Duration) protocol.Refusal {
	var h protocol.GameHeader
	m, refusal := protocol.ReadGameHeader(p, mb.schema, mb.server != nil, &h)
	if refusal == protocol.RefuseNone && !carries(ch, m.Rules.Channel) {
		refusal = protocol.RefuseMalformed
	}
	if refusal == protocol.RefuseNone && mb.server != nil {
		r := &m.Rules
		if !pm.types[h.ID].rate.take(now, r.PerSecond, float64(r.Burst)+r.PerSecond*rateSlack.Seconds()) {
			refusal = refuseOverRate
		}
	}
	if refusal == protocol.RefuseNone {
		if mb.in[h.ID] == nil {
			mb.in[h.ID] = reflect.New(m.Type()).UnsafePointer()
		}
		if protocol.DecodeGameFields(p, mb.schema, &mb.st, &mb.r, &h, mb.in[h.ID]) != nil {
			refusal = protocol.RefuseMalformed
		}
	}
	switch refusal {
	case protocol.RefuseNone:
	case protocol.RefuseUnknown:
		pm.stats.Refused.Unknown++
		return refusal
	case protocol.RefuseOversized:
		pm.stats.Refused.Oversized++
		return refusal
	case refuseOverRate:
		pm.stats.Refused.OverRate++
		return refusal
	default:
		pm.stats.Refused.Malformed++
		return refusal
	}
	if m.Rules.Channel == codec.ChannelSequenced {
		ts := &pm.types[h.ID]
		if ts.seen && int16(h.Seq-ts.seqIn) <= 0 {
			pm.stats.Stale++
			return protocol.RefuseNone
		}
		ts.seqIn, ts.seen = h.Seq, true
	}
	pm.stats.Received++
	if mb.server != nil && mb.server.opts.Recorder != nil {
		mb.server.opts.Recorder.Received(mb.server.world.Tick(), from, p)
	}
	mb.dispatch(pm, &h, from)
	return protocol.RefuseNone
}

// dispatch hands the received value of the message h heads to the
// handlers of its type.
func (mb *messenger) dispatch(pm *peerMessages, h *protocol.GameHeader, from components.ConnID) {
	hs := mb.handlers[h.ID]
	if len(hs) == 0 {
		pm.stats.Unhandled++
	}
	e := Envelope{From: from, Tick: h.Tick}
	for _, f := range hs {
		f(e, mb.in[h.ID])
	}
}

// replay hands message p, which the server accepted from connection from
// when it was recorded (Recorder.Received), to its handlers again; it
// errors when p does not decode (a recording of another schema, or
// damaged).
func (mb *messenger) replay(pm *peerMessages, p []byte, from components.ConnID) error {
	var h protocol.GameHeader
	m, refusal := protocol.ReadGameHeader(p, mb.schema, true, &h)
	if refusal != protocol.RefuseNone {
		return fmt.Errorf("systems: a recorded message of %d bytes does not decode (refusal %d)", len(p), refusal)
	}
	if mb.in[h.ID] == nil {
		mb.in[h.ID] = reflect.New(m.Type()).UnsafePointer()
	}
	if err := protocol.DecodeGameFields(p, mb.schema, &mb.st, &mb.r, &h, mb.in[h.ID]); err != nil {
		return fmt.Errorf("systems: recorded message %s: %w", m.Name(), err)
	}
	pm.stats.Received++
	mb.dispatch(pm, &h, from)
	return nil
}

// messageLink returns the packet-layer options that carry a schema's
// messages: messages as large as its largest reliable type (64 KiB at
// least, the packet layer's default), and the reliable bytes per flush of
// a budget of bytesPerSecond (0: the default) at tickRate flushes a
// second.
func messageLink(s *codec.Schema, bytesPerSecond, tickRate int) (maxMessage, perFlush int) {
	maxMessage = 64 << 10
	for i := range s.NumMessages() {
		m, _ := s.Message(codec.MessageID(i))
		if m.Rules.Channel.Reliable() {
			maxMessage = max(maxMessage, protocol.GameHeaderBytes(m.Rules.Channel)+m.Rules.MaxBytes)
		}
	}
	if bytesPerSecond == 0 {
		bytesPerSecond = defaultMessageBytesPerSecond
	}
	return maxMessage, max(1, bytesPerSecond/tickRate)
}

// checkMessageBytes checks a MessageBytesPerSecond option.
func checkMessageBytes(v int) error {
	if v != 0 && (v < 1000 || v > 1_000_000_000) {
		return fmt.Errorf("systems: message budget %d bytes per second outside 1000..1000000000 (or 0: the default)", v)
	}
	return nil
}
